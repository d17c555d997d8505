package approval

import (
	"context"

	"github.com/agnara-go/agnara/policy"
)

// Store keeps approvals durably. Each method is one atomic transition: when
// it returns without error the change is durable, and when it returns an
// error nothing changed except what the error's documentation says (an
// expiry observed on the way, a refused claim in the audit trail).
//
// Implementations must be safe for concurrent use, also by several processes
// sharing the same backing store: the exactly-once guarantees of Claim and
// Complete hold across all of them. [SQLiteStore] (one machine) and
// [PostgresStore] (several hosts) implement it with the same lifecycle,
// tested by one suite.
type Store interface {
	// Prepare records in as a pending approval, or returns the approval
	// already recorded under in.IdempotencyKey:
	//   - none, or the newest is expired or canceled: a new pending one;
	//   - the newest is for a different intent (binding, arguments digest
	//     or requester): ErrConflict;
	//   - otherwise (pending, approved, rejected, claimed, completed): that
	//     one, unchanged. A rejected one is returned for the caller to
	//     report; asking again under the same key does not re-open it.
	// An invalid intent is ErrInvalid, among them a requester id or issuer
	// that CheckIdentity refuses.
	Prepare(ctx context.Context, in Intent) (Approval, error)
	// Get returns the approval with id, or ErrNotFound.
	Get(ctx context.Context, id string) (Approval, error)
	// Latest returns the newest approval recorded under idempotencyKey, and
	// false when there is none.
	Latest(ctx context.Context, idempotencyKey string) (Approval, bool, error)
	// List returns the approvals f selects, newest first.
	List(ctx context.Context, f Filter) ([]Approval, error)
	// Approve decides a pending approval for its intent. The approver must
	// be identified, hold the store's approver scope (ErrNotAuthorized) and
	// not be the requester (ErrSelfApproval): ids are compared as
	// [SamePerson] compares them (case, width, accents, look-alike
	// letters), and the same id from any issuer is the same person (ADR
	// 0066).
	// An id or issuer that CheckIdentity refuses is ErrInvalid. A decided
	// approval is ErrNotPending; an expired one ErrExpired.
	Approve(ctx context.Context, id string, approver policy.Principal, note string) (Approval, error)
	// Reject decides a pending approval against its intent, under the
	// same rules as Approve.
	Reject(ctx context.Context, id string, approver policy.Principal, note string) (Approval, error)
	// Cancel withdraws a pending or approved approval. by must be the
	// requester (exactly the same id and issuer) or an approver
	// (ErrNotAuthorized); an id or issuer CheckIdentity refuses is
	// ErrInvalid.
	// Any other state is ErrNotPending; an expired one ErrExpired.
	Cancel(ctx context.Context, id string, by policy.Principal, note string) (Approval, error)
	// Claim takes an approved approval for dispatch, exactly once across
	// every process sharing the store. current is the registration as it
	// is now; any difference from the approved binding is
	// ErrBindingChanged, and the approval stays approved and unclaimed. A
	// claimed or completed approval is ErrAlreadyClaimed; one past its
	// dispatch deadline ErrExpired; any other state ErrNotApproved. A
	// claim is never released.
	Claim(ctx context.Context, id string, current Binding) (Approval, error)
	// Complete records the receipt of a claimed approval, exactly once
	// (ErrNotClaimed otherwise). r.Effect must be one of the three
	// effect states.
	Complete(ctx context.Context, id string, r Receipt) (Approval, error)
	// Reconcile records a host's finding (committed or not_started, with
	// non-empty evidence: ErrEvidenceRequired) for an approval whose
	// effect is unknown: completed with an unknown receipt, or claimed and
	// never completed. The approver must be identified and hold the
	// approver scope, with an id and issuer CheckIdentity accepts; being
	// the requester is allowed here. The receipt and
	// the state are left as they are. An approval never claimed is
	// ErrNotClaimed; one whose effect is known, or already reconciled,
	// ErrConflict.
	Reconcile(ctx context.Context, id string, approver policy.Principal, effect EffectState, evidence string) (Approval, error)
	// Close releases the store. Later calls return ErrClosed.
	Close() error
}

// Errors returned by stores, wrapped with context; test them with
// errors.Is. Each also answers its reason to [execution.ReasonOf], through
// any wrapping: ErrNotFound is [ReasonNotFound], ErrSelfApproval
// [ReasonSelfDecision], and so on (see the reasons' documentation; ErrClosed
// is [ReasonUnavailable]).
var (
	ErrNotFound         error = &sentinel{"approval: not found", ReasonNotFound}
	ErrInvalid          error = &sentinel{"approval: invalid request", ReasonInvalid}
	ErrConflict         error = &sentinel{"approval: conflict", ReasonConflict}
	ErrSelfApproval     error = &sentinel{"approval: a requester cannot decide their own approval", ReasonSelfDecision}
	ErrNotAuthorized    error = &sentinel{"approval: not authorized", ReasonNotAuthorized}
	ErrNotPending       error = &sentinel{"approval: not pending", ReasonNotPending}
	ErrNotApproved      error = &sentinel{"approval: not approved", ReasonNotApproved}
	ErrExpired          error = &sentinel{"approval: expired", ReasonExpired}
	ErrBindingChanged   error = &sentinel{"approval: binding changed since approval", ReasonBindingChanged}
	ErrAlreadyClaimed   error = &sentinel{"approval: already claimed", ReasonAlreadyClaimed}
	ErrNotClaimed       error = &sentinel{"approval: not claimed", ReasonNotClaimed}
	ErrEvidenceRequired error = &sentinel{"approval: evidence required", ReasonEvidenceRequired}
	ErrClosed           error = &sentinel{"approval: store closed", ReasonUnavailable}
)
