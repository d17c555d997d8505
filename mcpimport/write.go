package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/canonjson"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// WriteBinding is the host's explicit authorization of one remote tool that
// writes. Every field but Description and Scopes is required; nothing the
// remote server says (annotations included) stands in for any of them.
type WriteBinding struct {
	// Name is the local capability name.
	Name string
	// Title is published as the tool's title and shown to approvers.
	Title string
	// Effect is the declared effect: [approval.EffectWrite] or
	// [approval.EffectDestructive]. Every call of a write tool needs a
	// durable approval ([ModeConfirm]); there is no other mode to choose.
	Effect approval.Effect
	// Description, when set, is published instead of the remote one.
	Description string
	// Scopes are the local scopes a caller must hold.
	Scopes []string
	// ScopeValidator checks each call against the current scope. It is
	// mandatory for writes, and runs twice: when the call is made (before an
	// approval is prepared) and again just before dispatch, so that a scope
	// revoked in between refuses the call.
	ScopeValidator ScopeValidator
	// BindingID and BindingRevision name the host's binding configuration.
	BindingID, BindingRevision string
	// ScopeID and ScopeRevision name the scope that authorizes the write.
	ScopeID, ScopeRevision string
	// Profile, as for reads ([Binding.Profile]).
	Profile Profile
}

// WriteOptions configures [DiscoverWrites].
type WriteOptions struct {
	// Limits, as for reads.
	Limits Limits
	// Logger, as for reads.
	Logger *slog.Logger
	// Approvals is the durable approval store. Required: writes are never
	// dispatched without a durable, claimed approval.
	Approvals approval.Store
	// AllowAbsent, as for reads ([Options.AllowAbsent]).
	AllowAbsent bool
}

func (b *WriteBinding) check(remote string) *Error {
	switch {
	case remote == "":
		return newError(BindingInvalid, "", "a write binding has an empty remote tool name")
	case !localNamePattern.MatchString(b.Name):
		return newError(BindingInvalid, remote, "local name %q: want a letter followed by at most 31 letters, digits, '_' or '-'", b.Name)
	case b.Title == "":
		return newError(BindingInvalid, remote, "the write binding has no title")
	case b.Effect != approval.EffectWrite && b.Effect != approval.EffectDestructive:
		return newError(BindingInvalid, remote, "effect %q: want %q or %q", b.Effect, approval.EffectWrite, approval.EffectDestructive)
	case b.ScopeValidator == nil:
		return newError(BindingInvalid, remote, "a write binding needs a ScopeValidator")
	case b.BindingID == "" || b.BindingRevision == "":
		return newError(BindingInvalid, remote, "a write binding needs BindingID and BindingRevision")
	case b.ScopeID == "" || b.ScopeRevision == "":
		return newError(BindingInvalid, remote, "a write binding needs ScopeID and ScopeRevision")
	}
	return b.Profile.check(remote)
}

// DiscoverWrites is [Discover] for remote tools that write. Its snapshot has
// schema version 2: each entry adds its effect and the host's authorization
// (binding and scope, with their revisions). Write tools never run
// concurrently.
//
// A call of a registered write tool never dispatches at once. It prepares an
// approval intent from the actual call (binding identity, scope identity,
// effect, caller, a digest of the arguments, an idempotency key derived from
// those) in opts.Approvals and answers interaction_required with the
// approval's id. Once a different, authorized principal approves it, the
// same call (same caller, same arguments) claims the approval exactly once,
// checks the scope validator and the current registration identity again,
// dispatches one tools/call, and records a receipt with an honest effect
// state: committed (a validated success), not_started (refused before
// sending) or unknown (anything after sending that is not a validated
// success). Later repeats of the call return the recorded receipt and never
// dispatch again.
//
// The registration's identity for approvals is the complete write catalog:
// its binding revision is the snapshot's digest, so after a rediscovery that
// changes anything, approvals given for the old catalog no longer dispatch.
func DiscoverWrites(ctx context.Context, sess *Session, bindings map[string]WriteBinding, opts *WriteOptions) (*Catalog, error) {
	var o WriteOptions
	if opts != nil {
		o = *opts
	}
	if o.Approvals == nil {
		return nil, newError(BindingInvalid, "", "DiscoverWrites needs WriteOptions.Approvals: writes are only dispatched after a durable approval")
	}
	var errs []error
	sels := make([]selection, 0, len(bindings))
	for _, remote := range slices.Sorted(maps.Keys(bindings)) {
		b := bindings[remote]
		if e := b.check(remote); e != nil {
			errs = append(errs, e)
			continue
		}
		sels = append(sels, selection{
			remote: remote,
			entry: Entry{
				Name: b.Name, Title: b.Title, Mode: ModeConfirm, Effect: b.Effect, Profile: b.Profile,
				Authorization: &Authorization{BindingID: b.BindingID, BindingRevision: b.BindingRevision, ScopeID: b.ScopeID, ScopeRevision: b.ScopeRevision},
			},
			description: b.Description,
			scopes:      slices.Clone(b.Scopes),
			validator:   b.ScopeValidator,
		})
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return discover(ctx, sess, sels, Options{Limits: o.Limits, Logger: o.Logger, AllowAbsent: o.AllowAbsent}, WriteSnapshotSchemaVersion, o.Approvals)
}

// approvalBinding is the identity approvals of this tool are bound to, when
// registered as capability identity.
func (t *tool) approvalBinding(identity string) approval.Binding {
	a := t.entry.Authorization
	return approval.Binding{
		Tool:          identity,
		ID:            a.BindingID,
		Revision:      t.cat.snap.digest, // the complete write catalog, not the host's own revision
		ScopeID:       a.ScopeID,
		ScopeRevision: a.ScopeRevision,
		Effect:        t.entry.Effect,
	}
}

// writeHandler returns the handler of a write tool registered as identity.
func (t *tool) writeHandler(identity string) func(*execution.Context, json.RawMessage) (execution.Result, error) {
	return func(ec *execution.Context, args json.RawMessage) (execution.Result, error) {
		return t.write(ec, identity, args)
	}
}

// writeFailure is failure(reason) with the approval's id and, when known,
// the effect state in its details. A write call fails with the call reasons
// and with the approval reasons of package approval (approval.ReasonPending,
// ReasonRejected, ReasonInProgress, ReasonBindingChanged,
// ReasonUnavailable).
func writeFailure(reason execution.Reason, a *approval.Approval, effect approval.EffectState) *execution.Failure {
	f := failure(reason)
	f.Details = map[string]any{}
	if a != nil {
		f.Details["approval_id"] = a.ID
	}
	if effect != "" {
		f.Details["effect"] = string(effect)
	}
	return f
}

// write is the handler of a write tool: prepare, or claim and dispatch, or
// return the receipt.
func (t *tool) write(ec *execution.Context, identity string, args json.RawMessage) (execution.Result, error) {
	c := t.cat
	gen := c.valid.Load().gen // the answer counts only if the catalog stays valid from here on
	if code, ok := c.monitor.current(gen); !ok {
		return execution.Result{}, t.fail(ec, code, nil)
	}
	if len(args) > c.limits.ObjectBytes {
		return execution.Result{}, t.fail(ec, ReasonInvalidArguments, nil)
	}
	caller := ec.Principal() // identified: the identifiedCaller policy ran first
	if err := t.sel.validator(ec, caller, args); err != nil {
		if ec.Err() != nil {
			return execution.Result{}, ec.Err()
		}
		return execution.Result{}, t.fail(ec, ReasonScopeDenied, err)
	}
	digest, err := execution.ArgumentsDigest(args)
	if err != nil {
		return execution.Result{}, t.fail(ec, ReasonInvalidArguments, err)
	}
	binding := t.approvalBinding(identity)
	key, err := idempotencyKey(binding, caller, digest)
	if err != nil {
		return execution.Result{}, t.fail(ec, approval.ReasonUnavailable, err)
	}
	intent := approval.Intent{
		Binding:         binding,
		PrincipalID:     caller.ID(),
		PrincipalIssuer: caller.Issuer(),
		Arguments:       args,
		ArgumentsDigest: digest,
		IdempotencyKey:  key,
		Summary:         t.entry.Title,
		Description:     approvalDescription(t.entry.Description),
		Server:          t.cat.snap.serverID,
		Credential:      t.cat.credential,
	}
	a, err := c.store.Prepare(ec, intent)
	if err != nil {
		return execution.Result{}, t.fail(ec, approval.ReasonUnavailable, err)
	}
	switch a.State {
	case approval.StatePending:
		return execution.Result{}, writeFailure(approval.ReasonPending, &a, "")
	case approval.StateRejected:
		return execution.Result{}, writeFailure(approval.ReasonRejected, &a, "")
	case approval.StateClaimed:
		if heldClaim(ec) == a.ID {
			return t.dispatch(ec, intent, args, a, true)
		}
		return t.awaitReceipt(ec, a)
	case approval.StateCompleted:
		return t.receipt(&a)
	case approval.StateApproved:
		// The caller's credential first: a caller who cannot have one
		// leaves the approval approved, to claim once they can.
		if code, err := c.authorized(ec, caller); code != "" || err != nil {
			switch {
			case ec.Err() != nil:
				return execution.Result{}, ec.Err()
			case code == "":
				return execution.Result{}, err
			}
			return execution.Result{}, t.fail(ec, code, err)
		}
		return t.dispatch(ec, intent, args, a, false)
	}
	return execution.Result{}, t.fail(ec, approval.ReasonUnavailable, errors.New("approval in state "+string(a.State)))
}

// awaitReceipt answers a call whose approval is claimed: when this process
// is dispatching it, the receipt follows once the dispatch gives up its
// turn; when another process holds the claim (or died holding it), the
// effect is unknown.
func (t *tool) awaitReceipt(ec *execution.Context, a approval.Approval) (execution.Result, error) {
	select {
	case t.turn <- struct{}{}:
		defer func() { <-t.turn }()
	case <-ec.Done():
		return execution.Result{}, ec.Err()
	}
	return t.receiptOrInProgress(ec, a)
}

func (t *tool) receiptOrInProgress(ec *execution.Context, a approval.Approval) (execution.Result, error) {
	cur, err := t.cat.store.Get(ec, a.ID)
	if err != nil {
		return execution.Result{}, t.fail(ec, approval.ReasonUnavailable, err)
	}
	if cur.State == approval.StateCompleted {
		return t.receipt(&cur)
	}
	return execution.Result{}, writeFailure(approval.ReasonInProgress, &cur, approval.EffectUnknown)
}

// receipt answers a repeated call from its recorded receipt.
func (t *tool) receipt(a *approval.Approval) (execution.Result, error) {
	r := a.Receipt
	if r.Effect == approval.EffectCommitted {
		out, code := t.replay(r.Result)
		if code != "" {
			return execution.Result{}, writeFailure(code, a, approval.EffectCommitted)
		}
		return out, nil
	}
	code := r.Reason
	if _, ok := callFailures[code]; !ok {
		code = ReasonProtocolError
	}
	return execution.Result{}, writeFailure(code, a, r.Effect)
}

// heldClaim is the approval this call claimed in an earlier round that
// ended asking the caller the upstream's questions (ADR 41), or "". The
// round state is the call's own, carried sealed by the adapter and bound to
// this caller, tool and arguments.
func heldClaim(ec *execution.Context) string {
	return readHeld(ec).Claimed
}

// held is the round state of a call holding a claim: the approval, and
// the upstream's questions the caller was asked.
type held struct {
	Claimed   string                   `json:"claimed"`
	Questions []execution.InputRequest `json:"questions,omitempty"`
}

func readHeld(ec *execution.Context) held {
	var st held
	if json.Unmarshal(ec.RoundState(), &st) != nil {
		return held{}
	}
	return st
}

// heldState is the round state of a call holding the claim of approval
// id, the caller asked questions.
func heldState(id string, questions []execution.InputRequest) []byte {
	b, _ := json.Marshal(held{Claimed: id, Questions: questions}) // plain values: cannot fail
	return b
}

// declinedEarlier reports whether the caller declined (or cancelled) one
// of the questions an earlier round asked: the write then ends without
// sending the call again.
func declinedEarlier(ec *execution.Context, questions []execution.InputRequest) bool {
	for _, q := range questions {
		if q.Kind != execution.Elicitation {
			continue
		}
		if a, err := ec.Relay(questionKey(q), q); err == nil && a.Action != "accept" {
			return true
		}
	}
	return false
}

// dispatch claims an approved approval (or, held, continues the claim an
// earlier round of this call took), checks again, sends the one tools/call
// and records the receipt. When the upstream asks a question the caller
// has not answered yet, nothing is recorded: the round ends asking the
// caller, the claim held for the next round (ADR 41).
func (t *tool) dispatch(ec *execution.Context, intent approval.Intent, args json.RawMessage, a approval.Approval, held bool) (execution.Result, error) {
	c := t.cat
	// One write at a time per tool.
	select {
	case t.turn <- struct{}{}:
		defer func() { <-t.turn }()
	case <-ec.Done():
		return execution.Result{}, ec.Err()
	}
	var claimed approval.Approval
	var err error
	if held {
		// The earlier round's claim: unless a round finished it meanwhile.
		claimed, err = c.store.Get(ec, a.ID)
		if err == nil && claimed.State != approval.StateClaimed {
			return t.receiptOrInProgress(ec, claimed)
		}
	} else {
		claimed, err = c.store.Claim(ec, a.ID, intent.Binding)
	}
	switch {
	case errors.Is(err, approval.ErrExpired), errors.Is(err, approval.ErrNotApproved):
		// Expired or withdrawn since Prepare looked: ask again.
		fresh, perr := c.store.Prepare(ec, intent)
		if perr != nil {
			return execution.Result{}, t.fail(ec, approval.ReasonUnavailable, perr)
		}
		return execution.Result{}, writeFailure(approval.ReasonPending, &fresh, "")
	case errors.Is(err, approval.ErrBindingChanged):
		return execution.Result{}, writeFailure(approval.ReasonBindingChanged, &a, approval.EffectNotStarted)
	case errors.Is(err, approval.ErrAlreadyClaimed):
		// Another call claimed it while this one waited its turn; it has
		// finished meanwhile unless another process holds the claim.
		return t.receiptOrInProgress(ec, a)
	case err != nil:
		return execution.Result{}, t.fail(ec, approval.ReasonUnavailable, err)
	}
	// From here on the claim is durable: whatever happens is recorded, even
	// if the caller goes away.
	record := func(r approval.Receipt) {
		ctx := context.WithoutCancel(ec)
		if done, err := c.store.Complete(ctx, claimed.ID, r); err == nil {
			claimed = done
		} else {
			c.logger.LogAttrs(ctx, slog.LevelError, "mcpimport: receipt not recorded; the claim stays held until reconciled",
				slog.String("approval_id", claimed.ID), slog.String("effect", string(r.Effect)), slog.String("error", err.Error()))
		}
	}
	// A write that stops here is not_started only if nothing was sent: a
	// held claim's earlier round sent the call, and the upstream ran up to
	// its question (and may have acted before asking, ADR 62).
	stopped := approval.EffectNotStarted
	if held {
		stopped = approval.EffectUnknown
	}
	// Checked again at the last moment: the catalog, and the current scope.
	gen := c.valid.Load().gen
	if code, ok := c.monitor.current(gen); !ok {
		record(approval.Receipt{Effect: stopped, Reason: code})
		return execution.Result{}, writeFailure(code, &claimed, stopped)
	}
	if err := t.sel.validator(context.WithoutCancel(ec), ec.Principal(), args); err != nil {
		record(approval.Receipt{Effect: stopped, Reason: ReasonScopeDenied})
		t.fail(ec, ReasonScopeDenied, err)
		return execution.Result{}, writeFailure(ReasonScopeDenied, &claimed, stopped)
	}

	if held && declinedEarlier(ec, readHeld(ec).Questions) {
		// The caller said no to the upstream's question: the call is not
		// sent again. The earlier round's call ended when it asked, but
		// what it did before asking is not known: unknown (ADR 62).
		record(approval.Receipt{Effect: approval.EffectUnknown, Reason: ReasonQuestionDeclined})
		return execution.Result{}, writeFailure(ReasonQuestionDeclined, &claimed, approval.EffectUnknown)
	}
	ctx, cancel := context.WithTimeout(ec, c.limits.CallTimeout)
	defer cancel()
	q := &asker{ec: ec, limits: c.limits}
	ctx, done := withAsker(ctx, c.session, q)
	defer done()
	params := &mcp.CallToolParams{Name: t.entry.RemoteName, Arguments: args}
	if c.snap.protocolVersion >= modernRevision {
		params.Meta = callerDeclaration(ec, false)
	}
	res, err := t.send(ctx, params)
	asked, qerr := q.outcome()
	if asked && qerr == nil && ec.Err() == nil {
		// The upstream asked and the caller has not answered: nothing is
		// recorded and the claim carries over to the next round (ADR 41).
		// Held without a receipt, it reads unknown meanwhile, as it must:
		// the call was sent.
		if serr := ec.SetRoundState(heldState(claimed.ID, q.waiting())); serr != nil {
			record(approval.Receipt{Effect: approval.EffectUnknown, Reason: ReasonQuestionRefused})
			return execution.Result{}, writeFailure(ReasonQuestionRefused, &claimed, approval.EffectUnknown)
		}
		return execution.Result{}, execution.ErrInputRequired
	}
	var code execution.Reason
	switch {
	case qerr != nil && ec.Err() == nil:
		code = ReasonQuestionRefused
	case ec.Err() != nil:
		code = ReasonTransportError // the caller went away: the request was sent, the outcome is unknown
		if errors.Is(ec.Err(), context.DeadlineExceeded) {
			code = ReasonTimeout
		}
	case err != nil:
		code = classify(ctx, err)
		if credentialReason(err) != "" {
			// The host's transport refused before sending: nothing left.
			record(approval.Receipt{Effect: stopped, Reason: code})
			t.fail(ec, code, err)
			return execution.Result{}, writeFailure(code, &claimed, stopped)
		}
	default:
		if cur, ok := c.monitor.current(gen); !ok {
			code = cur
		}
	}
	var out execution.Result
	if code == "" {
		out, code = t.project(res)
		err = resultError(res, code)
	}
	// Every failure once the request left is unknown, error answers
	// included: -32021 (the caller cannot answer the tool's questions,
	// ReasonQuestionRefused by classify) comes from the tool's handler,
	// which may have acted before it checked (ADR 62).
	if code != "" {
		record(approval.Receipt{Effect: approval.EffectUnknown, Reason: code})
		t.fail(ec, code, err)
		if ec.Err() != nil {
			return execution.Result{}, ec.Err()
		}
		return execution.Result{}, writeFailure(code, &claimed, approval.EffectUnknown)
	}
	record(approval.Receipt{Effect: approval.EffectCommitted, Result: receiptResult(res)})
	return out, nil
}

// idempotencyKey identifies "the same call": the same registration identity,
// caller and arguments. The caller is the same caller (policy.Principal.Key)
// as its issuer and id, two strings of the digested JSON list, which keeps
// them apart as the key does: the stored keys of approvals prepared before
// the key existed stay the same (ADR 0058).
func idempotencyKey(b approval.Binding, caller policy.Principal, argsDigest string) (string, error) {
	doc, err := json.Marshal([]string{"agnara.write-call/v1", b.Tool, b.ID, b.Revision, b.ScopeID, b.ScopeRevision, string(b.Effect), caller.Issuer(), caller.ID(), argsDigest})
	if err != nil {
		return "", err
	}
	return canonjson.Digest(doc)
}

// registerWrite registers one write tool.
func (t *tool) registerWrite(app *agnara.App) *agnara.Capability {
	desc := t.publishedDescription()
	var ann agnara.Annotations
	if t.entry.Effect == approval.EffectDestructive {
		ann = agnara.Destructive
	}
	identity := app.Name() + "." + t.entry.Name
	return app.Capability(t.writeHandler(identity), &agnara.CapabilityOptions{
		Name:         t.entry.Name,
		Title:        t.entry.Title,
		Description:  desc,
		Scopes:       slices.Clone(t.sel.scopes),
		InputSchema:  json.RawMessage(t.entry.InputSchema),
		OutputSchema: t.outputSchema(),
		Annotations:  ann,
		Policies:     []policy.Policy{policy.Func(t.identifiedCaller)},
	})
}

// identifiedCaller is the policy of every write tool: approvals need to
// know who asked (self-approval is refused), so an anonymous caller is
// refused before anything else of its call happens, the input included.
// Being a policy, it is also what the compile sees guarding a destructive
// write bound without scopes (ADR 57): anyone identified may ask, and the
// approval of another, authorized person decides whether it runs.
func (t *tool) identifiedCaller(ctx context.Context, req policy.Request) error {
	if req.Principal.IsAnonymous() {
		return t.fail(ctx, ReasonScopeDenied, errors.New("anonymous callers cannot request writes"))
	}
	return nil
}

// receiptResult is what a committed receipt records of the remote result:
// the result as the remote sent it (it was validated when it arrived).
// Repeated calls project it again ([tool.replay]), so that they answer
// exactly as the dispatch did.
func receiptResult(res *mcp.CallToolResult) json.RawMessage {
	b, err := json.Marshal(res)
	if err != nil {
		return nil // it decoded from JSON a moment ago; replay then fails closed
	}
	return b
}

// replay projects the result a committed receipt recorded. Receipts
// recorded before results carried content blocks hold the old envelope,
// {"text": [...], "structured": ...}, read here as its text blocks and
// structured content.
func (t *tool) replay(raw json.RawMessage) (execution.Result, execution.Reason) {
	var shape struct {
		Content    json.RawMessage `json:"content"`
		Text       []string        `json:"text"`
		Structured json.RawMessage `json:"structured"`
	}
	if json.Unmarshal(raw, &shape) != nil {
		return execution.Result{}, ReasonResultInvalid
	}
	if shape.Content == nil && shape.Text != nil {
		out := execution.Result{Content: make([]execution.Content, 0, len(shape.Text))}
		for _, s := range shape.Text {
			out.Content = append(out.Content, execution.Text{Text: s})
		}
		if len(shape.Structured) > 0 && string(shape.Structured) != "null" {
			out.Structured = slices.Clone(shape.Structured)
		}
		return out, ""
	}
	var res mcp.CallToolResult
	if json.Unmarshal(raw, &res) != nil {
		return execution.Result{}, ReasonResultInvalid
	}
	return t.project(&res)
}

// approvalDescription is the tool's description as approvers read it, as
// text a store records: without NUL, and cut at a character boundary to
// approval.MaxDescription (a host may allow longer descriptions).
func approvalDescription(d string) string {
	d = strings.ReplaceAll(strings.ToValidUTF8(d, "\uFFFD"), "\x00", "")
	if len(d) <= approval.MaxDescription {
		return d
	}
	cut := approval.MaxDescription
	for cut > 0 && !utf8.RuneStart(d[cut]) {
		cut--
	}
	return d[:cut]
}
