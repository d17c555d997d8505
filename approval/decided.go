package approval

import (
	"context"
	"fmt"
)

// decidedQuery counts the decisions recorded in the approvals table. An
// approval was approved if it is approved now, or in a state only an
// approved one reaches (claimed, completed), or expired after its approval
// (expiry keeps decided_by, the approver's id, which only a decision or a
// cancel sets, and a pending one expires with none), or canceled after
// its approval (cancel overwrites decided_by: the audit trail's approved
// event says so, looked up by the events table's primary key). Rejected is final. The states are
// read through index approvals_state; the test of every lifecycle path
// (testDecided) holds this to the transition table.
const decidedQuery = `SELECT
	(SELECT count(*) FROM approvals WHERE state IN ('approved','claimed','completed'))
	+ (SELECT count(*) FROM approvals WHERE state = 'expired' AND decided_by <> '')
	+ (SELECT count(*) FROM approvals a WHERE a.state = 'canceled'
		AND EXISTS (SELECT 1 FROM events e WHERE e.approval_id = a.id AND e.kind = 'approved')),
	(SELECT count(*) FROM approvals WHERE state = 'rejected')`

// Decided returns how many approvals in the store were ever approved and
// how many rejected, whatever became of them since (an approved one may
// since have been claimed, completed, canceled or have expired): the
// decisions of every process sharing the store, its inbox's and the
// command line's included. Both counts only grow. Package prommcp reads
// them for agnara_approvals_decided_total, so that every process scraped
// reports the same decisions (ADR 60).
//
// It is one query whose cost grows with the approvals stored (an index
// scan); call it at a scrape's pace, not per request.
func (s *sqlStore) Decided(ctx context.Context) (approved, rejected int64, err error) {
	if s.closed.Load() {
		return 0, 0, fmt.Errorf("decided: %w", ErrClosed)
	}
	if err := s.db.QueryRowContext(ctx, decidedQuery).Scan(&approved, &rejected); err != nil {
		return 0, 0, s.fail("count decisions", err)
	}
	return approved, rejected, nil
}
