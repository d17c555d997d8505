package approval_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/jackc/pgx/v5"
)

// pgExec runs statements on the database dsn names, beside the store.
func pgExec(t *testing.T, dsn string, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func openPostgres(dsn string) error {
	s, err := approval.OpenPostgres(context.Background(), dsn, nil)
	if err == nil {
		s.Close()
	}
	return err
}

func TestPostgresMigrations(t *testing.T) {
	enginetest.Postgres(t) // one server for the subtests
	ctx := context.Background()
	t.Run("open refuses a database without the schema, and says what to run", func(t *testing.T) {
		t.Parallel()
		err := openPostgres(enginetest.Postgres(t))
		if err == nil || !strings.Contains(err.Error(), "no approval schema") || !strings.Contains(err.Error(), "MigratePostgres") {
			t.Fatalf("open of an empty database: %v", err)
		}
	})
	t.Run("migrate, then open; migrating again changes nothing", func(t *testing.T) {
		t.Parallel()
		dsn := enginetest.Postgres(t)
		for range 2 {
			if err := approval.MigratePostgres(ctx, dsn); err != nil {
				t.Fatal(err)
			}
		}
		if err := openPostgres(dsn); err != nil {
			t.Fatal(err)
		}
		var versions []int
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		rows, _ := conn.Query(ctx, "SELECT version FROM approval_schema ORDER BY version")
		versions, err = pgx.CollectRows(rows, pgx.RowTo[int])
		if err != nil || len(versions) != approval.SchemaVersion || versions[len(versions)-1] != approval.SchemaVersion {
			t.Fatalf("approval_schema versions %v (%v), want 1..%d", versions, err, approval.SchemaVersion)
		}
	})
	t.Run("hosts migrating at once", func(t *testing.T) {
		t.Parallel()
		dsn := enginetest.Postgres(t)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if err := approval.MigratePostgres(ctx, dsn); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if err := openPostgres(dsn); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("open refuses an older schema", func(t *testing.T) {
		t.Parallel()
		dsn := postgresDB(t)
		pgExec(t, dsn, fmt.Sprintf("DELETE FROM approval_schema WHERE version = %d", approval.SchemaVersion))
		err := openPostgres(dsn)
		if err == nil || !strings.Contains(err.Error(), "older than this build's") || !strings.Contains(err.Error(), "MigratePostgres") {
			t.Fatalf("open of an older schema: %v", err)
		}
	})
	t.Run("open and migrate refuse a newer schema", func(t *testing.T) {
		t.Parallel()
		dsn := postgresDB(t)
		pgExec(t, dsn, "INSERT INTO approval_schema (version) VALUES (99)")
		for name, err := range map[string]error{"open": openPostgres(dsn), "migrate": approval.MigratePostgres(ctx, dsn)} {
			if err == nil || !strings.Contains(err.Error(), "version 99, newer than this build") {
				t.Errorf("%s of a newer schema: %v", name, err)
			}
		}
	})
	t.Run("open refuses commits that are not durable", func(t *testing.T) {
		t.Parallel()
		// pgx sends unknown URL parameters as session settings.
		err := openPostgres(postgresDB(t) + "&synchronous_commit=off")
		if err == nil || !strings.Contains(err.Error(), "synchronous_commit is off") {
			t.Fatalf("open with synchronous_commit=off: %v", err)
		}
	})
}

func TestPostgresErrorsHideThePassword(t *testing.T) {
	const secret = "s3cr3t-Pa55"
	free := enginetest.FreePort(t)
	real, _ := url.Parse(enginetest.Postgres(t))
	for _, tc := range []struct {
		name, dsn, want string
	}{
		{"not a DSN", "postgres://alice:" + secret + "@127.0.0.1:notaport/db", "PostgreSQL DSN"},
		{"bad keyword DSN", "host=127.0.0.1 password=" + secret + " port=x", "PostgreSQL DSN"},
		{"no server there", fmt.Sprintf("postgres://alice:%s@127.0.0.1:%d/db?connect_timeout=5", secret, free), fmt.Sprintf("127.0.0.1:%d", free)},
		{"no such database", fmt.Sprintf("postgres://postgres:%s@%s/nonexistent_db", secret, real.Host), "nonexistent_db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for name, err := range map[string]error{
				"open":    openPostgres(tc.dsn),
				"migrate": approval.MigratePostgres(context.Background(), tc.dsn),
			} {
				if err == nil {
					t.Fatalf("%s succeeded", name)
				}
				if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v", err), secret) {
					t.Errorf("%s error quotes the password: %v", name, err)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s error = %v; want it to say %q", name, err, tc.want)
				}
			}
		})
	}
	t.Run("a malformed DSN is ErrInvalid", func(t *testing.T) {
		if err := openPostgres("postgres://x:" + secret + "@[::1"); !errors.Is(err, approval.ErrInvalid) || strings.Contains(err.Error(), secret) {
			t.Fatalf("= %v", err)
		}
	})
}

// TestPostgresServerDown shows what a host sees when the server goes away
// under an open store: calls fail with a storage error and change nothing,
// and the store works again once the server is back (here: the database
// is reachable again after its connections were killed).
func TestPostgresServerDown(t *testing.T) {
	ctx := context.Background()
	dsn := postgresDB(t)
	s, err := approval.OpenPostgres(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a, err := s.Prepare(ctx, testIntent(t, "k", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(dsn)
	db := strings.TrimPrefix(u.Path, "/")
	// Refuse new connections to the database and end the store's.
	u.Path = "/postgres"
	pgExec(t, u.String(),
		"ALTER DATABASE "+db+" WITH ALLOW_CONNECTIONS false",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '"+db+"'")
	_, err = s.Approve(ctx, a.ID, approver, "")
	if err == nil {
		t.Fatal("approve succeeded with the database unreachable")
	}
	for _, refusal := range []error{approval.ErrNotPending, approval.ErrExpired, approval.ErrNotFound, approval.ErrClosed} {
		if errors.Is(err, refusal) {
			t.Fatalf("unreachable database reported as a refusal: %v", err)
		}
	}
	pgExec(t, u.String(), "ALTER DATABASE "+db+" WITH ALLOW_CONNECTIONS true")
	got := mustState(t, s, a.ID, approval.StatePending)
	if got.DecidedBy != "" {
		t.Fatalf("the failed approve changed the approval: %+v", got)
	}
	if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
		t.Fatalf("approve once the database is back: %v", err)
	}
}
