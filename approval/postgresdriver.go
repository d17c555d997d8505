package approval

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
)

// The lifecycle runs on database/sql, so PostgreSQL needs a database/sql
// driver. pgx has one (package stdlib), but it imports pgxpool and with it
// a module this module does not yet require; this is the part of it the
// lifecycle uses: one pgx.Conn per pooled connection, queries with
// arguments, transactions. database/sql does the pooling. See ADR 0012.

// openPostgresDB returns a database/sql pool of pgx connections made with
// cfg.
func openPostgresDB(cfg *pgx.ConnConfig) *sql.DB {
	return sql.OpenDB(pgConnector{cfg: cfg})
}

type pgConnector struct{ cfg *pgx.ConnConfig }

func (c pgConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, c.cfg.Copy())
	if err != nil {
		return nil, err
	}
	return &pgConn{conn: conn}, nil
}

func (c pgConnector) Driver() driver.Driver { return pgDriver{} }

// pgDriver exists because driver.Connector must name one; connections are
// made by the connector only.
type pgDriver struct{}

func (pgDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("approval: the PostgreSQL driver opens connections through OpenPostgres only")
}

// pgConn is one connection. database/sql uses it from one goroutine at a
// time.
type pgConn struct{ conn *pgx.Conn }

var (
	_ driver.ConnBeginTx     = (*pgConn)(nil)
	_ driver.ExecerContext   = (*pgConn)(nil)
	_ driver.QueryerContext  = (*pgConn)(nil)
	_ driver.Pinger          = (*pgConn)(nil)
	_ driver.SessionResetter = (*pgConn)(nil)
	_ driver.Validator       = (*pgConn)(nil)
)

// Prepare is not used: ExecContext and QueryContext take the queries (pgx
// prepares and caches them itself).
func (c *pgConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("approval: the PostgreSQL driver does not prepare statements for database/sql")
}

func (c *pgConn) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return c.conn.Close(ctx)
}

func (c *pgConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *pgConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) || opts.ReadOnly {
		return nil, errors.New("approval: the PostgreSQL driver runs default transactions only")
	}
	tx, err := c.conn.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return pgTx{tx: tx}, nil
}

func (c *pgConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	tag, err := c.conn.Exec(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *pgConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := c.conn.Query(ctx, query, values(args)...)
	if err != nil {
		return nil, err
	}
	return &pgRows{rows: rows}, nil
}

func (c *pgConn) Ping(ctx context.Context) error { return c.conn.Ping(ctx) }

// ResetSession and IsValid drop a connection pgx found broken, so that
// database/sql does not hand it out again.
func (c *pgConn) ResetSession(context.Context) error {
	if c.conn.IsClosed() {
		return driver.ErrBadConn
	}
	return nil
}

func (c *pgConn) IsValid() bool { return !c.conn.IsClosed() }

func values(args []driver.NamedValue) []any {
	vs := make([]any, len(args))
	for i, a := range args {
		vs[i] = a.Value
	}
	return vs
}

type pgTx struct{ tx pgx.Tx }

// Commit and Rollback finish even when the context of the transaction's
// statements has ended: database/sql gives them none.
func (t pgTx) Commit() error   { return t.tx.Commit(context.Background()) }
func (t pgTx) Rollback() error { return t.tx.Rollback(context.Background()) }

type pgRows struct {
	rows pgx.Rows
	cols []string
}

func (r *pgRows) Columns() []string {
	if r.cols == nil {
		for _, f := range r.rows.FieldDescriptions() {
			r.cols = append(r.cols, f.Name)
		}
	}
	return r.cols
}

func (r *pgRows) Close() error {
	r.rows.Close()
	return r.rows.Err()
}

// Next converts a row to the values database/sql scans from. The schema
// has text, bytea, bigint, integer and boolean columns.
func (r *pgRows) Next(dest []driver.Value) error {
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	vs, err := r.rows.Values()
	if err != nil {
		return err
	}
	for i, v := range vs {
		switch v := v.(type) {
		case nil, string, []byte, int64, bool, float64, time.Time:
			dest[i] = v
		case int32:
			dest[i] = int64(v)
		case int16:
			dest[i] = int64(v)
		default:
			return fmt.Errorf("approval: column %s: unexpected PostgreSQL value of type %T", r.Columns()[i], v)
		}
	}
	return nil
}
