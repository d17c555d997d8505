package approval

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// checkIntent validates in and returns the copy the store records.
func checkIntent(in Intent) (Intent, error) {
	b := in.Binding
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"Binding.Tool", b.Tool}, {"Binding.ID", b.ID}, {"Binding.Revision", b.Revision},
		{"Binding.ScopeID", b.ScopeID}, {"Binding.ScopeRevision", b.ScopeRevision},
		{"PrincipalID", in.PrincipalID}, {"IdempotencyKey", in.IdempotencyKey},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return Intent{}, fmt.Errorf("%w: intent has no %s", ErrInvalid, strings.Join(missing, ", "))
	}
	if err := CheckIdentity(in.PrincipalID, in.PrincipalIssuer); err != nil {
		return Intent{}, fmt.Errorf("requester: %w", err)
	}
	if !b.Effect.valid() {
		return Intent{}, fmt.Errorf("%w: intent effect %q: want %q or %q", ErrInvalid, b.Effect, EffectWrite, EffectDestructive)
	}
	if err := checkText("description", in.Description, MaxDescription); err != nil {
		return Intent{}, err
	}
	if err := checkText("server", in.Server, 128); err != nil {
		return Intent{}, err
	}
	if err := checkText("credential", in.Credential, 64); err != nil {
		return Intent{}, err
	}
	if len(in.Arguments) > MaxArguments {
		return Intent{}, fmt.Errorf("%w: arguments are %d bytes; the limit is %d", ErrInvalid, len(in.Arguments), MaxArguments)
	}
	args := execution.NormalizeArguments(in.Arguments)
	digest, err := execution.ArgumentsDigest(args)
	if err != nil {
		return Intent{}, fmt.Errorf("%w: arguments: %v", ErrInvalid, err)
	}
	if in.ArgumentsDigest != digest {
		return Intent{}, fmt.Errorf("%w: arguments digest %q does not match the arguments (their RFC 8785 digest is %s)", ErrInvalid, in.ArgumentsDigest, digest)
	}
	in.Arguments = bytes.Clone(args)
	return in, nil
}

// checkText refuses a display field of an intent that a database cannot
// keep as text (invalid UTF-8, NUL) or that is longer than max bytes.
func checkText(name, v string, max int) error {
	switch {
	case len(v) > max:
		return fmt.Errorf("%w: intent %s is %d bytes; the limit is %d", ErrInvalid, name, len(v), max)
	case !utf8.ValidString(v) || strings.ContainsRune(v, 0):
		return fmt.Errorf("%w: intent %s is not valid UTF-8 text", ErrInvalid, name)
	}
	return nil
}

// intentDiff names what makes b a different intent from a.
func intentDiff(a, b Intent) []string {
	d := a.Binding.diff(b.Binding)
	if a.ArgumentsDigest != b.ArgumentsDigest {
		d = append(d, "arguments")
	}
	if requester(a).Key() != requester(b).Key() {
		d = append(d, "requester")
	}
	return d
}

// Prepare implements [Store.Prepare].
func (s *sqlStore) Prepare(ctx context.Context, in Intent) (Approval, error) {
	in, err := checkIntent(in)
	if err != nil {
		return Approval{}, err
	}
	var out Approval
	prepare := func(tx *sql.Tx, now time.Time) error {
		latest, ok, err := s.latest(ctx, tx, in.IdempotencyKey, s.dialect.lockRows)
		if err != nil {
			return err
		}
		if ok && due(latest, now) {
			if err := s.expire(ctx, tx, &latest, now); err != nil {
				return err
			}
		}
		if ok && latest.State != StateExpired && latest.State != StateCanceled {
			if d := intentDiff(latest.Intent, in); len(d) > 0 {
				return fmt.Errorf("%w: idempotency key %q belongs to approval %s for a different intent (%s differ)",
					ErrConflict, in.IdempotencyKey, latest.ID, strings.Join(d, ", "))
			}
			out = latest
			return nil
		}
		id := newID()
		b := in.Binding
		_, err = tx.ExecContext(ctx, `INSERT INTO approvals (id, idempotency_key, state, tool, binding_id,
			binding_revision, scope_id, scope_revision, effect, principal_id, principal_issuer,
			arguments, arguments_digest, summary, created_at, expires_at, description, server, credential)
			VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			id, in.IdempotencyKey, b.Tool, b.ID, b.Revision, b.ScopeID, b.ScopeRevision, b.Effect,
			in.PrincipalID, in.PrincipalIssuer, []byte(in.Arguments), in.ArgumentsDigest, in.Summary,
			nanos(now), nanos(now.Add(s.opts.PendingTTL)), in.Description, in.Server, in.Credential)
		if err != nil {
			return s.fail("prepare", err)
		}
		if err := s.event(ctx, tx, id, now, "prepared", in.PrincipalID, map[string]any{
			"issuer": in.PrincipalIssuer, "idempotencyKey": in.IdempotencyKey, "tool": b.Tool,
			"bindingRevision": b.Revision, "scopeRevision": b.ScopeRevision, "effect": b.Effect,
			"argumentsDigest": in.ArgumentsDigest,
		}); err != nil {
			return err
		}
		out, err = s.load(ctx, tx, id)
		return err
	}
	// Two transactions that both found no live approval under the key both
	// insert one: the partial unique index refuses the second insert (on
	// PostgreSQL; SQLite's write lock never lets them overlap), and the
	// next attempt finds the first one's approval.
	for attempt := 1; ; attempt++ {
		err = s.update(ctx, "prepare", prepare)
		if attempt == 3 || !s.dialect.uniqueViolation(err) {
			break
		}
	}
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}

// latest reads the newest approval under key; lock is "" or
// dialect.lockRows.
func (s *sqlStore) latest(ctx context.Context, q queryer, key, lock string) (Approval, bool, error) {
	a, err := scanApproval(q.QueryRowContext(ctx,
		"SELECT "+approvalColumns+" FROM approvals WHERE idempotency_key = $1 ORDER BY n DESC LIMIT 1"+lock, key))
	if errors.Is(err, sql.ErrNoRows) {
		return Approval{}, false, nil
	}
	if err != nil {
		return Approval{}, false, s.fail("read latest", err)
	}
	return a, true, nil
}

// Get implements [Store.Get]. A pending or approved approval found past its
// deadline is recorded as expired before it is returned.
func (s *sqlStore) Get(ctx context.Context, id string) (Approval, error) {
	if s.closed.Load() {
		return Approval{}, fmt.Errorf("get: %w", ErrClosed)
	}
	a, err := s.load(ctx, s.db, id)
	if err != nil {
		return Approval{}, err
	}
	return s.refresh(ctx, a)
}

// Latest implements [Store.Latest], recording an observed expiry like Get.
func (s *sqlStore) Latest(ctx context.Context, idempotencyKey string) (Approval, bool, error) {
	if s.closed.Load() {
		return Approval{}, false, fmt.Errorf("latest: %w", ErrClosed)
	}
	a, ok, err := s.latest(ctx, s.db, idempotencyKey, "")
	if err != nil || !ok {
		return Approval{}, false, err
	}
	a, err = s.refresh(ctx, a)
	if err != nil {
		return Approval{}, false, err
	}
	return a, true, nil
}

// List implements [Store.List]. Approvals past their deadline are recorded
// as expired first, so the states listed are current.
func (s *sqlStore) List(ctx context.Context, f Filter) ([]Approval, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("list: %w", ErrClosed)
	}
	if f.State != "" && !f.State.valid() {
		return nil, fmt.Errorf("%w: unknown state %q", ErrInvalid, f.State)
	}
	if err := s.expireDue(ctx); err != nil {
		return nil, err
	}
	q, args, where := "SELECT "+approvalColumns+" FROM approvals", []any{}, " WHERE "
	if f.State != "" {
		args = append(args, f.State)
		q += where + "state = $1"
		where = " AND "
	}
	if f.Before != "" {
		var n int64
		err := s.db.QueryRowContext(ctx, "SELECT n FROM approvals WHERE id = $1", f.Before).Scan(&n)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("list before %q: %w", f.Before, ErrNotFound)
		}
		if err != nil {
			return nil, s.fail("list", err)
		}
		args = append(args, n)
		q += where + fmt.Sprintf("n < $%d", len(args))
	}
	q += " ORDER BY n DESC"
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail("list", err)
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, s.fail("list", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("list", err)
	}
	return out, nil
}

// expireDue records every approval past its deadline as expired.
func (s *sqlStore) expireDue(ctx context.Context) error {
	dueWhere := " FROM approvals WHERE state IN (" + sqlSources(StateExpired) + ") AND expires_at <= $1"
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT count(*)"+dueWhere, nanos(s.now())).Scan(&n); err != nil {
		return s.fail("list", err)
	}
	if n == 0 {
		return nil
	}
	return s.update(ctx, "expire", func(tx *sql.Tx, now time.Time) error {
		// In insertion order, so that two of these lock rows in the same
		// order and cannot deadlock.
		rows, err := tx.QueryContext(ctx, "SELECT "+approvalColumns+dueWhere+" ORDER BY n"+s.dialect.lockRows, nanos(now))
		if err != nil {
			return s.fail("expire", err)
		}
		var dues []Approval
		for rows.Next() {
			a, err := scanApproval(rows)
			if err != nil {
				rows.Close()
				return s.fail("expire", err)
			}
			dues = append(dues, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.fail("expire", err)
		}
		for i := range dues {
			if err := s.expire(ctx, tx, &dues[i], now); err != nil {
				return err
			}
		}
		return nil
	})
}

// authorize checks that p may act as an approver.
func (s *sqlStore) authorize(p policy.Principal, action string) error {
	if p.IsAnonymous() {
		return fmt.Errorf("%w: an anonymous principal cannot %s approvals", ErrNotAuthorized, action)
	}
	if !p.HasScope(s.opts.ApproverScope) {
		return fmt.Errorf("%w: principal %q lacks scope %q needed to %s approvals", ErrNotAuthorized, p.ID(), s.opts.ApproverScope, action)
	}
	return nil
}

// open loads approval id inside tx and records its expiry if due; an
// expired approval is ErrExpired (the expiry is still committed).
func (s *sqlStore) open(ctx context.Context, tx *sql.Tx, id string, now time.Time) (Approval, error) {
	a, err := s.lock(ctx, tx, id)
	if err != nil {
		return Approval{}, err
	}
	if due(a, now) {
		if err := s.expire(ctx, tx, &a, now); err != nil {
			return Approval{}, err
		}
	}
	if a.State == StateExpired {
		return a, fmt.Errorf("%w: approval %s expired at %s", ErrExpired, id, a.ExpiresAt.Format(time.RFC3339))
	}
	return a, nil
}

// Approve implements [Store.Approve].
func (s *sqlStore) Approve(ctx context.Context, id string, approver policy.Principal, note string) (Approval, error) {
	return s.decide(ctx, id, approver, note, StateApproved)
}

// Reject implements [Store.Reject].
func (s *sqlStore) Reject(ctx context.Context, id string, approver policy.Principal, note string) (Approval, error) {
	return s.decide(ctx, id, approver, note, StateRejected)
}

func (s *sqlStore) decide(ctx context.Context, id string, p policy.Principal, note string, to State) (Approval, error) {
	verb := map[State]string{StateApproved: "approve", StateRejected: "reject"}[to]
	if err := checkPrincipal(p, "approver"); err != nil {
		return Approval{}, err
	}
	if err := s.authorize(p, verb); err != nil {
		return Approval{}, err
	}
	var out Approval
	err := s.update(ctx, verb, func(tx *sql.Tx, now time.Time) error {
		a, err := s.open(ctx, tx, id, now)
		if err != nil {
			return err
		}
		if !canTransition(a.State, to) {
			return fmt.Errorf("%w: approval %s is %s", ErrNotPending, id, a.State)
		}
		if SamePerson(p.ID(), a.Intent.PrincipalID) {
			return fmt.Errorf("%w: approval %s was requested by %q, the same person as %q (ids are compared ignoring case, width, accents and look-alike letters; an issuer does not make another person)",
				ErrSelfApproval, id, a.Intent.PrincipalID, p.ID())
		}
		expires := a.ExpiresAt
		if to == StateApproved {
			expires = now.Add(s.opts.ApprovedTTL)
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = $1, decided_by = $2, decided_at = $3, note = $4, expires_at = $5
			WHERE id = $6 AND state IN (`+sqlSources(to)+`)`, to, p.ID(), nanos(now), note, nanos(expires), id)
		if err != nil {
			return s.fail(verb, err)
		}
		if err := oneRow(res); err != nil {
			return s.fail(verb, err)
		}
		if err := s.event(ctx, tx, id, now, string(to), p.ID(), map[string]any{"issuer": p.Issuer(), "note": note}); err != nil {
			return err
		}
		out, err = s.load(ctx, tx, id)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}

// Cancel implements [Store.Cancel].
func (s *sqlStore) Cancel(ctx context.Context, id string, by policy.Principal, note string) (Approval, error) {
	if err := checkPrincipal(by, "canceler"); err != nil {
		return Approval{}, err
	}
	var out Approval
	err := s.update(ctx, "cancel", func(tx *sql.Tx, now time.Time) error {
		a, err := s.lock(ctx, tx, id)
		if err != nil {
			return err
		}
		if !isRequester(by, a.Intent) {
			if err := s.authorize(by, "cancel"); err != nil {
				return err
			}
		}
		if a, err = s.open(ctx, tx, id, now); err != nil {
			return err
		}
		if !canTransition(a.State, StateCanceled) {
			return fmt.Errorf("%w: approval %s is %s; only pending or approved approvals can be canceled", ErrNotPending, id, a.State)
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'canceled', decided_by = $1, decided_at = $2, note = $3
			WHERE id = $4 AND state IN (`+sqlSources(StateCanceled)+`)`, by.ID(), nanos(now), note, id)
		if err != nil {
			return s.fail("cancel", err)
		}
		if err := oneRow(res); err != nil {
			return s.fail("cancel", err)
		}
		if err := s.event(ctx, tx, id, now, "canceled", by.ID(), map[string]any{"issuer": by.Issuer(), "note": note, "from": a.State}); err != nil {
			return err
		}
		out, err = s.load(ctx, tx, id)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}

// Claim implements [Store.Claim]. A claim refused because the binding
// changed is recorded in the audit trail (claim_refused) and leaves the
// approval approved: the difference may be transient (a rediscovery in
// progress), the approval still expires at its dispatch deadline, and a host
// that knows better cancels it.
func (s *sqlStore) Claim(ctx context.Context, id string, current Binding) (Approval, error) {
	var out Approval
	err := s.update(ctx, "claim", func(tx *sql.Tx, now time.Time) error {
		a, err := s.open(ctx, tx, id, now)
		if err != nil {
			return err
		}
		switch {
		case canTransition(a.State, StateClaimed):
		case a.State == StateClaimed || a.State == StateCompleted:
			return fmt.Errorf("%w: approval %s was claimed at %s", ErrAlreadyClaimed, id, a.ClaimedAt.Format(time.RFC3339Nano))
		default:
			return fmt.Errorf("%w: approval %s is %s", ErrNotApproved, id, a.State)
		}
		if d := a.Intent.Binding.diff(current); len(d) > 0 {
			if err := s.event(ctx, tx, id, now, "claim_refused", "", map[string]any{
				"changed": d, "current": bindingDetail(current),
			}); err != nil {
				return err
			}
			return fmt.Errorf("%w: approval %s: %s differ from the approved binding", ErrBindingChanged, id, strings.Join(d, ", "))
		}
		res, err := tx.ExecContext(ctx, "UPDATE approvals SET state = 'claimed', claimed_at = $1 WHERE id = $2 AND state IN ("+sqlSources(StateClaimed)+")", nanos(now), id)
		if err != nil {
			return s.fail("claim", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return s.fail("claim", err)
		} else if n != 1 {
			return fmt.Errorf("%w: approval %s", ErrAlreadyClaimed, id)
		}
		if err := s.event(ctx, tx, id, now, "claimed", "", map[string]any{"bindingRevision": current.Revision, "scopeRevision": current.ScopeRevision}); err != nil {
			return err
		}
		out, err = s.load(ctx, tx, id)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}

func bindingDetail(b Binding) map[string]any {
	return map[string]any{"tool": b.Tool, "bindingId": b.ID, "bindingRevision": b.Revision,
		"scopeId": b.ScopeID, "scopeRevision": b.ScopeRevision, "effect": b.Effect}
}

// Complete implements [Store.Complete].
func (s *sqlStore) Complete(ctx context.Context, id string, r Receipt) (Approval, error) {
	if !r.Effect.valid() {
		return Approval{}, fmt.Errorf("%w: receipt effect %q: want %q, %q or %q", ErrInvalid, r.Effect, EffectCommitted, EffectNotStarted, EffectUnknown)
	}
	if r.Result != nil && !json.Valid(r.Result) {
		return Approval{}, fmt.Errorf("%w: receipt result is not valid JSON", ErrInvalid)
	}
	var out Approval
	err := s.update(ctx, "complete", func(tx *sql.Tx, now time.Time) error {
		a, err := s.lock(ctx, tx, id)
		if err != nil {
			return err
		}
		if !canTransition(a.State, StateCompleted) {
			return fmt.Errorf("%w: approval %s is %s", ErrNotClaimed, id, a.State)
		}
		at := r.At
		if at.IsZero() {
			at = now
		}
		var result []byte
		if r.Result != nil {
			result = []byte(r.Result)
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'completed', receipt_effect = $1, receipt_code = $2,
			receipt_result = $3, receipt_at = $4 WHERE id = $5 AND state IN (`+sqlSources(StateCompleted)+`)`, r.Effect, string(r.Reason), result, nanos(at), id)
		if err != nil {
			return s.fail("complete", err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return s.fail("complete", err)
		} else if n != 1 {
			return fmt.Errorf("%w: approval %s", ErrNotClaimed, id)
		}
		if err := s.event(ctx, tx, id, now, "completed", "", map[string]any{"effect": r.Effect, "code": r.Reason}); err != nil {
			return err
		}
		out, err = s.load(ctx, tx, id)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}

// Reconcile implements [Store.Reconcile].
func (s *sqlStore) Reconcile(ctx context.Context, id string, approver policy.Principal, effect EffectState, evidence string) (Approval, error) {
	if err := checkPrincipal(approver, "approver"); err != nil {
		return Approval{}, err
	}
	if err := s.authorize(approver, "reconcile"); err != nil {
		return Approval{}, err
	}
	if effect != EffectCommitted && effect != EffectNotStarted {
		return Approval{}, fmt.Errorf("%w: reconciled effect %q: want %q or %q", ErrInvalid, effect, EffectCommitted, EffectNotStarted)
	}
	if strings.TrimSpace(evidence) == "" {
		return Approval{}, fmt.Errorf("%w: say how the effect was established, independently of the dispatcher", ErrEvidenceRequired)
	}
	var out Approval
	err := s.update(ctx, "reconcile", func(tx *sql.Tx, now time.Time) error {
		a, err := s.lock(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case a.State != StateClaimed && a.State != StateCompleted:
			return fmt.Errorf("%w: approval %s is %s; only a dispatched approval has an effect to reconcile", ErrNotClaimed, id, a.State)
		case a.Reconciliation != nil:
			return fmt.Errorf("%w: approval %s was already reconciled as %s by %q", ErrConflict, id, a.Reconciliation.Effect, a.Reconciliation.By)
		case a.Receipt != nil && a.Receipt.Effect != EffectUnknown:
			return fmt.Errorf("%w: approval %s has a known effect (%s); there is nothing to reconcile", ErrConflict, id, a.Receipt.Effect)
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET recon_by = $1, recon_effect = $2, recon_evidence = $3, recon_at = $4
			WHERE id = $5 AND recon_effect IS NULL AND state IN ('claimed','completed')`, approver.ID(), effect, evidence, nanos(now), id)
		if err != nil {
			return s.fail("reconcile", err)
		}
		if err := oneRow(res); err != nil {
			return s.fail("reconcile", err)
		}
		if err := s.event(ctx, tx, id, now, "reconciled", approver.ID(), map[string]any{
			"issuer": approver.Issuer(), "effect": effect, "evidence": evidence, "state": a.State,
		}); err != nil {
			return err
		}
		out, err = s.load(ctx, tx, id)
		return err
	})
	if err != nil {
		return Approval{}, err
	}
	return out, nil
}
