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

	"github.com/agnara-go/agnara/policy"
)

// Invocation is one request to run a plan, as an adapter received it.
type Invocation struct {
	// Principal is the caller. The zero value is the anonymous principal.
	Principal policy.Principal
	// Arguments is the JSON object of arguments, unvalidated. Empty or
	// "null" means no arguments (an empty object).
	Arguments json.RawMessage
	// Confirmation is evidence that the caller confirmed this invocation,
	// for capabilities that require confirmation. Only trusted adapter code
	// sets it, after verifying it came from an earlier round of the same
	// request; nil means no evidence.
	Confirmation *policy.Confirmation
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
	// question before a handler sees them.
	Answers map[string]Answer
	// Supports reports whether the caller can answer questions of a kind
	// (for MCP, the client's declared capabilities). Nil means every kind.
	Supports func(InputKind) bool
	// Timeout, when positive, bounds this invocation like the capability's
	// own Timeout: when it passes, the outcome is a Timeout failure. The
	// shorter of the two applies. Adapters use it for a server-wide limit.
	Timeout time.Duration
}

// errPlanTimeout is the cancellation cause of a plan's own deadline.
var errPlanTimeout = errors.New("execution: capability timeout")

// Invoke runs the plan for one invocation, in this order:
//
//  1. scope guard: every declared scope must be held, else Forbidden;
//  2. input: validation against the input schema (every violation is
//     reported), then strict decoding, else InvalidInput;
//  3. policies, in order, then the confirmation check;
//  4. dependencies, built for this invocation;
//  5. the handler, under the plan's deadline.
//
// No dependency is built and the handler does not run unless every earlier
// step passed. Per-invocation dependencies are cleaned up in reverse order of
// construction on every path before Invoke returns.
//
// Invoke returns an [Outcome] for everything the caller should be told:
// success, a deliberate failure, a refusal, a [Timeout] when the plan's own
// deadline passed, and an [InternalFailure] (with a fixed message, the cause
// logged at error level) for any other error or a panic. It returns a
// non-nil error, and no outcome, only when ctx ended first (the caller
// cancelled or its own deadline passed): there is no one left to answer.
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
	out, err := p.invoke(ctx, inv)
	p.logFinished(ctx, inv, out, err, time.Since(start))
	return out, err
}

func (p *Plan) invoke(ctx context.Context, inv *Invocation) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !p.scopeC.Allows(inv.Principal, p.scopes) {
		return &Failure{
			Code:    Forbidden,
			Message: "the caller lacks a scope this capability requires",
			Details: map[string]any{"required_scopes": append([]string(nil), p.scopes...)},
		}, nil
	}

	args := NormalizeArguments(inv.Arguments)
	if f := validateArguments(p.validator, args); f != nil {
		return f, nil
	}
	var in reflect.Value
	switch p.sig.input {
	case structInput:
		v, f := decodeStrict(args, p.sig.inType)
		if f != nil {
			return f, nil
		}
		in = v
	case rawInput:
		in = reflect.ValueOf(json.RawMessage(bytes.Clone(args)))
	}

	timeout := p.timeout
	if inv.Timeout > 0 && (timeout == 0 || inv.Timeout < timeout) {
		timeout = inv.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, timeout, errPlanTimeout)
		defer cancel()
	}
	ec := &Context{ctx: ctx, plan: p, principal: inv.Principal, progress: inv.Progress, logHandler: inv.LogHandler, timeout: timeout}
	ec.inter.answers = inv.Answers
	ec.inter.supports = inv.Supports
	return p.run(ec, inv, args, in)
}

// run evaluates policies, resolves dependencies and calls the handler,
// turning a panic anywhere in them into an internal failure.
func (p *Plan) run(ec *Context, inv *Invocation, args json.RawMessage, in reflect.Value) (out Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			p.logger.LogAttrs(ec.ctx, slog.LevelError, "capability panicked",
				slog.String("capability", p.identity),
				slog.Any("panic", r),
				slog.String("stack", string(debug.Stack())))
			out, err = internal(), nil
		}
	}()

	if len(p.policies) > 0 || p.confirm != "" {
		end := p.stage(ec, "policy")
		out, err := p.checkPolicies(ec, inv, args, in)
		end(out, err)
		if out != nil || err != nil {
			return out, err
		}
	}

	callArgs := make([]reflect.Value, p.nargs)
	switch p.sig.ctx {
	case stdContext:
		// Hand reflect a value already of interface type, so that Call
		// does not check *Context against context.Context every time.
		ctx := context.Context(ec)
		callArgs[0] = reflect.ValueOf(&ctx).Elem()
	case execContext:
		callArgs[0] = reflect.ValueOf(ec)
	}
	if in.IsValid() {
		callArgs[p.sig.firstDep-1] = in
	}
	if p.recipe != nil {
		end := p.stage(ec, "dependencies")
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

	end := p.stage(ec, "handler")
	results := p.fn.Call(callArgs)
	var herr error
	if last := results[len(results)-1]; !last.IsNil() {
		herr = last.Interface().(error)
	}
	end(nil, herr)
	if herr != nil {
		if errors.Is(herr, ErrInputRequired) && len(ec.inter.requests()) > 0 {
			return inputRequired(ec), nil
		}
		return p.classify(ec, "handler", herr)
	}
	if dl, ok := ec.ctx.Deadline(); ok && ec.ctx.Err() != nil {
		p.logger.LogAttrs(ec.ctx, slog.LevelWarn, "capability returned after its deadline",
			slog.String("capability", p.identity), slog.Duration("overrun", time.Since(dl)))
	}
	switch {
	case p.sig.content:
		cs, _ := results[0].Interface().([]Content)
		return Success{Content: cs}, nil
	case p.sig.out != nil:
		return Success{Value: results[0].Interface()}, nil
	}
	return Success{}, nil
}

// checkPolicies runs the policies and the confirmation check; it returns an
// outcome or error to end the invocation with, or nothing to go on.
func (p *Plan) checkPolicies(ec *Context, inv *Invocation, args json.RawMessage, in reflect.Value) (Outcome, error) {
	req := policy.Request{Principal: inv.Principal, Capability: p.identity}
	if in.IsValid() {
		req.Input = in.Interface()
	}
	for _, pol := range p.policies {
		if perr := pol.Evaluate(ec, req); perr != nil {
			return p.classify(ec, "policy", perr)
		}
	}
	if p.confirm != "" {
		if inv.Confirmation == nil {
			_ = ec.inter.ask(ConfirmKey, InputRequest{Kind: Elicitation, Message: p.confirm, Schema: bytes.Clone(confirmSchema)})
			return inputRequired(ec), nil
		}
		digest, derr := ArgumentsDigest(args)
		if derr != nil {
			return p.classify(ec, "confirmation", derr)
		}
		if verr := p.verifier.VerifyConfirmation(ec, req, digest, *inv.Confirmation); verr != nil {
			return p.classify(ec, "confirmation", verr)
		}
	}
	return nil, nil
}

// stage starts an observed stage; the returned function ends it. Without an
// observer it does nothing and allocates nothing.
func (p *Plan) stage(ec *Context, name string) func(Outcome, error) {
	if p.observer == nil {
		return noStage
	}
	parent := ec.ctx
	ctx, done := p.observer.Stage(parent, p.identity, name)
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

// inputRequired is the outcome of an invocation that asked questions.
func inputRequired(ec *Context) *Failure {
	return &Failure{
		Code:    InteractionRequired,
		Message: "input required",
		Details: map[string]any{"requests": ec.inter.requests()},
	}
}

// InputRequests returns the questions an InteractionRequired failure
// carries, keyed, or nil.
func InputRequests(f *Failure) map[string]InputRequest {
	if f == nil || f.Code != InteractionRequired {
		return nil
	}
	r, _ := f.Details["requests"].(map[string]InputRequest)
	return r
}

// classify turns an error from a policy, the confirmation verifier, a
// dependency or the handler into what the caller is told.
func (p *Plan) classify(ec *Context, stage string, err error) (Outcome, error) {
	if f, ok := AsFailure(err); ok && f.Code != InternalFailure {
		return f, nil
	}
	if ctxErr := ec.ctx.Err(); ctxErr != nil {
		if context.Cause(ec.ctx) == errPlanTimeout {
			return &Failure{
				Code:    Timeout,
				Message: fmt.Sprintf("the capability did not finish within %s", ec.timeout),
				Details: map[string]any{"timeout_ms": ec.timeout.Milliseconds()},
			}, nil
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
