package approval

import "github.com/agnara-go/agnara/execution"

// Failure reasons: the [execution.Reason] of canonical failures that come
// from an approval's state, whether a write call meets it (package mcpimport)
// or an approver's tool (see [RegisterTools]) does. The canonical code each
// comes with is given in parentheses.
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
	// dispatched (conflict).
	ReasonBindingChanged execution.Reason = "approval_binding_changed"
	// ReasonUnavailable: the approval store failed (unavailable). Nothing
	// was dispatched.
	ReasonUnavailable execution.Reason = "approval_unavailable"
	// ReasonNotPending: a decision was asked for an approval that is no
	// longer pending ([ErrNotPending]; conflict).
	ReasonNotPending execution.Reason = "approval_not_pending"
	// ReasonExpired: a decision was asked for an expired approval
	// ([ErrExpired]; conflict).
	ReasonExpired execution.Reason = "approval_expired"
	// ReasonSelfDecision: the requester tried to decide their own approval
	// ([ErrSelfApproval]; forbidden).
	ReasonSelfDecision execution.Reason = "approval_self_decision"
	// ReasonNotAuthorized: the caller lacks the approver scope
	// ([ErrNotAuthorized]; forbidden).
	ReasonNotAuthorized execution.Reason = "approval_not_authorized"
)
