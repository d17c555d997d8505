package approval

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// ToolOptions configures [RegisterTools]. A nil *ToolOptions means the
// defaults.
type ToolOptions struct {
	// Scope is the scope a caller must hold to see and use the tools.
	// Default [DefaultApproverScope]. The store checks its own approver
	// scope again on every decision.
	Scope string
}

// RegisterTools registers the approval operations as capabilities of app,
// for approvers who work through an MCP client: approvals_list,
// approvals_show, approvals_approve and approvals_reject. They are guarded
// by the approver scope; the caller is the approver, so the store's rules
// apply unchanged (a requester cannot decide their own approval, every
// decision is recorded with its actor). Approving and rejecting require the
// caller's confirmation (an elicitation the client shows its user), so that
// an agent holding the scope cannot decide without its user seeing the
// question. Reconciliation stays a host action (cmd/agnara): it needs
// independent evidence.
//
// Expose the returned capabilities like any others, for example with
// mcpexpose.
func RegisterTools(app *agnara.App, store Store, opts *ToolOptions) []*agnara.Capability {
	scope := DefaultApproverScope
	if opts != nil && opts.Scope != "" {
		scope = opts.Scope
	}
	t := &tools{store: store}
	scopes := []string{scope}
	return []*agnara.Capability{
		app.Capability(t.list, &agnara.CapabilityOptions{
			Name:        "approvals_list",
			Title:       "List approvals",
			Description: "List the approvals of remote writes, newest first, optionally only those in one state (pending ones wait for a decision).",
			Scopes:      scopes,
			Annotations: agnara.ReadOnly,
		}),
		app.Capability(t.show, &agnara.CapabilityOptions{
			Name:        "approvals_show",
			Title:       "Show an approval",
			Description: "Show one approval: the write it is for, its arguments, its state and, once dispatched, its receipt.",
			Scopes:      scopes,
			Annotations: agnara.ReadOnly,
		}),
		app.Capability(t.approve, &agnara.CapabilityOptions{
			Name:        "approvals_approve",
			Title:       "Approve a write",
			Description: "Approve a pending remote write. It is dispatched once, when its requester makes the same call again.",
			Scopes:      scopes,
			Confirm:     "Approve this remote write? It will be carried out once when its requester calls again.",
		}),
		app.Capability(t.reject, &agnara.CapabilityOptions{
			Name:        "approvals_reject",
			Title:       "Reject a write",
			Description: "Reject a pending remote write. It will not be dispatched.",
			Scopes:      scopes,
			Confirm:     "Reject this remote write?",
		}),
	}
}

type tools struct {
	store Store
}

// ListInput selects approvals.
type ListInput struct {
	State State `json:"state,omitempty" jsonschema:"enum=pending,enum=approved,enum=rejected,enum=expired,enum=canceled,enum=claimed,enum=completed" jsonschema_description:"Only approvals in this state."`
	Limit int   `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100" jsonschema_description:"At most this many (default 20)."`
}

// IDInput names one approval.
type IDInput struct {
	ID string `json:"id" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"The approval's id (apv_...)."`
}

// DecisionInput decides one approval.
type DecisionInput struct {
	ID   string `json:"id" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"The approval's id (apv_...)."`
	Note string `json:"note,omitempty" jsonschema:"maxLength=1000" jsonschema_description:"Why, for the record."`
}

// View is an approval as the tools show it.
type View struct {
	ID            string          `json:"id"`
	State         State           `json:"state"`
	Tool          string          `json:"tool"`
	Summary       string          `json:"summary"`
	Effect        Effect          `json:"effect"`
	Requester     string          `json:"requester"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	CreatedAt     time.Time       `json:"created_at"`
	ExpiresAt     time.Time       `json:"expires_at"`
	DecidedBy     string          `json:"decided_by,omitempty"`
	Note          string          `json:"note,omitempty"`
	ReceiptEffect EffectState     `json:"receipt_effect,omitempty"`
	ReconciledAs  EffectState     `json:"reconciled_as,omitempty"`
	ReconciledBy  string          `json:"reconciled_by,omitempty"`
}

func view(a Approval, withArgs bool) View {
	v := View{
		ID: a.ID, State: a.State, Tool: a.Intent.Binding.Tool, Summary: a.Intent.Summary,
		Effect: a.Intent.Binding.Effect, Requester: a.Intent.PrincipalID,
		CreatedAt: a.CreatedAt, ExpiresAt: a.ExpiresAt, DecidedBy: a.DecidedBy, Note: a.Note,
	}
	if withArgs {
		v.Arguments = a.Intent.Arguments
	}
	if a.Receipt != nil {
		v.ReceiptEffect = a.Receipt.Effect
	}
	if a.Reconciliation != nil {
		v.ReconciledAs, v.ReconciledBy = a.Reconciliation.Effect, a.Reconciliation.By
	}
	return v
}

func (t *tools) list(ctx context.Context, in ListInput) ([]View, error) {
	limit := in.Limit
	if limit == 0 {
		limit = 20
	}
	as, err := t.store.List(ctx, Filter{State: in.State, Limit: limit})
	if err != nil {
		return nil, toolFailure(err)
	}
	out := make([]View, len(as))
	for i, a := range as {
		out[i] = view(a, false)
	}
	return out, nil
}

func (t *tools) show(ctx context.Context, in IDInput) (View, error) {
	a, err := t.store.Get(ctx, in.ID)
	if err != nil {
		return View{}, toolFailure(err)
	}
	return view(a, true), nil
}

func (t *tools) approve(ec *execution.Context, in DecisionInput) (View, error) {
	a, err := t.store.Approve(ec, in.ID, ec.Principal(), in.Note)
	if err != nil {
		return View{}, toolFailure(err)
	}
	return view(a, false), nil
}

func (t *tools) reject(ec *execution.Context, in DecisionInput) (View, error) {
	a, err := t.store.Reject(ec, in.ID, ec.Principal(), in.Note)
	if err != nil {
		return View{}, toolFailure(err)
	}
	return view(a, false), nil
}

// toolFailure maps store errors to canonical failures with caller-safe
// messages; anything unexpected stays an internal failure (logged, not
// shown).
func toolFailure(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return execution.Fail(execution.NotFound, "no approval with this id", nil).WithReason(ReasonNotFound)
	case errors.Is(err, ErrSelfApproval):
		return execution.Fail(execution.Forbidden, "a requester cannot decide their own approval", nil).WithReason(ReasonSelfDecision)
	case errors.As(err, new(*IdentityError)):
		// The caller's own identity: an identity mapper produced an id or
		// issuer approvals refuse (CheckIdentity).
		return execution.Fail(execution.Forbidden, "the caller's principal id or issuer contains characters approvals refuse (control characters, invisible characters or surrounding spaces)", nil).WithReason(ReasonNotAuthorized)
	case errors.Is(err, ErrNotAuthorized):
		return execution.Fail(execution.Forbidden, "the caller may not decide approvals", nil).WithReason(ReasonNotAuthorized)
	case errors.Is(err, ErrNotPending):
		return execution.Fail(execution.Conflict, "the approval is no longer pending", nil).WithReason(ReasonNotPending)
	case errors.Is(err, ErrExpired):
		return execution.Fail(execution.Conflict, "the approval has expired", nil).WithReason(ReasonExpired)
	}
	return err
}
