package approval

import "github.com/agnara-go/agnara/execution"

// Failure reasons: the [execution.Reason] of what goes wrong with an
// approval, whether a write call meets it (package mcpimport), an
// approver's tool does (see [RegisterTools]), or a host program calls a
// [Store] (each of the store's errors answers one to
// [execution.ReasonOf]). The canonical code each comes with, when a
// canonical failure carries it, is given in parentheses.
const (
	// ReasonPending: the call waits for an approver's decision
	// (interaction_required).
	ReasonPending execution.Reason = "approval_pending"
	// ReasonRejected: an approver rejected the call (forbidden).
	ReasonRejected execution.Reason = "approval_rejected"
	// ReasonInProgress: the approval is claimed and no receipt is recorded
	// yet: the dispatch is under way, or the process died during it
	// (conflict). The effect is unknown until a receipt or a reconciliation
	// says otherwise.
	ReasonInProgress execution.Reason = "approval_in_progress"
	// ReasonBindingChanged: the approval was given for another identity of
	// the registration (a different catalog or scope revision); it is not
	// dispatched ([ErrBindingChanged]; conflict).
	ReasonBindingChanged execution.Reason = "approval_binding_changed"
	// ReasonUnavailable: the approval store failed, is closed
	// ([ErrClosed]) or could not be opened (unavailable). Nothing was
	// dispatched.
	ReasonUnavailable execution.Reason = "approval_unavailable"
	// ReasonNotPending: a decision (or a cancellation) was asked for an
	// approval that is past it: already decided, canceled or claimed
	// ([ErrNotPending]; conflict).
	ReasonNotPending execution.Reason = "approval_not_pending"
	// ReasonExpired: a decision or a claim was asked for an expired
	// approval ([ErrExpired]; conflict).
	ReasonExpired execution.Reason = "approval_expired"
	// ReasonSelfDecision: the requester tried to decide their own approval
	// ([ErrSelfApproval]; forbidden).
	ReasonSelfDecision execution.Reason = "approval_self_decision"
	// ReasonNotAuthorized: the caller lacks the approver scope, or is
	// anonymous ([ErrNotAuthorized]; forbidden).
	ReasonNotAuthorized execution.Reason = "approval_not_authorized"
	// ReasonNotFound: no approval has this id ([ErrNotFound]; not_found).
	ReasonNotFound execution.Reason = "approval_not_found"
	// ReasonInvalid: the request is malformed: an incomplete intent, a
	// digest that does not match, arguments too large, a principal id or
	// issuer [CheckIdentity] refuses, bad options or a bad database path
	// ([ErrInvalid], [*IdentityError]; invalid_input).
	ReasonInvalid execution.Reason = "approval_invalid"
	// ReasonConflict: an idempotency key already names a different
	// intent, or a reconciliation meets an effect that is known or already
	// reconciled ([ErrConflict]; conflict).
	ReasonConflict execution.Reason = "approval_conflict"
	// ReasonNotApproved: a claim was asked for an approval that is not
	// approved ([ErrNotApproved]; conflict).
	ReasonNotApproved execution.Reason = "approval_not_approved"
	// ReasonAlreadyClaimed: a claim was asked for an approval another
	// caller claimed first ([ErrAlreadyClaimed]; conflict).
	ReasonAlreadyClaimed execution.Reason = "approval_already_claimed"
	// ReasonNotClaimed: a receipt or a reconciliation was given for an
	// approval that was never claimed ([ErrNotClaimed]; conflict).
	ReasonNotClaimed execution.Reason = "approval_not_claimed"
	// ReasonEvidenceRequired: a reconciliation says nothing of how the
	// effect was established ([ErrEvidenceRequired]; invalid_input).
	ReasonEvidenceRequired execution.Reason = "approval_evidence_required"
)

// sentinel is an error of this package that callers test with errors.Is and
// that answers its reason to [execution.ReasonOf].
type sentinel struct {
	msg    string
	reason execution.Reason
}

func (e *sentinel) Error() string { return e.msg }

// FailureReason returns the error's reason (see [execution.ReasonOf]).
func (e *sentinel) FailureReason() execution.Reason { return e.reason }

// unavailableError is a store that could not be opened: its message as it
// was, answering [ReasonUnavailable].
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }
func (e *unavailableError) Unwrap() error { return e.err }

// FailureReason returns [ReasonUnavailable].
func (e *unavailableError) FailureReason() execution.Reason { return ReasonUnavailable }

// unavailable marks err, which kept a store from opening, as
// [ReasonUnavailable], unless it already answers a reason (an invalid path
// or DSN is [ReasonInvalid]).
func unavailable(err error) error {
	if err == nil || execution.ReasonOf(err) != "" {
		return err
	}
	return &unavailableError{err: err}
}
