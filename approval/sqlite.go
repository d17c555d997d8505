package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"modernc.org/sqlite" // the "sqlite" database/sql driver: pure Go, no cgo
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLiteStore is a [Store] on one SQLite database file.
//
// Every connection runs in WAL mode with synchronous=FULL, so a transaction
// is on disk (the WAL fsynced) before the call that made it returns, and
// every state change is one BEGIN IMMEDIATE transaction, so two changes to
// one approval never interleave. A SQLiteStore is safe for concurrent use,
// and several SQLiteStores — in one process or in several — may share a
// file: the database, not the process, decides which Claim wins. Within one
// SQLiteStore, changes queue in Go (bounded by each call's context); across
// stores and processes, a change waits up to five seconds for the database
// lock before it fails as busy.
//
// Its methods are the lifecycle it shares with [PostgresStore]: the same
// transitions, checks and errors, written once.
type SQLiteStore struct {
	sqlStore
}

var _ Store = (*SQLiteStore)(nil)

// sqliteDialect is SQLite through modernc.org/sqlite.
var sqliteDialect = &dialect{
	lockRows: "", // BEGIN IMMEDIATE holds the write lock already
	uniqueViolation: func(err error) bool {
		var e *sqlite.Error
		return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	},
}

// OpenSQLite opens (creating if needed) the approval database at path, a
// file-system path, and brings its schema up to date. It refuses an
// in-memory or temporary database (":memory:", "", any "file:" URI): an
// approval that does not survive the process is no approval. It refuses a
// database whose schema is newer than this build's [SchemaVersion]. An
// error answers [execution.ReasonOf] with [ReasonInvalid] for a refused
// path or options, and [ReasonUnavailable] for anything else that kept the
// database from opening.
func OpenSQLite(path string, opts *Options) (*SQLiteStore, error) {
	s, err := openSQLite(path, opts)
	return s, unavailable(err)
}

func openSQLite(path string, opts *Options) (*SQLiteStore, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	switch {
	case path == "":
		return nil, fmt.Errorf("%w: empty database path: approvals must be durable; give a file path", ErrInvalid)
	case path == ":memory:" || strings.HasPrefix(path, "file:"):
		return nil, fmt.Errorf("%w: database %q: in-memory databases and URIs are refused; approvals must be durable, give a file path", ErrInvalid, path)
	case strings.ContainsAny(path, "?#"):
		return nil, fmt.Errorf("%w: database path %q contains '?' or '#'; choose a path without them", ErrInvalid, path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("approval: database path %q: %w", path, err)
	}
	// Create the file owner-only before SQLite does (SQLite gives the WAL
	// and shared-memory files the database file's permissions): it holds
	// call arguments.
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("approval: create %s: %w", abs, err)
		}
	} else if !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("approval: create %s: %w", abs, err)
	}
	// The pragmas run on every new connection of the pool. busy_timeout
	// first (the driver orders it so) so that journal_mode waits for a
	// concurrent opener instead of failing. _txlock makes every
	// read-write transaction BEGIN IMMEDIATE: it takes the write lock up
	// front, so two processes cannot both read "approved" and both claim.
	dsn := abs + "?_pragma=busy_timeout(5000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(FULL)" +
		"&_pragma=foreign_keys(1)" +
		"&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("approval: open %s: %w", abs, err)
	}
	s := &SQLiteStore{sqlStore{db: db, opts: o, dialect: sqliteDialect, writing: make(chan struct{}, 1)}}
	ctx := context.Background()
	if err := s.checkDurable(ctx, abs); err != nil {
		db.Close()
		return nil, err
	}
	if err := migrate(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", abs, err)
	}
	return s, nil
}

// checkDurable confirms what the DSN asked for: an on-disk database in WAL
// mode with synchronous=FULL.
func (s *SQLiteStore) checkDurable(ctx context.Context, path string) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("approval: open %s: %w", path, err)
	}
	defer conn.Close()
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("approval: open %s: %w", path, err)
	}
	var sync int
	if err := conn.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync); err != nil {
		return fmt.Errorf("approval: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") || sync != 2 {
		return fmt.Errorf("approval: open %s: journal_mode=%s synchronous=%d, want wal and 2 (FULL); is the file on a file system that supports WAL?", path, mode, sync)
	}
	return nil
}
