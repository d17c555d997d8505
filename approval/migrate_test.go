package approval_test

import (
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
)

// raw opens the file without the store, to look at or tamper with it.
func raw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenCreatesSchema(t *testing.T) {
	path := dbPath(t)
	s, err := approval.OpenSQLite(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db := raw(t, path)
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != approval.SchemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, approval.SchemaVersion)
	}
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal (persistent)", mode, err)
	}
	for _, table := range []string{"approvals", "events"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", table).Scan(&n); err != nil || n != 1 {
			t.Fatalf("table %s: %d, %v", table, n, err)
		}
	}
	// Reopening an up-to-date database changes nothing.
	open(t, path, nil)
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != approval.SchemaVersion {
		t.Fatalf("after reopen user_version = %d, %v", v, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := dbPath(t)
	s, err := approval.OpenSQLite(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := raw(t, path).Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s, err = approval.OpenSQLite(path, nil)
	if err == nil {
		s.Close()
		t.Fatal("opened a database with schema version 99")
	}
	if !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Fatalf("error does not say what is wrong: %v", err)
	}
}

func TestOpenRefusesVolatileDatabases(t *testing.T) {
	for _, path := range []string{"", ":memory:", "file::memory:?cache=shared", "file:approvals.db", "file:x?mode=memory", "approvals.db?mode=memory"} {
		s, err := approval.OpenSQLite(path, nil)
		if err == nil {
			s.Close()
			t.Errorf("OpenSQLite(%q) succeeded", path)
			continue
		}
		if !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("OpenSQLite(%q) = %v, want ErrInvalid", path, err)
		}
	}
}

func TestOpenRefusesBadOptions(t *testing.T) {
	_, err := approval.OpenSQLite(dbPath(t), &approval.Options{PendingTTL: -1})
	wantErr(t, err, approval.ErrInvalid)
}

func TestOpenCreatesInRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	open(t, "rel.db", nil)
	if _, err := os.Stat(filepath.Join(dir, "rel.db")); err != nil {
		t.Fatal(err)
	}
}

func TestOpenCreatesAPrivateFile(t *testing.T) {
	path := dbPath(t)
	open(t, path, nil)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Fatalf("database file mode %v, want 0600", perm)
	}
	_, err = approval.OpenSQLite(filepath.Join(t.TempDir(), "no-such-dir", "a.db"), nil)
	if err == nil || !strings.Contains(err.Error(), "no such file or directory") {
		t.Fatalf("missing directory: %v", err)
	}
}
