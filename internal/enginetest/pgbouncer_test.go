package enginetest

import (
	"context"
	"net/url"
	"os"
	"testing"
)

func TestPgBouncer(t *testing.T) {
	if os.Getenv(PostgresDSNEnv) != "" {
		t.Fatalf("this test checks the throwaway server; unset %s", PostgresDSNEnv)
	}
	ctx := context.Background()
	var b *bouncer
	t.Run("one database, pooled and direct", func(t *testing.T) {
		pooled, direct := PgBouncer(t)
		other, _ := PgBouncer(t)
		b = bouncers.all[pg.srv.adminDSN()]
		up, ud, uo := mustURL(t, pooled), mustURL(t, direct), mustURL(t, other)
		if up.Path != ud.Path || up.Host == ud.Host || up.Hostname() != "127.0.0.1" || uo.Host != up.Host || uo.Path == up.Path {
			t.Fatalf("pooled %s, direct %s, other %s: want one 127.0.0.1 PgBouncer in front of two databases", pooled, direct, other)
		}
		var db string
		if err := connect(t, pooled+"&default_query_exec_mode=simple_protocol").QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil || "/"+db != ud.Path {
			t.Fatalf("current_database through PgBouncer = %q (%v), want %s", db, err, ud.Path)
		}
	})
	if b == nil {
		t.Fatal("no PgBouncer was started")
	}
	select {
	case <-b.proc.done:
	default:
		t.Fatal("PgBouncer still runs after its last user ended")
	}
	if _, err := os.Stat(b.dir); !os.IsNotExist(err) {
		t.Fatalf("PgBouncer directory %s: %v; want it removed", b.dir, err)
	}
	if len(bouncers.all) != 0 || pg.srv != nil {
		t.Fatalf("shared state after the last user: %v, server %v", bouncers.all, pg.srv)
	}

	t.Run("transaction pooling", func(t *testing.T) {
		// In transaction mode a client holds a server connection only
		// for a transaction: once a's statement ends, its server serves
		// b's transaction while a stays connected. In session mode b
		// would need a second server connection.
		pooled, _ := PgBouncer(t)
		a := connect(t, pooled+"&default_query_exec_mode=simple_protocol")
		c := connect(t, pooled+"&default_query_exec_mode=simple_protocol")
		var pa, pc int
		if err := a.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pa); err != nil {
			t.Fatal(err)
		}
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		if err := tx.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pc); err != nil {
			t.Fatal(err)
		}
		if pa != pc {
			t.Fatalf("backend %d served the first client and %d the second; want one server connection shared (pool_mode = transaction)", pa, pc)
		}
		if uint32(pa) == a.PgConn().PID() {
			t.Fatalf("the client's backend key names backend %d: want PgBouncer's own", pa)
		}
	})
}

func mustURL(t *testing.T, dsn string) *url.URL {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
