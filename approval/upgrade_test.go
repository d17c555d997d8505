package approval

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/policy"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// v1Approval is an approval as schema version 1 recorded it.
const v1Approval = `INSERT INTO approvals (id, idempotency_key, state, tool, binding_id, binding_revision, scope_id,
	scope_revision, effect, principal_id, principal_issuer, arguments, arguments_digest, summary, created_at, expires_at)
	VALUES ('apv_aaaaaaaaaaaaaaaaaaaa', 'k', 'pending', 'gw.t', 'b', 'sha256:r', 's', '1', 'write', 'alice', '', '{}', 'sha256:d', 'Title', 1, 9000000000000000000)`

// TestUpgradeFromVersion1: a database of schema version 1 that holds an
// approval is brought to version 2 (SQLite when it is opened, PostgreSQL by
// MigratePostgres); the approval reads back with no description or server,
// and the store keeps sign-ins.
func TestUpgradeFromVersion1(t *testing.T) {
	ctx := context.Background()
	check := func(t *testing.T, s *sqlStore) {
		t.Helper()
		a, err := s.Get(ctx, "apv_aaaaaaaaaaaaaaaaaaaa")
		if err != nil || a.Intent.Summary != "Title" || a.Intent.Description != "" || a.Intent.Server != "" || a.State != StatePending {
			t.Fatalf("the version 1 approval reads %+v (%v)", a.Intent, err)
		}
		in := SignIn{Approver: policy.NewPrincipal("bob", []string{DefaultApproverScope}), Expires: time.Now().Add(time.Hour)}
		if err := s.SaveSignIn(ctx, "k", in); err != nil {
			t.Fatal(err)
		}
		if got, err := s.LoadSignIn(ctx, "k"); err != nil || got.Approver.ID() != "bob" {
			t.Fatalf("a sign-in after the upgrade: %+v (%v)", got, err)
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "approvals.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{migrations[0].sqlite, v1Approval, "PRAGMA user_version = 1"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		s, err := OpenSQLite(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var v int
		if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
			t.Fatalf("user_version %d (%v), want %d", v, err, SchemaVersion)
		}
		check(t, &s.sqlStore)
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := enginetest.Postgres(t)
		cfg, err := pgx.ParseConfig(dsn)
		if err != nil {
			t.Fatal(err)
		}
		db := stdlib.OpenDB(*cfg)
		for _, q := range []string{"CREATE TABLE approval_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
			migrations[0].postgres, v1Approval, "INSERT INTO approval_schema (version) VALUES (1)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		if _, err := OpenPostgres(ctx, dsn, nil); err == nil {
			t.Fatal("opened a version 1 database without migrating")
		}
		if err := MigratePostgres(ctx, dsn); err != nil {
			t.Fatal(err)
		}
		s, err := OpenPostgres(ctx, dsn, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		check(t, &s.sqlStore)
	})
}
