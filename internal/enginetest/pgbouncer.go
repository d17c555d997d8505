package enginetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PgBouncer returns two DSNs of one fresh, empty database for this test,
// dropped when the test ends: pooled reaches it through PgBouncer in
// transaction pooling mode, direct reaches PostgreSQL itself.
//
// The database is created as [Postgres] creates one (on the server
// [PostgresDSNEnv] names, or on the shared throwaway server). PgBouncer
// (Debian's pgbouncer) runs in front of that server on a free 127.0.0.1
// port, from its own configuration in a temporary directory: every
// database name is passed through, pool_mode = transaction, no Unix
// socket, clients trusted as the server's user. One PgBouncer process is
// shared by the tests of this binary that name the same server, held like
// the server until the last of them ends; it dies with the test binary.
//
// The pooled DSN sets no default_query_exec_mode: pgx's default (named
// prepared statements) is what breaks under transaction pooling, and the
// caller chooses. As root, PgBouncer runs as the postgres user (it refuses
// root). A missing pgbouncer skips the test, saying to run `make engines`
// (or fails it, under AGNARA_REQUIRE_PEERS=1). Safe for concurrent use by
// parallel tests.
func PgBouncer(t testing.TB) (pooled, direct string) {
	t.Helper()
	bin := lookPath(t, "pgbouncer", "pgbouncer", "/usr/sbin")
	admin := os.Getenv(PostgresDSNEnv)
	if admin == "" {
		admin = sharedPostgres(t)
	}
	b := sharedBouncer(t, bin, admin)
	direct = createDatabase(t, admin)
	cfg, err := pgx.ParseConfig(direct)
	if err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(cfg.User),
		Host:     "127.0.0.1:" + strconv.Itoa(b.port),
		Path:     "/" + cfg.Database,
		RawQuery: "sslmode=disable",
	}
	return u.String(), direct
}

// bouncers are the PgBouncer processes of this binary, by the admin DSN of
// the server each fronts.
var bouncers struct {
	mu  sync.Mutex
	all map[string]*bouncer
}

type bouncer struct {
	users int
	dir   string // removed when it stops
	port  int
	proc  *process
}

// sharedBouncer holds the PgBouncer in front of admin's server for t,
// starting it if needed.
func sharedBouncer(t testing.TB, bin, admin string) *bouncer {
	t.Helper()
	bouncers.mu.Lock()
	defer bouncers.mu.Unlock()
	b := bouncers.all[admin]
	if b == nil {
		var err error
		if b, err = startBouncer(t, bin, admin); err != nil {
			t.Fatal(err)
		}
		if bouncers.all == nil {
			bouncers.all = map[string]*bouncer{}
		}
		bouncers.all[admin] = b
	}
	b.users++
	t.Cleanup(func() {
		bouncers.mu.Lock()
		defer bouncers.mu.Unlock()
		if b.users--; b.users > 0 {
			return
		}
		delete(bouncers.all, admin)
		b.proc.stop()
		os.RemoveAll(b.dir)
	})
	return b
}

// bouncerConfig is the pgbouncer.ini of a PgBouncer in front of the server
// at host:port. Pools are small and clients many: tests open many stores,
// and a client waits for a server connection rather than failing.
const bouncerConfig = `[databases]
* = host=%s port=%d

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 10
min_pool_size = 0
server_reset_query =
logfile =
pidfile =
log_connections = 0
log_disconnections = 0
`

func startBouncer(t testing.TB, bin, admin string) (*bouncer, error) {
	t.Helper()
	cfg, err := pgx.ParseConfig(admin)
	if err != nil {
		return nil, errorf("%s: not a valid PostgreSQL DSN", PostgresDSNEnv)
	}
	if strings.ContainsAny(cfg.User+cfg.Password, "\"\\\n") {
		return nil, errorf("pgbouncer: the server's user and password must not hold a double quote, a backslash or a newline")
	}
	dir, err := ownedDir("pgbouncer", "agnara-pgbouncer-")
	if err != nil {
		return nil, err
	}
	b := &bouncer{dir: dir, port: FreePort(t)}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	cred, err := postgresCredential(dir)
	if err != nil {
		return nil, err
	}
	// With auth_type = trust the client's password is not checked; the
	// one given here is what PgBouncer logs in to the server with.
	users := filepath.Join(dir, "userlist.txt")
	if err := os.WriteFile(users, fmt.Appendf(nil, "%q %q\n", cfg.User, cfg.Password), 0o644); err != nil {
		return nil, errorf("pgbouncer: %v", err)
	}
	ini := filepath.Join(dir, "pgbouncer.ini")
	if err := os.WriteFile(ini, fmt.Appendf(nil, bouncerConfig, cfg.Host, cfg.Port, b.port, users), 0o644); err != nil {
		return nil, errorf("pgbouncer: %v", err)
	}
	if b.proc, err = spawn(exec.Command(bin, ini), cred); err != nil {
		return nil, err
	}
	if err := b.waitReady(cfg.User); err != nil {
		b.proc.stop()
		return nil, err
	}
	ok = true
	return b, nil
}

// waitReady waits until a query through PgBouncer reaches the server's
// postgres database.
func (b *bouncer) waitReady(user string) error {
	dsn := (&url.URL{Scheme: "postgres", User: url.User(user), Host: "127.0.0.1:" + strconv.Itoa(b.port),
		Path: "/postgres", RawQuery: "sslmode=disable&default_query_exec_mode=simple_protocol"}).String()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		switch {
		case err == nil:
			return nil
		case b.proc.exited():
			return errorf("pgbouncer exited before serving 127.0.0.1:%d:\n%s", b.port, b.proc.output())
		case time.Now().After(deadline):
			return errorf("pgbouncer did not serve 127.0.0.1:%d within 30s (%v):\n%s", b.port, err, b.proc.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
