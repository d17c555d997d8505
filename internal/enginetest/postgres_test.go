package enginetest

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestPostgres(t *testing.T) {
	if os.Getenv(PostgresDSNEnv) != "" {
		t.Fatalf("this test checks the throwaway server; unset %s", PostgresDSNEnv)
	}
	var dsns []string
	var srv *pgServer
	t.Run("fresh databases on one shared server", func(t *testing.T) {
		a, b := Postgres(t), Postgres(t)
		dsns = append(dsns, a, b)
		srv = pg.srv
		ua, _ := url.Parse(a)
		ub, _ := url.Parse(b)
		if ua.Host != ub.Host || ua.Path == ub.Path || ua.Hostname() != "127.0.0.1" {
			t.Fatalf("DSNs %s and %s: want one 127.0.0.1 server, two databases", a, b)
		}
		ctx := context.Background()
		ca, cb := connect(t, a), connect(t, b)
		if _, err := ca.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 0 {
			t.Fatalf("second database has %d tables (%v); want it empty", n, err)
		}
		if err := ca.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Scan(&n); err != nil || n != 1 {
			t.Fatalf("first database has %d tables (%v); want 1", n, err)
		}
	})
	if srv == nil {
		t.Fatal("no server was started")
	}
	// The last user ended: the server is stopped and its directory gone.
	select {
	case <-srv.proc.done:
	default:
		t.Fatal("the server still runs after its last user ended")
	}
	if _, err := os.Stat(srv.dir); !os.IsNotExist(err) {
		t.Fatalf("server directory %s: %v; want it removed", srv.dir, err)
	}
	if pg.srv != nil || pg.users != 0 {
		t.Fatalf("shared state after the last user: %+v users %d", pg.srv, pg.users)
	}

	t.Run("databases are dropped when their test ends", func(t *testing.T) {
		held := Postgres(t) // holds a server for the inner test and the check
		var inner string
		t.Run("inner", func(t *testing.T) { inner = Postgres(t) })
		u, _ := url.Parse(inner)
		var n int
		conn := connect(t, held)
		if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", u.Path[1:]).Scan(&n); err != nil || n != 0 {
			t.Fatalf("database %s: %d rows (%v) after its test ended; want it dropped", u.Path, n, err)
		}
		if u.Host == "" || dsns[0] == inner {
			t.Fatalf("DSN %s", inner)
		}
	})
}

func TestPostgresOnAGivenServer(t *testing.T) {
	// A server given by DSN: here the throwaway one, named through the
	// environment as an operator would.
	host := Postgres(t)
	u, _ := url.Parse(host)
	u.Path = "/postgres"
	t.Setenv(PostgresDSNEnv, u.String())
	dsn := Postgres(t)
	got, _ := url.Parse(dsn)
	if got.Host != u.Host || got.Path == "/postgres" || got.Path == "" {
		t.Fatalf("DSN %s: want a new database on %s", dsn, u.Host)
	}
	conn := connect(t, dsn)
	var db string
	if err := conn.QueryRow(context.Background(), "SELECT current_database()").Scan(&db); err != nil || "/"+db != got.Path {
		t.Fatalf("current_database = %q (%v), want %s", db, err, got.Path)
	}
}
