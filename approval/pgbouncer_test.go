package approval_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/jackc/pgx/v5"
)

// TestPostgresBehindPgBouncer shows which pgx query modes the store takes
// through PgBouncer's transaction pooling: those that keep no prepared
// statement across the pooler's transactions work, and the others are
// refused at open and migrate, naming the DSN setting, before they touch
// the database — while a direct connection keeps pgx's default. The
// shared suite runs every behaviour and race through PgBouncer with the
// documented setting (backend "pgbouncer" in store_test.go).
func TestPostgresBehindPgBouncer(t *testing.T) {
	enginetest.PgBouncer(t) // one PgBouncer for the subtests
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		setting string // appended to the DSN
		direct  bool   // connect to PostgreSQL itself
		refused string // the mode a refusal names; "": accepted
	}{
		{name: "pgx's default", refused: "cache_statement"},
		{name: "cache_statement", setting: "&default_query_exec_mode=cache_statement", refused: "cache_statement"},
		{name: "describe_exec", setting: "&default_query_exec_mode=describe_exec", refused: "describe_exec"},
		{name: "cache_describe (documented)", setting: "&default_query_exec_mode=cache_describe"},
		{name: "exec", setting: "&default_query_exec_mode=exec"},
		{name: "simple_protocol", setting: "&default_query_exec_mode=simple_protocol"},
		{name: "direct, pgx's default", direct: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pooled, direct := enginetest.PgBouncer(t)
			dsn := pooled + tc.setting
			if tc.direct {
				dsn = direct
			}
			merr := approval.MigratePostgres(ctx, dsn)
			if tc.refused != "" {
				oerr := openPostgres(dsn)
				for name, err := range map[string]error{"migrate": merr, "open": oerr} {
					if !errors.Is(err, approval.ErrInvalid) || execution.ReasonOf(err) != approval.ReasonInvalid ||
						!strings.Contains(err.Error(), "connection pooler") || !strings.Contains(err.Error(), "default_query_exec_mode="+tc.refused+" breaks") ||
						!strings.Contains(err.Error(), "add default_query_exec_mode=cache_describe") {
						t.Errorf("%s through PgBouncer = %v (reason %q); want ErrInvalid naming %s and default_query_exec_mode=cache_describe", name, err, execution.ReasonOf(err), tc.refused)
					}
				}
				// The refused migration created nothing.
				conn, err := pgx.Connect(ctx, direct)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close(ctx)
				var exists bool
				if err := conn.QueryRow(ctx, "SELECT to_regclass('approval_schema') IS NOT NULL").Scan(&exists); err != nil || exists {
					t.Fatalf("approval_schema exists = %v (%v) after a refused migration", exists, err)
				}
				return
			}
			if merr != nil {
				t.Fatal(merr)
			}
			s, err := approval.OpenPostgres(ctx, dsn, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			a, err := s.Prepare(ctx, testIntent(t, "k", `{"id":1}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Claim(ctx, a.ID, testBinding()); err != nil {
				t.Fatal(err)
			}
			_, err = s.Claim(ctx, a.ID, testBinding())
			wantErr(t, err, approval.ErrAlreadyClaimed)
			if _, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectCommitted}); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("hosts migrating at once through PgBouncer", func(t *testing.T) {
		t.Parallel()
		// MigratePostgres's lock is pg_advisory_xact_lock, held by the
		// migration's one transaction, so it serialises migrations through
		// a transaction pooler as it does on a direct connection.
		pooled, direct := enginetest.PgBouncer(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if err := approval.MigratePostgres(ctx, pooled+pooledMode); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		conn, err := pgx.Connect(ctx, direct)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, _ := conn.Query(ctx, "SELECT version FROM approval_schema ORDER BY version")
		versions, err := pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil || len(versions) != approval.SchemaVersion || versions[len(versions)-1] != approval.SchemaVersion {
			t.Fatalf("approval_schema versions %v (%v), want 1..%d once each", versions, err, approval.SchemaVersion)
		}
	})
}
