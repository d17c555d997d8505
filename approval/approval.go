package approval

import (
	"encoding/json"
	"time"

	"github.com/agnara-go/agnara/execution"
)

// Effect is what a remote tool may do to the world, as the host declared it
// when it bound the tool for writing. It is part of the approved identity: an
// approval given for a write is not valid for the same tool rebound as
// destructive.
type Effect string

// The effects a write binding can declare.
const (
	EffectWrite       Effect = "write"
	EffectDestructive Effect = "destructive"
)

func (e Effect) valid() bool { return e == EffectWrite || e == EffectDestructive }

// State is where an approval is in its lifecycle. [Transitions] lists every
// allowed change of state:
//
//	pending  → approved   approve
//	pending  → rejected   reject
//	pending  → canceled   cancel        approved → canceled  cancel
//	pending  → expired    deadline      approved → expired   deadline
//	approved → claimed    claim
//	claimed  → completed  complete
//
// Rejected, expired, canceled and completed are final. Claimed is final too
// when the process died before completing: the claim is held for good, and
// only a reconciliation (recorded beside it) says what happened.
type State string

// The states of an approval.
const (
	StatePending   State = "pending"
	StateApproved  State = "approved"
	StateRejected  State = "rejected"
	StateExpired   State = "expired"
	StateCanceled  State = "canceled"
	StateClaimed   State = "claimed"
	StateCompleted State = "completed"
)

// States lists every state in lifecycle order.
func States() []State {
	return []State{StatePending, StateApproved, StateRejected, StateExpired, StateCanceled, StateClaimed, StateCompleted}
}

func (s State) valid() bool {
	switch s {
	case StatePending, StateApproved, StateRejected, StateExpired, StateCanceled, StateClaimed, StateCompleted:
		return true
	}
	return false
}

// EffectState is what is known about a dispatched write's effect on the
// remote system.
//
// Only a validated success response proves [EffectCommitted], and only a
// refusal before anything was sent proves [EffectNotStarted]. Everything else
// after the request left — a timeout, a cancellation, a lost connection, an
// error response — is [EffectUnknown]: an error response cannot prove that no
// write happened.
type EffectState string

// The effect states.
const (
	EffectNotStarted EffectState = "not_started"
	EffectCommitted  EffectState = "committed"
	EffectUnknown    EffectState = "unknown"
)

func (e EffectState) valid() bool {
	return e == EffectNotStarted || e == EffectCommitted || e == EffectUnknown
}

// Binding is the identity of the write registration an approval is for. An
// approval is valid only for the binding it was given for: [Store.Claim]
// compares every field with the current registration and refuses on any
// difference.
//
// Binding is a comparable value; safe for concurrent use.
type Binding struct {
	// Tool is the local capability identity, e.g. "gw.update_document".
	Tool string
	// ID is the host's binding id.
	ID string
	// Revision is the effective binding revision: the write catalog digest
	// ("sha256:..."), which covers the host's own revision, the server's
	// identity, the selected schemas and the scope identity. Not the host's
	// original revision string.
	Revision string
	// ScopeID and ScopeRevision identify the scope the binding is valid in.
	// Revoking or changing a scope changes its revision, which invalidates
	// approvals given under the old one.
	ScopeID       string
	ScopeRevision string
	// Effect is the declared effect.
	Effect Effect
}

// diff returns the names of the fields in which b and c differ.
func (b Binding) diff(c Binding) []string {
	var d []string
	if b.Tool != c.Tool {
		d = append(d, "tool")
	}
	if b.ID != c.ID {
		d = append(d, "binding id")
	}
	if b.Revision != c.Revision {
		d = append(d, "binding revision")
	}
	if b.ScopeID != c.ScopeID {
		d = append(d, "scope id")
	}
	if b.ScopeRevision != c.ScopeRevision {
		d = append(d, "scope revision")
	}
	if b.Effect != c.Effect {
		d = append(d, "effect")
	}
	return d
}

// Intent is one requested write call: which registration, who asked, with
// which arguments. It is recorded by [Store.Prepare] and shown to approvers.
//
// An Intent is a plain value; the store copies what it keeps, so changing an
// Intent after Prepare changes nothing recorded.
type Intent struct {
	Binding Binding
	// PrincipalID and PrincipalIssuer identify the requester (see
	// policy.Principal). PrincipalID must not be empty: an approval must say
	// whom it was for, and self-approval is judged against it.
	PrincipalID     string
	PrincipalIssuer string
	// Arguments are the actual call's arguments, at most [MaxArguments]
	// bytes of I-JSON (RFC 7493: no duplicate names, valid UTF-8). Empty
	// arguments are recorded as {}.
	Arguments json.RawMessage
	// ArgumentsDigest is "sha256:" and the hex SHA-256 of the arguments'
	// RFC 8785 canonical form (what internal/canonjson.Digest computes).
	// Prepare recomputes it and refuses a digest that does not match, so
	// that the arguments an approver reads are the ones the approval is
	// bound to.
	ArgumentsDigest string
	// IdempotencyKey names the intent: the same key always means the same
	// intent. Required.
	IdempotencyKey string
	// Summary is a human-readable line for approvers, e.g. the tool title.
	Summary string
	// Description is what the tool does, as its server describes it, and
	// Server the host's name for that server (the upstream, such as
	// "notes"): both for approvers to read, next to the summary. Neither
	// is part of the intent's identity (the binding revision already
	// covers the server and the tool's schemas). Either may be empty;
	// Description is at most [MaxDescription] bytes and Server at most 128,
	// both valid UTF-8 without NUL.
	Description string
	Server      string
	// Credential names whose authority the write reaches its server with,
	// as the host says, for approvers to read: package gateway's upstream
	// credentials, "gateway" (the gateway's own identity),
	// "token_exchange" (the requester's own token, exchanged) or "consent"
	// (the requester's own grant). Never a
	// credential itself; not part of the intent's identity (a gateway's
	// binding revision covers it); at most 64 bytes of valid UTF-8 without
	// NUL, and may be empty.
	Credential string
}

// MaxArguments is the largest Intent.Arguments, in bytes, a store records.
const MaxArguments = 64 << 10

// MaxDescription is the largest Intent.Description, in bytes, a store
// records: mcpimport's default limit on a remote tool's description.
const MaxDescription = 8 << 10

// Approval is a snapshot of one approval as the store held it when it was
// read. It is a plain value: changing it changes nothing in the store, and
// the store never changes a value it returned. Safe for concurrent reading.
type Approval struct {
	// ID is random and URL-safe: "apv_" and 20 base32 characters.
	ID     string
	Intent Intent
	State  State
	// CreatedAt is when Prepare recorded the approval.
	CreatedAt time.Time
	// ExpiresAt is the deadline of the state the approval waits in: while
	// pending, the decision deadline (created + Options.PendingTTL); once
	// approved, the dispatch deadline (decided + Options.ApprovedTTL).
	// A pending or approved approval at or past it is expired. After a
	// claim it no longer matters.
	ExpiresAt time.Time
	// DecidedBy, DecidedAt and Note record the approve, reject or cancel
	// decision: the principal's id, when, and their note. Empty while
	// pending and for an approval that expired undecided.
	DecidedBy string
	DecidedAt time.Time
	Note      string
	// ClaimedAt is when the approval was claimed for dispatch; zero unless
	// claimed.
	ClaimedAt time.Time
	// Receipt is set when the approval is completed.
	Receipt *Receipt
	// Reconciliation is set when a host recorded what an unknown effect
	// turned out to be.
	Reconciliation *Reconciliation
}

// Receipt is the dispatcher's account of a claimed write, recorded once by
// [Store.Complete] and never changed afterwards. Safe for concurrent reading.
type Receipt struct {
	// Effect is what the dispatcher knows: committed only after a validated
	// success response, not_started only if nothing was sent, otherwise
	// unknown.
	Effect EffectState
	// Reason is the reason of the failure the dispatch ended in (e.g.
	// "mcp_timeout", see package mcpimport), or "" on success.
	Reason execution.Reason
	// Result is the success envelope, or nil. When set it must be JSON.
	Result json.RawMessage
	// At is when the dispatch ended. Complete sets it to the store's clock
	// when zero.
	At time.Time
}

// Reconciliation is a host's finding about an effect the dispatcher could
// not know, recorded beside (never over) the receipt. Safe for concurrent
// reading.
type Reconciliation struct {
	// By is the id of the principal who recorded it.
	By string
	// Effect is committed or not_started.
	Effect EffectState
	// Evidence says how the host knows: independent of the dispatcher,
	// e.g. "read back document 42 at 10:14Z: title unchanged".
	Evidence string
	At       time.Time
}

// Filter selects approvals for [Store.List]. The zero Filter selects all.
// Safe for concurrent use.
type Filter struct {
	// State, when set, selects approvals in that state only.
	State State
	// Limit, when positive, caps the number of approvals returned.
	Limit int
	// Before, when set, is the id of an approval: only approvals recorded
	// before it are selected. A list is read page by page with the last
	// id of each page (a keyset on the store's order, newest first, not
	// an offset: approvals recorded meanwhile do not shift later pages).
	// An id that names no approval is ErrNotFound.
	Before string
}

// Event is one entry of an approval's audit trail: every transition, and
// every claim refused because the binding changed. Safe for concurrent
// reading.
type Event struct {
	ApprovalID string
	// Seq numbers an approval's events from 1, in order.
	Seq int
	At  time.Time
	// Kind is one of prepared, approved, rejected, canceled, expired,
	// claimed, claim_refused, completed, reconciled.
	Kind string
	// Actor is the id of the principal who acted, or "" when the store or
	// the dispatching host acted (expiry, claim, completion).
	Actor string
	// Detail is a JSON object with the event's particulars.
	Detail json.RawMessage
}
