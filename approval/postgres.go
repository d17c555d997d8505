package approval

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// PostgresStore is a [Store] on a PostgreSQL database, for several hosts
// sharing their approvals.
//
// Every state change is one READ COMMITTED transaction that first locks the
// approval's row (SELECT ... FOR UPDATE): two changes to one approval queue
// on the row, in any number of processes, and the second sees what the
// first committed — so exactly one Claim wins and the others get
// ErrAlreadyClaimed, and a receipt is recorded once. Prepare's idempotency
// holds across processes through a partial unique index on the live
// approval of each key. A change returns once PostgreSQL has committed it;
// OpenPostgres refuses a connection on which commits are not made durable
// (fsync or synchronous_commit off).
//
// OpenPostgres never changes the schema: the host runs [MigratePostgres]
// first. A PostgresStore is safe for concurrent use; it holds a pool of
// connections (database/sql's defaults). When the server is unreachable,
// calls fail with the driver's error and change nothing — except that a
// commit whose answer was lost with the connection may have happened: a
// Claim that failed so may hold its claim, which then shows as claimed with
// no receipt and is reconciled like a dispatcher that died.
//
// Its methods are the lifecycle it shares with [SQLiteStore]: the same
// transitions, checks and errors, written once.
type PostgresStore struct {
	sqlStore
}

var _ Store = (*PostgresStore)(nil)

// postgresDialect is PostgreSQL through pgx and its database/sql driver.
var postgresDialect = &dialect{
	lockRows: " FOR UPDATE",
	uniqueViolation: func(err error) bool {
		var e *pgconn.PgError
		return errors.As(err, &e) && e.Code == "23505" // unique_violation
	},
}

// OpenPostgres connects to the approval database dsn names (a URL such as
// postgres://user@host:5432/db?sslmode=verify-full, or keyword=value pairs;
// see pgx.ParseConfig and libpq's PG* environment variables) and checks
// that its schema is this build's [SchemaVersion]. It does not migrate: a
// database without the schema, or with an older or newer one, is refused
// with what to do. A DSN without connect_timeout gets 10 seconds. Errors
// never quote the DSN's password.
//
// Behind a connection pooler in transaction pooling mode (PgBouncer's
// pool_mode = transaction), the DSN sets
// default_query_exec_mode=cache_describe (exec and simple_protocol work
// too): pgx's default prepares named statements, which such a pooler does
// not carry from one transaction to the next. The store keeps no other
// session state, so its guarantees hold through the pooler. A connection
// whose backend is not the one PostgreSQL named to it when it connected (a
// pooler's) is refused with ErrInvalid, naming the setting, unless the DSN
// sets one of those modes (see docs/scaling.md).
//
// ctx bounds the connection and the checks, not the store's life.
//
// An error answers [execution.ReasonOf] with [ReasonInvalid] for a refused
// DSN (a query mode a pooler breaks included) or options, and
// [ReasonUnavailable] for anything else that kept the store from opening
// (the server does not answer, the schema is missing or another version,
// commits are not durable).
func OpenPostgres(ctx context.Context, dsn string, opts *Options) (*PostgresStore, error) {
	s, err := openPostgres(ctx, dsn, opts)
	return s, unavailable(err)
}

func openPostgres(ctx context.Context, dsn string, opts *Options) (*PostgresStore, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	db, where, err := connectPostgres(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if err := checkPostgres(ctx, db, where); err != nil {
		db.Close()
		return nil, err
	}
	return &PostgresStore{sqlStore{db: db, opts: o, dialect: postgresDialect}}, nil
}

// connectPostgres opens a pool on dsn and checks that the server answers.
// where names the database for messages: host, port and database, never
// the user's password.
func connectPostgres(ctx context.Context, dsn string) (db *sql.DB, where string, err error) {
	redact := redactor(dsn)
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		// pgx redacts its message on a best-effort basis; redact removes
		// the passwords it missed. The original is not wrapped: it holds
		// the DSN.
		return nil, "", fmt.Errorf("%w: PostgreSQL DSN: %s", ErrInvalid, redact(err))
	}
	redact = redactor(dsn, cfg.Password)
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	where = fmt.Sprintf("postgres://%s:%d/%s", cfg.Host, cfg.Port, cfg.Database)
	db = stdlib.OpenDB(*cfg) // pgx's database/sql driver; database/sql pools
	pooled, err := behindPooler(ctx, db)
	if err != nil {
		db.Close()
		return nil, "", &redactedError{msg: fmt.Sprintf("approval: connect to %s: %s", where, redact(err)), err: err}
	}
	if pooled && !poolerSafe(cfg.DefaultQueryExecMode) {
		db.Close()
		return nil, "", fmt.Errorf("%w: %s is reached through a connection pooler such as PgBouncer, where pgx's default_query_exec_mode=%s breaks under transaction pooling (it leaves prepared statements on server connections the pooler shares): add default_query_exec_mode=cache_describe to the DSN (docs/scaling.md)", ErrInvalid, where, modeSetting(cfg.DefaultQueryExecMode))
	}
	return db, where, nil
}

// behindPooler connects and reports whether the connection reaches
// PostgreSQL through a connection pooler: PostgreSQL tells a client the
// process id of the backend serving it (BackendKeyData, for cancelling),
// and a pooler such as PgBouncer gives its clients keys of its own, as its
// clients share server connections. A pooler that forwards the server's
// key goes unnoticed (docs/scaling.md).
func behindPooler(ctx context.Context, db *sql.DB) (bool, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	var pooled bool
	err = conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("unexpected driver connection %T", dc)
		}
		// The simple protocol: no prepared statement, whatever the mode.
		var pid uint32
		if err := c.Conn().QueryRow(ctx, "SELECT pg_backend_pid()", pgx.QueryExecModeSimpleProtocol).Scan(&pid); err != nil {
			return err
		}
		pooled = pid != c.Conn().PgConn().PID()
		return nil
	})
	return pooled, err
}

// modeSetting is how a DSN spells pgx's query mode m.
func modeSetting(m pgx.QueryExecMode) string {
	return strings.ReplaceAll(m.String(), " ", "_")
}

// poolerSafe reports whether pgx's query mode works when consecutive
// transactions, or the round trips of one statement outside a
// transaction, may meet different server connections (PgBouncer's
// transaction pooling, which before PgBouncer 1.21 does not carry
// prepared statements across them): no named prepared statement
// (cache_statement) and no unnamed one described in one round trip and run
// in the next (describe_exec).
func poolerSafe(mode pgx.QueryExecMode) bool {
	switch mode {
	case pgx.QueryExecModeCacheDescribe, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol:
		return true
	}
	return false
}

// checkPostgres refuses a database whose schema is not this build's, or on
// which a commit is not durable when it returns.
func checkPostgres(ctx context.Context, db *sql.DB, where string) error {
	v, err := postgresVersion(ctx, db)
	if err != nil {
		return fmt.Errorf("approval: %s: read schema version: %w", where, err)
	}
	switch {
	case v < 0:
		return fmt.Errorf("approval: %s has no approval schema: the host creates it by running approval.MigratePostgres before OpenPostgres (agnara approvals never migrates)", where)
	case v < len(migrations):
		return fmt.Errorf("approval: %s has approval schema version %d, older than this build's %d: the host upgrades it by running approval.MigratePostgres with this build (agnara approvals never migrates)", where, v, len(migrations))
	case v > len(migrations):
		return fmt.Errorf("approval: %s has approval schema version %d, newer than this build understands (%d): use a newer agnara build", where, v, len(migrations))
	}
	for _, setting := range []string{"fsync", "synchronous_commit"} {
		var value string
		if err := db.QueryRowContext(ctx, "SELECT current_setting($1)", setting).Scan(&value); err != nil {
			return fmt.Errorf("approval: %s: read %s: %w", where, setting, err)
		}
		if value == "off" {
			return fmt.Errorf("approval: %s: %s is off, so a commit is not durable when it returns; approvals must be: turn it on for this connection", where, setting)
		}
	}
	return nil
}

// postgresVersion returns the schema version, or -1 when there is no
// version table.
func postgresVersion(ctx context.Context, q queryer) (int, error) {
	var exists bool
	if err := q.QueryRowContext(ctx, "SELECT to_regclass('approval_schema') IS NOT NULL").Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return -1, nil
	}
	var v int
	err := q.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM approval_schema").Scan(&v)
	return v, err
}

// migrateLock is the advisory lock MigratePostgres holds, so that hosts
// starting at once migrate one after the other.
const migrateLock int64 = 0x61676e617261_01 // "agnara", 1

// MigratePostgres brings the approval schema of the database dsn names up
// to this build's [SchemaVersion], in one transaction, or refuses a database
// whose schema is newer. The host runs it at start, before OpenPostgres;
// several hosts may run it at once (they take turns on an advisory lock,
// and the later ones find nothing to do). It creates the tables approvals,
// events and approval_schema in the connection's current schema
// (search_path). It may run through a transaction pooler such as
// PgBouncer with the DSN [OpenPostgres] takes there: its lock is
// pg_advisory_xact_lock, held by its one transaction. Errors never quote
// the DSN's password; they answer [execution.ReasonOf] as [OpenPostgres]'s
// do.
func MigratePostgres(ctx context.Context, dsn string) error {
	return unavailable(migratePostgres(ctx, dsn))
}

func migratePostgres(ctx context.Context, dsn string) error {
	db, where, err := connectPostgres(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("approval: migrate %s: %w", where, err)
	}
	defer tx.Rollback() // a no-op after Commit
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", migrateLock); err != nil {
		return fmt.Errorf("approval: migrate %s: lock: %w", where, err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS approval_schema (
		version    INTEGER     PRIMARY KEY,
		applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
	)`); err != nil {
		return fmt.Errorf("approval: migrate %s: version table: %w", where, err)
	}
	v, err := postgresVersion(ctx, tx)
	if err != nil {
		return fmt.Errorf("approval: migrate %s: read schema version: %w", where, err)
	}
	if v > len(migrations) {
		return fmt.Errorf("approval: %s has approval schema version %d, newer than this build understands (%d): use a newer agnara build", where, v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i].postgres); err != nil {
			return fmt.Errorf("approval: migrate %s to schema version %d: %w", where, i+1, err)
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO approval_schema (version) VALUES ($1)", i+1); err != nil {
			return fmt.Errorf("approval: migrate %s: record schema version %d: %w", where, i+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("approval: migrate %s: commit: %w", where, err)
	}
	return nil
}

// redactedError is a connection failure whose message has the DSN's
// password removed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

var (
	// kvPassword finds password=... in a keyword=value DSN.
	kvPassword = regexp.MustCompile(`password\s*=\s*(?:'((?:[^'\\]|\\.)*)'|(\S+))`)
)

// redactor returns a function that renders an error with every password
// dsn may hold replaced by xxxxx: the parsed one (known), the one in a URL's
// user information, and any password= setting, raw and as written.
func redactor(dsn string, known ...string) func(error) string {
	secrets := known
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pw, ok := strings.Cut(rest[:at], ":"); ok {
				secrets = append(secrets, pw)
				if u, err := url.PathUnescape(pw); err == nil {
					secrets = append(secrets, u)
				}
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(dsn, -1) {
		secrets = append(secrets, m[1], m[2])
	}
	return func(err error) string {
		msg := err.Error()
		for _, s := range secrets {
			if s != "" {
				msg = strings.ReplaceAll(msg, s, "xxxxx")
			}
		}
		return msg
	}
}
