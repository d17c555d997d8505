package approval

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agnara-go/agnara/execution"
)

// sqlStore is the one implementation of the approval lifecycle, on
// database/sql, behind both [SQLiteStore] and [PostgresStore]: every query is
// written once, in the SQL the two databases share ($n parameters, which
// the SQLite driver binds by number), and what differs is the dialect.
type sqlStore struct {
	db      *sql.DB
	opts    Options
	dialect *dialect
	// writing (capacity 1), when not nil, queues this store's own
	// transactions in Go, so that they do not poll SQLite's busy handler
	// against each other; other stores and processes on the file meet at
	// the database lock.
	writing chan struct{}
	closed  atomic.Bool
	// maxSignIns, when not 0, bounds the sign-ins in place of MaxSignIns
	// (set by this package's tests only).
	maxSignIns int
}

// dialect is what the lifecycle needs to know about a database.
type dialect struct {
	// lockRows ends a SELECT of the rows a transaction goes on to change,
	// so that concurrent transitions of one approval queue on its row:
	// " FOR UPDATE" on PostgreSQL; "" on SQLite, where BEGIN IMMEDIATE
	// already holds the database's write lock.
	lockRows string
	// uniqueViolation reports whether err is an insert refused by a
	// unique index: Prepare's insert that lost a race to another
	// transaction's insert of a live approval under the same key.
	uniqueViolation func(error) bool
}

// Close closes the database. It does not wait for calls in flight to
// finish beyond what database/sql does. Calls after Close return ErrClosed.
func (s *sqlStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	return s.db.Close()
}

// storageError marks a failure of the database itself, as opposed to a
// refused transition. A transaction that fails with one is rolled back.
type storageError struct {
	op  string
	err error
}

func (e *storageError) Error() string { return "approval: " + e.op + ": " + e.err.Error() }
func (e *storageError) Unwrap() error { return e.err }

// FailureReason returns [ReasonUnavailable]: the database failed, or the
// store is closed (see [execution.ReasonOf]).
func (e *storageError) FailureReason() execution.Reason { return ReasonUnavailable }

func (s *sqlStore) fail(op string, err error) error {
	if s.closed.Load() || errors.Is(err, sql.ErrConnDone) {
		err = ErrClosed
	}
	return &storageError{op: op, err: err}
}

// update runs fn in one BEGIN IMMEDIATE transaction. It commits when fn
// returns nil or a refusal (a sentinel such as ErrExpired: whatever fn
// recorded on the way — an observed expiry, a refused claim — is kept), and
// rolls back when fn returns a storage error.
func (s *sqlStore) update(ctx context.Context, op string, fn func(tx *sql.Tx, now time.Time) error) error {
	if s.closed.Load() {
		return fmt.Errorf("%s: %w", op, ErrClosed)
	}
	if s.writing != nil {
		select {
		case s.writing <- struct{}{}:
			defer func() { <-s.writing }()
		case <-ctx.Done():
			return s.fail(op, ctx.Err())
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	ferr := fn(tx, s.now())
	var se *storageError
	if errors.As(ferr, &se) {
		tx.Rollback() // the storage error is the one to report
		return ferr
	}
	if err := tx.Commit(); err != nil {
		return s.fail(op+": commit", err)
	}
	return ferr
}

func (s *sqlStore) now() time.Time { return s.opts.Clock().UTC() }

// queryer is what reads need: a *sql.DB or a *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

const approvalColumns = `id, idempotency_key, state, tool, binding_id, binding_revision,
	scope_id, scope_revision, effect, principal_id, principal_issuer, arguments,
	arguments_digest, summary, created_at, expires_at, decided_by, decided_at, note,
	claimed_at, receipt_effect, receipt_code, receipt_result, receipt_at,
	recon_by, recon_effect, recon_evidence, recon_at, description, server, credential`

type scanner interface{ Scan(dest ...any) error }

func scanApproval(row scanner) (Approval, error) {
	var (
		a                                                Approval
		args                                             []byte
		created, expires, decided, claimed, rAt, reconAt int64
		rEffect, reconEffect                             sql.NullString
		rCode, reconBy, reconEvidence                    string
		rResult                                          []byte
		in                                               = &a.Intent
	)
	err := row.Scan(&a.ID, &in.IdempotencyKey, &a.State, &in.Binding.Tool, &in.Binding.ID,
		&in.Binding.Revision, &in.Binding.ScopeID, &in.Binding.ScopeRevision, &in.Binding.Effect,
		&in.PrincipalID, &in.PrincipalIssuer, &args, &in.ArgumentsDigest, &in.Summary,
		&created, &expires, &a.DecidedBy, &decided, &a.Note, &claimed,
		&rEffect, &rCode, &rResult, &rAt, &reconBy, &reconEffect, &reconEvidence, &reconAt,
		&in.Description, &in.Server, &in.Credential)
	if err != nil {
		return Approval{}, err
	}
	in.Arguments = json.RawMessage(args)
	a.CreatedAt, a.ExpiresAt = fromNanos(created), fromNanos(expires)
	a.DecidedAt, a.ClaimedAt = fromNanos(decided), fromNanos(claimed)
	if rEffect.Valid {
		a.Receipt = &Receipt{Effect: EffectState(rEffect.String), Reason: execution.Reason(rCode), At: fromNanos(rAt)}
		if rResult != nil {
			a.Receipt.Result = json.RawMessage(rResult)
		}
	}
	if reconEffect.Valid {
		a.Reconciliation = &Reconciliation{By: reconBy, Effect: EffectState(reconEffect.String), Evidence: reconEvidence, At: fromNanos(reconAt)}
	}
	return a, nil
}

// load reads one approval; ErrNotFound when there is none.
func (s *sqlStore) load(ctx context.Context, q queryer, id string) (Approval, error) {
	return s.read(ctx, q, id, "")
}

// lock reads one approval inside tx, to change it: no other transaction
// changes it until tx ends. ErrNotFound when there is none.
func (s *sqlStore) lock(ctx context.Context, tx *sql.Tx, id string) (Approval, error) {
	return s.read(ctx, tx, id, s.dialect.lockRows)
}

func (s *sqlStore) read(ctx context.Context, q queryer, id, suffix string) (Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, "SELECT "+approvalColumns+" FROM approvals WHERE id = $1"+suffix, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, fmt.Errorf("approval %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return Approval{}, s.fail("read approval "+id, err)
	}
	return a, nil
}

// due reports whether a is pending or approved at or past its deadline.
func due(a Approval, now time.Time) bool {
	return canTransition(a.State, StateExpired) && !now.Before(a.ExpiresAt)
}

// expire records that a, found due at now, expired. a is updated in place.
func (s *sqlStore) expire(ctx context.Context, tx *sql.Tx, a *Approval, now time.Time) error {
	res, err := tx.ExecContext(ctx, "UPDATE approvals SET state = 'expired' WHERE id = $1 AND state = $2", a.ID, a.State)
	if err != nil {
		return s.fail("expire "+a.ID, err)
	}
	if err := oneRow(res); err != nil {
		return s.fail("expire "+a.ID, err)
	}
	if err := s.event(ctx, tx, a.ID, now, "expired", "", map[string]any{"from": a.State, "deadline": a.ExpiresAt}); err != nil {
		return err
	}
	a.State = StateExpired
	return nil
}

// refresh returns a, first recording its expiry if it is due. Reads that
// find nothing due take no write lock.
func (s *sqlStore) refresh(ctx context.Context, a Approval) (Approval, error) {
	if !due(a, s.now()) {
		return a, nil
	}
	err := s.update(ctx, "expire", func(tx *sql.Tx, now time.Time) error {
		cur, err := s.lock(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		if due(cur, now) {
			if err := s.expire(ctx, tx, &cur, now); err != nil {
				return err
			}
		}
		a = cur
		return nil
	})
	return a, err
}

// event appends one entry to id's audit trail.
func (s *sqlStore) event(ctx context.Context, tx *sql.Tx, id string, at time.Time, kind, actor string, detail map[string]any) error {
	d, err := json.Marshal(detail)
	if err != nil {
		return s.fail("event "+kind, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO events (approval_id, seq, at, kind, actor, detail)
		VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE approval_id = $1), $2, $3, $4, $5)`,
		id, nanos(at), kind, actor, string(d))
	if err != nil {
		return s.fail("event "+kind, err)
	}
	return nil
}

// Events returns the audit trail of approval id, oldest first, or
// ErrNotFound.
func (s *sqlStore) Events(ctx context.Context, id string) ([]Event, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("events: %w", ErrClosed)
	}
	if _, err := s.load(ctx, s.db, id); err != nil {
		return nil, err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT approval_id, seq, at, kind, actor, detail FROM events WHERE approval_id = $1 ORDER BY seq", id)
	if err != nil {
		return nil, s.fail("read events", err)
	}
	defer rows.Close()
	var evs []Event
	for rows.Next() {
		var (
			e      Event
			at     int64
			detail string
		)
		if err := rows.Scan(&e.ApprovalID, &e.Seq, &at, &e.Kind, &e.Actor, &detail); err != nil {
			return nil, s.fail("read events", err)
		}
		e.At, e.Detail = fromNanos(at), json.RawMessage(detail)
		evs = append(evs, e)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("read events", err)
	}
	return evs, nil
}

func oneRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%d rows changed, want 1", n)
	}
	return nil
}

// nanos stores t as UTC unix nanoseconds; the zero time is 0.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// newID returns "apv_" and 20 lowercase base32 characters (100 random bits).
func newID() string {
	var b [13]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return "apv_" + strings.ToLower(idEncoding.EncodeToString(b[:]))[:20]
}
