package enginetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PostgresDSNEnv names the environment variable that points the tests at an
// existing PostgreSQL server instead of a throwaway one: a DSN whose user
// may CREATE DATABASE, e.g. postgres://postgres@127.0.0.1:5432/postgres.
const PostgresDSNEnv = "AGNARA_TEST_POSTGRES_DSN"

// Postgres returns the DSN of a fresh, empty database for this test,
// dropped when the test ends.
//
// With [PostgresDSNEnv] set, the database is created on that server.
// Otherwise it is created on a throwaway server that this test binary starts
// on first use (initdb in a temporary directory, PostgreSQL on a free
// 127.0.0.1 port) and shares between its tests: each call holds the server
// until its test ends, and the last one to end stops it and removes its
// directory. A test whose subtests each want a database should call
// Postgres itself first, so that the server outlives the subtests instead
// of being started again for each. The server runs as a child of the test
// binary that the kernel kills if the binary dies (a timeout, a kill), so it
// never outlives `go test`; a directory left by such a death is removed by
// the next run.
//
// As root, the server runs as the postgres user (PostgreSQL refuses root).
// Missing binaries skip the test, saying to run `make engines` (or fail
// it, under AGNARA_REQUIRE_PEERS=1). Safe for concurrent use by parallel
// tests.
func Postgres(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(PostgresDSNEnv)
	if admin == "" {
		admin = sharedPostgres(t)
	}
	return createDatabase(t, admin)
}

// pg is the throwaway server shared by the tests of this binary.
var pg struct {
	mu    sync.Mutex
	users int
	srv   *pgServer
}

type pgServer struct {
	dir  string // removed when the server stops
	port int
	proc *process
}

// adminDSN is the DSN of the server's postgres database.
func (s *pgServer) adminDSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// sharedPostgres holds the shared server for t, starting it if needed, and
// returns its admin DSN.
func sharedPostgres(t testing.TB) string {
	t.Helper()
	pg.mu.Lock()
	defer pg.mu.Unlock()
	if pg.srv == nil {
		srv, err := startPostgres(t)
		if err != nil {
			t.Fatal(err)
		}
		pg.srv = srv
	}
	pg.users++
	t.Cleanup(releasePostgres)
	return pg.srv.adminDSN()
}

func releasePostgres() {
	pg.mu.Lock()
	defer pg.mu.Unlock()
	pg.users--
	if pg.users > 0 || pg.srv == nil {
		return
	}
	pg.srv.stop()
	pg.srv = nil
}

// pidFile, in a server's directory, names the test binary that owns it.
const pidFile = "owner.pid"

// ownedDir removes the directories of prefix whose test binary is gone
// (removeOrphans) and makes a new one naming this binary as its owner
// (pidFile). Not t.TempDir: the directory outlives the test that starts
// the engine, and as root the postgres user must be able to reach it
// (os.TempDir is world-searchable). what names the engine in errors.
func ownedDir(what, prefix string) (string, error) {
	removeOrphans(prefix)
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", errorf("%s: %v", what, err)
	}
	if err := os.WriteFile(filepath.Join(dir, pidFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", errorf("%s: %v", what, err)
	}
	return dir, nil
}

func startPostgres(t testing.TB) (*pgServer, error) {
	t.Helper()
	initdb := lookPath(t, "initdb", "postgresql", "/usr/lib/postgresql/*/bin")
	postgres := filepath.Join(filepath.Dir(initdb), "postgres") // the same version
	dir, err := ownedDir("postgres", "agnara-postgres-")
	if err != nil {
		return nil, err
	}
	srv := &pgServer{dir: dir, port: FreePort(t)}
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
	data := filepath.Join(dir, "data")
	cmd := exec.Command(initdb, "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, errorf("postgres: initdb: %v\n%s", err, out)
	}
	// The postmaster itself, not pg_ctl: pg_ctl would detach it, and a
	// detached server outlives a test binary that dies.
	cmd = exec.Command(postgres, "-D", data, "-p", strconv.Itoa(srv.port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "max_connections=300")
	if srv.proc, err = spawn(cmd, cred); err != nil {
		return nil, err
	}
	if err := srv.waitReady(); err != nil {
		srv.stop()
		ok = true // stop removed the directory
		return nil, err
	}
	ok = true
	return srv, nil
}

// postgresCredential is who the server runs as: nil (this process's user)
// unless root, then the postgres user, who is given dir.
func postgresCredential(dir string) (*syscall.Credential, error) {
	if !isRoot() {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, errorf("postgres: running as root, PostgreSQL must run as the postgres user: %v (run `make engines`)", err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return nil, errorf("postgres: user postgres: %v", err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, errorf("postgres: %v", err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// waitReady waits until the server answers queries: accepting connections
// is not enough while it starts up.
func (s *pgServer) waitReady() error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.adminDSN())
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		switch {
		case err == nil:
			return nil
		case s.proc.exited():
			return errorf("postgres exited before accepting connections on 127.0.0.1:%d:\n%s", s.port, s.proc.output())
		case time.Now().After(deadline):
			return errorf("postgres did not accept connections on 127.0.0.1:%d within 30s (%v):\n%s", s.port, err, s.proc.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop shuts the server down fast (SIGINT: sessions are ended, the data is
// consistent), kills it after 10 s, and removes its directory.
func (s *pgServer) stop() {
	if !s.proc.exited() {
		s.proc.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-s.proc.done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-s.proc.cmd.Process.Pid, syscall.SIGKILL)
			<-s.proc.done
		}
	}
	os.RemoveAll(s.dir)
}

// removeOrphans removes the directories named prefix* of engines whose
// test binary died without removing them (its engine died with it).
func removeOrphans(prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), prefix+"*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, pidFile))
		if err != nil {
			continue // being created, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// createDatabase creates a uniquely named database on the server admin
// names, drops it when t ends, and returns its DSN.
func createDatabase(t testing.TB, admin string) string {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	name := "agnara_test_" + hex.EncodeToString(b[:])
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("enginetest: %s: %v", PostgresDSNEnv, err)
	}
	if err := adminExec(admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("enginetest: postgres: create database: %v", err)
	}
	t.Cleanup(func() {
		// FORCE: a connection the test leaked must not keep it.
		if err := adminExec(admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("enginetest: postgres: drop database %s: %v", name, err)
		}
	})
	return dsn
}

// adminExec runs one statement on the server admin names.
func adminExec(admin, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, stmt)
	return err
}

// withDatabase returns dsn (a URL or keyword=value DSN) naming database db
// instead of its own.
func withDatabase(dsn, db string) (string, error) {
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return "", errors.New("not a valid PostgreSQL DSN") // pgx's message may quote the password
	}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", errors.New("not a valid PostgreSQL URL")
		}
		u.Path = "/" + db
		return u.String(), nil
	}
	return dsn + " dbname=" + db, nil // the last setting wins
}
