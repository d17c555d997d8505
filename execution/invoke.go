package execution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/policy"
)

// Invocation is one request to run a plan, as an adapter received it.
type Invocation struct {
	// Principal is the caller. The zero value is the anonymous principal.
	// It is ignored when Admission admits a principal to this plan.
	Principal policy.Principal
	// Admission, from this plan's [Plan.Admit], is the caller already
	// admitted: the invocation runs as its principal, and the scope guard
	// is not evaluated again. An admission to another plan, or the zero
	// Admission, admits no one: Principal is checked as usual.
	Admission Admission
	// Arguments is the JSON object of arguments, unvalidated. Empty or
	// "null" means no arguments (an empty object).
	Arguments json.RawMessage
	// ArgumentsDigest is ArgumentsDigest(Arguments), when the adapter has
	// computed it already (for MCP, to bind request state); empty, it is
	// computed when a confirmation needs it. Only trusted adapter code sets
	// it, from these very Arguments.
	ArgumentsDigest string
	// Progress receives the handler's progress reports, or nil when the
	// caller cannot receive progress.
	Progress ProgressReporter
	// LogHandler, when not nil, also receives the records the handler logs
	// through [Context.Logger] (for MCP, to forward them to the client).
	LogHandler slog.Handler
	// Answers are the caller's answers to questions asked in earlier rounds
	// of this call, keyed as asked. Only trusted adapter code sets them,
	// after checking that they answer questions this call asked (for MCP,
	// through sealed request state); they are still validated against the
	// question before a handler sees them. The answer under [ConfirmKey]
	// answers the declared confirmation: it becomes the evidence the plan's
	// confirmation verifier decides on.
	Answers map[string]Answer
	// Unsolicited are answers the caller sent that no question of this
	// call vouched for (for MCP at 2026-07-28: inputResponses without
	// requestState, or under keys the sealed state did not ask). They may
	// answer a question the handler asks with [Ask], [Context.Sample] or
	// [Context.Roots] in this round — data the caller could as well have
	// given when asked, validated the same way — and never a confirmation
	// (the declared one or [Context.Confirm]): a confirmation counts only
	// as the answer to a question the caller was shown (ADR 0023). An
	// answer in Answers wins over one under the same key here.
	Unsolicited map[string]Answer
	// RoundState is the state the previous round of this call kept
	// ([InputRequired].RoundState), handed back to the handler
	// ([Context.RoundState]). Only trusted adapter code sets it, from state
	// it carried itself, out of the caller's reach (for MCP, sealed in the
	// requestState). Nil in a call's first round.
	RoundState []byte
	// Supports reports whether the caller can answer questions of a kind
	// (for MCP, the client's declared capabilities). Nil means every kind.
	Supports func(InputKind) bool
	// URLDone, when not nil, tells the caller that the out-of-band
	// interaction of the URL question asked under key has finished
	// ([Context.URLDone]; for MCP at 2025-11-25, the
	// notifications/elicitation/complete of the question's elicitation
	// id). Nil when the caller's protocol has no such notice. It is called
	// while the invocation runs, on the goroutine that called URLDone (a
	// relaying capability may call it from another than the handler's),
	// and must not block for long.
	URLDone func(key string)
	// Timeout, when positive, bounds this invocation like the capability's
	// own Timeout: when it passes, the outcome is a Timeout failure. The
	// shorter of the two applies. Adapters use it for a server-wide limit.
	Timeout time.Duration
	// RateLimit, when not zero, is the rate limit of a plan that declares
	// none of its own (adapters use it for a server-wide default); a
	// plan's own limit wins.
	RateLimit agnara.RateLimit
	// Counted says that this invocation is a later round of one logical
	// call whose first round was already counted against its rate limit,
	// so it is not counted again (every other check runs as in any round:
	// policies decide anew). Only trusted adapter code sets it, from proof
	// that the first round ran: for MCP, a retry's valid sealed request
	// state (sealed only by a round that passed the limit), or a task's
	// later round on the instance that runs it.
	Counted bool
	// Limiter counts the calls against the rate limit. Nil means the
	// LocalLimiter of the plan's compilation, shared by every invocation
	// of its plans; adapters of several instances set a shared one (see
	// package redislimit).
	Limiter Limiter
	// Detach, when not nil, is called at most once, on the invocation's
	// goroutine, when the invocation detaches from its caller's wait: an
	// adapter that runs a capability as a long-running task answers its
	// caller then, with the task, and the invocation goes on. It is called
	// after every check (scope guard, rate limit, policies, input,
	// confirmation) has passed, just before the dependencies are built —
	// or, with DetachByHandler, only when the handler calls [Detach].
	// An invocation that ends without calling it was never detached: its
	// outcome answers the caller directly. An adapter that cannot detach
	// (it could not store the task) cancels the invocation's context: the
	// dependencies are then not built and the handler does not run, unless
	// the handler itself called [Detach] (DetachByHandler), when it must
	// check its context before acting.
	Detach func()
	// DetachByHandler leaves the moment of detaching to the handler (see
	// [Detach]), so that questions it asks first are answered in rounds of
	// the caller's own request.
	DetachByHandler bool
}

// Admission is a plan's proof that a principal holds every scope the plan
// declares, made by [Plan.Admit]. An adapter that has already checked the
// scopes (to hide a tool from callers who lack them) hands the admission to
// Invoke in [Invocation.Admission], and the scopes are not evaluated again.
// Its fields are unexported: only Admit makes one, so it cannot be forged.
// The zero Admission admits no one.
type Admission struct {
	plan      *Plan
	principal policy.Principal
}

// Admit reports whether principal holds every scope the plan declares and,
// when it does, returns its admission to this plan.
func (p *Plan) Admit(principal policy.Principal) (Admission, bool) {
	if !p.scopeC.Allows(principal, p.scopes) {
		return Admission{}, false
	}
	return Admission{plan: p, principal: principal}, true
}

// errPlanTimeout is the cancellation cause of a plan's own deadline.
var errPlanTimeout = errors.New("execution: capability timeout")

// Invoke runs the plan for one invocation, in this order:
//
//  1. scope guard: every declared scope must be held, else Forbidden;
//  2. rate limit: the call is counted against the plan's rate limit (or
//     [Invocation.RateLimit]) for this caller, before its input is read:
//     over the limit, Unavailable with reason [ReasonRateLimited] and a
//     retry hint; a limiter that cannot count, Unavailable. A later round
//     of a call already counted ([Invocation.Counted]) is not counted again;
//  3. policies, in order: a policy that needs the arguments reads them
//     through [policy.Request.Input], which validates and decodes them on
//     first use; a caller a policy denies is told Forbidden whatever it
//     sent;
//  4. input: the arguments are read once, into the document validated
//     against the input schema (every violation is reported) and into the
//     input, decoded strictly (keys match field names exactly; of a key
//     sent twice the last value counts, for both), else InvalidInput;
//  5. the confirmation check, for a capability that declares one: without
//     an answer under [ConfirmKey] the outcome is [*InputRequired]; an
//     answer that is not one is InvalidInput; otherwise the plan's
//     confirmation verifier decides;
//  6. dependencies, built for this invocation;
//  7. the handler, under the plan's deadline.
//
// No dependency is built and the handler does not run unless every earlier
// step passed. Per-invocation dependencies are cleaned up in reverse order of
// construction on every path before Invoke returns.
//
// Invoke returns an [Outcome] for everything the caller should be told:
// success, questions to ask ([*InputRequired]), a deliberate failure, a
// refusal, a [Timeout] when the plan's own deadline passed (also when a
// handler that ignored it returns success after it), and an
// [InternalFailure] (with a fixed message, the cause logged at error level)
// for any other error or a panic. It returns a non-nil error, and no
// outcome, only when ctx ended first (the caller cancelled or its own
// deadline passed): there is no one left to answer.
//
// The handler runs on the calling goroutine and Invoke returns when it
// returns, so a handler must honour its context: one that ignores
// cancellation delays Invoke, and a warning is logged when it overruns its
// deadline. inv may be nil (an anonymous call without arguments).
func (p *Plan) Invoke(ctx context.Context, inv *Invocation) (Outcome, error) {
	if inv == nil {
		inv = &Invocation{}
	}
	start := time.Now()
	principal, admitted := inv.Principal, inv.Admission.plan == p
	if admitted {
		principal = inv.Admission.principal
	}
	out, err := p.invoke(ctx, inv, principal, admitted)
	p.logFinished(ctx, principal, out, err, time.Since(start))
	return out, err
}

func (p *Plan) invoke(ctx context.Context, inv *Invocation, principal policy.Principal, admitted bool) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !admitted && !p.scopeC.Allows(principal, p.scopes) {
		return &Failure{
			Code:    Forbidden,
			Message: "the caller lacks a scope this capability requires",
			Details: map[string]any{"required_scopes": append([]string(nil), p.scopes...)},
		}, nil
	}
	if f, err := p.checkLimit(ctx, inv, principal); f != nil || err != nil {
		if err != nil {
			return nil, err
		}
		return f, nil
	}

	args := NormalizeArguments(inv.Arguments)
	timeout := p.timeout
	if inv.Timeout > 0 && (timeout == 0 || inv.Timeout < timeout) {
		timeout = inv.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errPlanTimeout)
		defer cancel()
	}
	ec := &Context{ctx: ctx, plan: p, principal: principal, progress: inv.Progress, logHandler: inv.LogHandler, timeout: timeout, detach: inv.Detach}
	ec.inter.answers = inv.Answers
	ec.inter.unsolicited = inv.Unsolicited
	ec.inter.supports = inv.Supports
	ec.inter.roundIn = inv.RoundState
	ec.inter.urlDone = inv.URLDone
	ec.in = input{plan: p, args: args}
	return p.run(ec, inv, &ec.in)
}

// input is an invocation's arguments, validated and decoded once, on first
// use: by a policy that asks for them, or before the confirmation check.
type input struct {
	plan *Plan
	args json.RawMessage
	done bool
	v    reflect.Value
	fail *Failure
}

func (in *input) get() (reflect.Value, *Failure) {
	if in.done {
		return in.v, in.fail
	}
	in.done = true
	in.v, in.fail = in.plan.readInput(in.args)
	return in.v, in.fail
}

// readInput validates args against the input schema and decodes them into
// the input: one pass over them serves both (ADR 38), checking them as it
// decodes them when the schema was derived from the input type (ADR 86).
func (p *Plan) readInput(args json.RawMessage) (reflect.Value, *Failure) {
	if p.sig.input != structInput {
		if f := validateArguments(p.validator, args); f != nil {
			return reflect.Value{}, f
		}
		if p.sig.input == rawInput {
			return reflect.ValueOf(json.RawMessage(bytes.Clone(args))), nil
		}
		return reflect.Value{}, nil
	}
	if p.onepass != nil {
		return p.onepass.decode(args)
	}
	return p.decoder.decode(args, p.validator)
}

// value is the decoded input as a policy sees it.
func (in *input) value() (any, error) {
	v, f := in.get()
	if f != nil {
		return nil, f
	}
	if !v.IsValid() {
		return nil, nil
	}
	return v.Interface(), nil
}

// run evaluates policies, decodes the input, checks the confirmation,
// resolves dependencies and calls the handler, turning a panic anywhere in
// them into an internal failure.
func (p *Plan) run(ec *Context, inv *Invocation, args *input) (out Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.logger.LogAttrs(ec.ctx, slog.LevelError, "capability panicked",
				slog.String("capability", p.identity),
				slog.Any("panic", r),
				slog.String("stack", string(debug.Stack())))
			out, err = internal(), nil
		}
	}()

	// Made only for a plan with policies or a confirmation, the ones that
	// read it: its Input, a method value, is an allocation per call.
	var req policy.Request
	if len(p.policies) > 0 || p.confirm != "" {
		req = policy.Request{Principal: ec.principal, Capability: p.identity, Input: args.value}
	}
	if len(p.policies) > 0 {
		end := p.stage(ec, agnara.StagePolicy)
		out, err := p.checkPolicies(ec, req)
		end(out, err)
		if out != nil || err != nil {
			return out, err
		}
	}
	in, f := args.get()
	if f != nil {
		return f, nil
	}
	if p.confirm != "" {
		end := p.stage(ec, agnara.StageConfirmation)
		out, err := p.checkConfirmation(ec, inv, req, args.args)
		end(out, err)
		if out != nil || err != nil {
			return out, err
		}
	}

	if inv.Detach != nil && !inv.DetachByHandler {
		ec.Detach()
		if ec.ctx.Err() != nil && context.Cause(ec.ctx) != errPlanTimeout {
			// The adapter could not detach (its task store failed) and
			// cancelled the invocation, or the caller left before it
			// could: nothing is built and the handler does not run, for no
			// one would learn what it did.
			return nil, ec.ctx.Err()
		}
	}

	var argsArray [4]reflect.Value // on the stack, for most handlers
	var callArgs []reflect.Value
	if p.nargs <= len(argsArray) {
		callArgs = argsArray[:p.nargs]
	} else {
		callArgs = make([]reflect.Value, p.nargs)
	}
	switch p.sig.ctx {
	case stdContext:
		// Hand reflect a value already of interface type, so that Call
		// does not check *Context against context.Context every time.
		ec.self = ec
		callArgs[0] = reflect.ValueOf(&ec.self).Elem()
	case execContext:
		callArgs[0] = reflect.ValueOf(ec)
	}
	if in.IsValid() {
		callArgs[p.sig.firstDep-1] = in
	}
	if p.recipe != nil {
		end := p.stage(ec, agnara.StageDependencies)
		release, rerr := p.recipe.Resolve(ec, callArgs[p.sig.firstDep:])
		defer func() {
			if cerr := release(); cerr != nil {
				p.logger.LogAttrs(ec.ctx, slog.LevelError, "dependency cleanup failed",
					slog.String("capability", p.identity), slog.Any("error", cerr))
			}
		}()
		end(nil, rerr)
		if rerr != nil {
			return p.classify(ec, "dependency", rerr)
		}
	}

	end := p.stage(ec, agnara.StageHandler)
	results := p.fn.Call(callArgs)
	var herr error
	if last := results[len(results)-1]; !last.IsNil() {
		herr = last.Interface().(error)
	}
	end(nil, herr)
	if herr != nil {
		if errors.Is(herr, ErrInputRequired) && len(ec.inter.requests()) > 0 {
			return &InputRequired{Requests: ec.inter.requests(), RoundState: ec.inter.roundState()}, nil
		}
		return p.classify(ec, "handler", herr)
	}
	if dl, ok := ec.ctx.Deadline(); ok && ec.ctx.Err() != nil {
		p.logger.LogAttrs(ec.ctx, slog.LevelWarn, "capability returned after its deadline",
			slog.String("capability", p.identity), slog.Duration("overrun", time.Since(dl)))
		if context.Cause(ec.ctx) == errPlanTimeout {
			// A success after the deadline is not answered: the caller was
			// promised an answer within it.
			return timedOut(ec), nil
		}
		return nil, ec.ctx.Err() // the caller's own deadline or cancellation
	}
	switch {
	case p.sig.result:
		r := results[0].Interface().(Result)
		cs := r.Content
		if cs == nil {
			cs = []Content{} // a content result, even without blocks
		}
		return Success{Content: cs, Structured: r.Structured}, nil
	case p.sig.content:
		cs, _ := results[0].Interface().([]Content)
		return Success{Content: cs}, nil
	case p.sig.out != nil:
		return Success{Value: results[0].Interface()}, nil
	}
	return Success{}, nil
}

// checkPolicies runs the policies in order; it returns an outcome or error
// to end the invocation with, or nothing to go on.
func (p *Plan) checkPolicies(ec *Context, req policy.Request) (Outcome, error) {
	for _, pol := range p.policies {
		if perr := pol.Evaluate(ec, req); perr != nil {
			return p.classify(ec, "policy", perr)
		}
	}
	return nil, nil
}

// checkConfirmation asks for the declared confirmation, refuses an answer
// that is not one, or hands the answer to the verifier.
func (p *Plan) checkConfirmation(ec *Context, inv *Invocation, req policy.Request, args json.RawMessage) (Outcome, error) {
	a, ok := inv.Answers[ConfirmKey]
	if !ok {
		_ = ec.inter.ask(ConfirmKey, InputRequest{Kind: Elicitation, Message: p.confirm, Schema: bytes.Clone(confirmSchema)})
		return &InputRequired{Requests: ec.inter.requests()}, nil
	}
	accepted, f := confirmationAnswer(a)
	if f != nil {
		return f, nil
	}
	digest := inv.ArgumentsDigest
	if digest == "" {
		var derr error
		if digest, derr = ArgumentsDigest(args); derr != nil {
			return p.classify(ec, "confirmation", derr)
		}
	}
	ev := policy.Confirmation{Capability: p.identity, ArgumentsDigest: digest, Accepted: accepted}
	if verr := p.verifier.VerifyConfirmation(ec, req, digest, ev); verr != nil {
		return p.classify(ec, "confirmation", verr)
	}
	return nil, nil
}

// timedOut is the failure of an invocation that ran past the plan's
// deadline.
func timedOut(ec *Context) *Failure {
	return &Failure{
		Code:    Timeout,
		Message: fmt.Sprintf("the capability did not finish within %s", ec.timeout),
		Details: map[string]any{"timeout_ms": ec.timeout.Milliseconds()},
	}
}

// stage starts an observed stage; the returned function ends it. Without an
// observer it does nothing and allocates nothing.
func (p *Plan) stage(ec *Context, stage agnara.Stage) func(Outcome, error) {
	if p.observer == nil {
		return noStage
	}
	parent := ec.ctx
	ctx, done := p.observer.Stage(parent, p.identity, stage)
	ec.ctx = ctx
	return func(out Outcome, err error) {
		ec.ctx = parent
		if err == nil {
			if f, ok := out.(*Failure); ok {
				err = f
			}
		}
		done(err)
	}
}

func noStage(Outcome, error) {}

// classify turns an error from a policy, the confirmation verifier, a
// dependency or the handler into what the caller is told.
func (p *Plan) classify(ec *Context, stage string, err error) (Outcome, error) {
	var f *Failure
	if errors.As(err, &f) && f.Code != InternalFailure {
		return f, nil
	}
	if ctxErr := ec.ctx.Err(); ctxErr != nil {
		if context.Cause(ec.ctx) == errPlanTimeout {
			return timedOut(ec), nil
		}
		return nil, ctxErr
	}
	var d *policy.Denial
	if errors.As(err, &d) {
		return &Failure{Code: Forbidden, Message: d.Error()}, nil
	}
	p.logger.LogAttrs(ec.ctx, slog.LevelError, "capability failed",
		slog.String("capability", p.identity),
		slog.String("stage", stage),
		slog.Any("error", err))
	return internal(), nil
}
