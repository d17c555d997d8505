//lint:file-ignore SA1019 logging is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; agnara-go serves it on purpose.

package mcpexpose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// callRoute is what the route that answers a call gives the call beyond
// its request, as an argument of callTool: the client's capabilities as
// the route read them, and the stream the call tells and asks on. The
// edge gives its own (edgeCaps, fastpath.go); the SDK's route gives none
// (nil), and the call then reads the request and uses the SDK's session.
type callRoute interface {
	// supports reports whether the client can be asked questions of k.
	supports(k execution.InputKind) bool
	// progress returns what reports the call's progress under token on
	// the route's stream, or nil when the route has no stream.
	progress(token any) execution.ProgressReporter
	// logs returns the handler of the call's forwarded logs, named
	// logger, on the route's stream, or nil when it has no stream.
	logs(logger string) slog.Handler
	// asker returns what asks the session's client a question on the
	// call's stream, or nil when the route asks on no session stream.
	asker() func(ctx context.Context, ss *mcp.ServerSession, ir mcp.InputRequest) (mcp.InputResponse, error)
	// urlDone sends notifications/elicitation/complete for the URL
	// elicitation id on the call's session stream and reports whether it
	// did: false when the route has no such stream.
	urlDone(id string) bool
}

// callTool runs the tools/call rec describes, req being the call as the
// route that serves it holds it: the edge's own (fastpath.go,
// handshake.go), or the SDK's, in the method middleware (middleware.go),
// each with the record as an argument, and route, what the route gives
// the call (nil for the SDK's). Both routes run it, and nothing
// else runs a call. It returns the result before the finishing each route
// does (finished, sdkFinished): a *mcp.CallToolResult, or, for a call that
// became a task, the task.
//
// In order: a withdrawn tool answers its failure; an unknown tool, a
// refused identity and a tool the caller may not see (unless
// ServerOptions.ForbiddenResult) are JSON-RPC errors, the last one naming
// the scopes it needs to the development principal only (hiddenTool);
// then the call runs
// as a task, over the handshake era's rounds, or as one 2026-07-28 round,
// observed and audited.
func (s *server) callTool(ctx context.Context, rec *record, req *mcp.CallToolRequest, route callRoute) (mcp.Result, error) {
	if rec.via != "" {
		if rec.via == searchToolName || rec.bad != nil {
			return s.callSearch(ctx, rec, req)
		}
		req = rewritten(req, rec) // call_tool: from here on, the call of the tool it names
	}
	if rec.gone != nil {
		return s.callWithdrawn(ctx, rec, req)
	}
	t := rec.tool
	if t == nil {
		return nil, unknownTool(rec.name)
	}
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	if !rec.admitted && !s.opts.ForbiddenResult {
		// A tool the caller may not see is answered exactly like one that
		// does not exist (but in development mode), and audited as refused.
		s.audit(ctx, req, t, p, labelForbidden, nil)
		if s.opts.Meter != nil {
			s.meterCall(t.name, time.Now(), labelForbidden, nil, nil)
		}
		return nil, s.hiddenTool(rec, rec.name, t.plan.Scopes())
	}
	ctx = policy.WithPrincipal(ctx, p)
	var start time.Time
	if s.opts.Meter != nil {
		start = time.Now()
	}
	var end func(agnara.Label, error)
	if obs := s.app.Observer(); obs != nil {
		ctx, end = obs.Request(ctx, s.requestInfo("tools/call", t.name, req, p))
	}
	var res *mcp.CallToolResult
	var label agnara.Label
	var created mcp.Result // a task
	switch {
	case t.task != TaskNever && s.tasks != nil && req.ProtocolVersion() >= modernVersion && declaresTasks(req.ClientCapabilities()):
		created, res, label, err = s.callTask(ctx, req, t, p, rec.adm, route)
	case t.task == TaskRequired:
		label, err = agnara.LabelError, errTasksNotDeclared("this tool")
	case req.ProtocolVersion() < modernVersion:
		res, label, err = s.legacyRounds(ctx, req, t, p, rec.adm, route)
	default:
		res, label, err = s.call(ctx, req, t, p, rec.adm, route)
	}
	if err == nil && res != nil && res.InputRequests != nil && (len(res.Content) > 0 || res.StructuredContent != nil) {
		// What the SDK refuses of a tool handler's result
		// (handleMultiRoundTripResult), refused here on either route.
		s.sdkLogger.Warn("handler returned both content and inputRequests")
		err = errBothResults
	}
	if err != nil && label != agnara.LabelCanceled {
		s.audit(ctx, req, t, p, agnara.LabelError, nil)
	} else {
		s.audit(ctx, req, t, p, label, res)
	}
	s.meterCall(t.name, start, label, res, err)
	if end != nil {
		if err != nil {
			label = labelOf(err)
		}
		end(label, err)
	}
	switch {
	case err != nil:
		return nil, err
	case created != nil:
		return created, nil
	}
	return res, nil
}

// listToolsOf answers the tools/list rec describes: the tools its caller
// may see, observed. Both routes run it.
func (s *server) listToolsOf(ctx context.Context, rec *record, req mcp.Request) (mcp.Result, error) {
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	if s.watch != nil && legacySession(req) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		s.watch.seen(ss, p)
	}
	e := s.cur.Load()
	obs := s.app.Observer()
	if obs == nil {
		return s.listTools(e, req, p)
	}
	_, end := obs.Request(ctx, s.requestInfo("tools/list", "", req, p))
	res, err := s.listTools(e, req, p)
	end(labelOf(err), err)
	return res, err
}

// handler is the SDK handler of every tool, which registering a tool with
// the SDK needs; the middleware runs every tools/call itself, so it is
// never reached.
func (s *server) handler(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, errUnrouted
}

// errUnrouted answers a tools/call that reached a tool handler without
// passing the middleware; it cannot happen while the middleware is
// installed.
var errUnrouted = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call was not routed"}

// call runs one round of a tools/call: the plan invoked as p with the
// answers the round's sealed state vouches for. It returns the result and
// the outcome's label ([execution.LabelOf]); an error means a protocol error
// (bad state) or that the caller went away.
//
// adm is p's admission to t when p holds t's scopes; otherwise (only with
// ServerOptions.ForbiddenResult) the plan's own scope guard answers.
func (s *server) call(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, adm execution.Admission, route callRoute) (*mcp.CallToolResult, agnara.Label, error) {
	var round callRound
	if err := s.openRound(ctx, req, t, p, &round); err != nil {
		return nil, "error", err // bad state: the plan is not invoked
	}
	inv := s.invocation(req, p, adm, &round, route)
	if token := req.Params.GetProgressToken(); token != nil {
		if pr := routeProgress(route, token); pr != nil {
			inv.Progress = pr
		} else if req.Session != nil {
			inv.Progress = &progress{session: req.Session, token: token}
		}
	}
	if s.opts.ForwardLogs {
		if lh := routeLogs(route, t.plan.Identity()); lh != nil {
			inv.LogHandler = lh
		} else if req.Session != nil {
			inv.LogHandler = boundHandler{h: mcp.NewLoggingHandler(req.Session, &mcp.LoggingHandlerOptions{LoggerName: t.plan.Identity()}), ctx: ctx}
		}
	}
	if req.Session != nil && req.ProtocolVersion() < modernVersion && len(round.urls) > 0 {
		// A URL question's completion, on the session whose client was
		// asked it (ADR 0078); 2026-07-28 has no such notice.
		urls := round.urls
		inv.URLDone = func(key string) {
			id := urls[key]
			if id == "" || (route != nil && route.urlDone(id)) {
				return
			}
			notifyURLDone(ctx, req.Session, id)
		}
	}
	out, err := t.plan.Invoke(ctx, &inv)
	if err != nil {
		return nil, execution.LabelOf(nil), err // the caller went away: no result to send
	}
	if ir, ok := out.(*execution.InputRequired); ok {
		res, err := s.interact(ctx, req, t, &round, ir)
		return res, execution.LabelOf(out), err
	}
	return s.result(ctx, t, out)
}

// result projects an outcome, validating a structured value against the
// tool's published output schema first, and returns its label: the
// outcome's, or internal_failure when it cannot be projected.
func (s *server) result(ctx context.Context, t *tool, out execution.Outcome) (*mcp.CallToolResult, agnara.Label, error) {
	res, err := s.project(t, out)
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelError, "tool result cannot be projected", slog.String("tool", t.name), slog.Any("error", err))
		internal := execution.Fail(execution.InternalFailure, "", nil)
		return projection.Failure(internal), execution.LabelOf(internal), nil
	}
	return res, execution.LabelOf(out), nil
}

// project turns an outcome into the tool's result.
func (s *server) project(t *tool, out execution.Outcome) (*mcp.CallToolResult, error) {
	succ, ok := out.(execution.Success)
	if ok && succ.Content != nil {
		if err := checkStructured(t, succ.Structured); err != nil {
			return nil, err
		}
	}
	if !ok || succ.Content != nil {
		return projection.Project(out)
	}
	env, err := projection.Envelope(succ.Value)
	if err != nil {
		return nil, err
	}
	if t.output != nil && !t.enforced && !t.outputProof(succ.Value).Accepts(succ.Value) {
		// The schema can reject what the type allows, and the value's
		// proof did not accept it: the one encoding, read back, is what
		// the validator judges (registry.PlanFacts.OutputEnforced says
		// when nothing a check could find; projection.Checker, when a
		// value is proved valid without the validator).
		doc, err := schemacheck.Parse(env)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", projection.ErrProjection, err)
		}
		if verr := t.output.Validate(doc); verr != nil {
			// Name where, never what: the value may hold anything.
			return nil, fmt.Errorf("%w: the value does not match the published output schema at %s", projection.ErrProjection, strings.Join(violationPaths(verr), ", "))
		}
	}
	return projection.Success(env), nil
}

// outputProof returns the Checker of values of value's type against the
// tool's published output schema, made once per type (ADR 87).
func (t *tool) outputProof(value any) *projection.Checker {
	typ := reflect.TypeOf(value)
	if c := t.proof.Load(); c != nil && c.Type() == typ {
		return c
	}
	c := projection.NewChecker(typ, t.plan.OutputSchema())
	t.proof.Store(c)
	return c
}

// checkStructured checks the structured value of an execution.Result
// against the tool's published output schema: required and valid when
// there is one, absent when there is none (nothing would describe it).
// When the capability validated it against that schema already (t.checked,
// ADR 81), only its presence is checked.
func checkStructured(t *tool, structured json.RawMessage) error {
	switch {
	case t.output == nil && structured == nil:
		return nil
	case t.output == nil:
		return fmt.Errorf("%w: structured content from a tool without an output schema", projection.ErrProjection)
	case structured == nil:
		return fmt.Errorf("%w: the tool's output schema requires structured content", projection.ErrProjection)
	case t.checked:
		return nil
	}
	doc, err := schemacheck.Parse(structured)
	if err != nil {
		return fmt.Errorf("%w: the structured content is not JSON", projection.ErrProjection)
	}
	if verr := t.output.Validate(doc); verr != nil {
		return fmt.Errorf("%w: the value does not match the published output schema at %s", projection.ErrProjection, strings.Join(violationPaths(verr), ", "))
	}
	return nil
}

// violationPaths lists the instance locations (JSON Pointers) of a
// validation error's leaves.
func violationPaths(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"?"}
	}
	var paths []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			p := "/" + strings.Join(e.InstanceLocation, "/")
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return paths
}

// progress sends progress notifications for one request.
type progress struct {
	session *mcp.ServerSession
	token   any
}

func (p *progress) ReportProgress(ctx context.Context, done, total float64, msg string) {
	// A failed notification must not fail the call: progress is advisory.
	_ = p.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Progress: done, Total: total, Message: msg})
}

// boundHandler sends records through h with the request's context, which
// carries what the SDK needs to route them (the request's stream and log
// level), whatever context the handler logged with.
type boundHandler struct {
	h   slog.Handler
	ctx context.Context
}

func (b boundHandler) Enabled(_ context.Context, l slog.Level) bool { return b.h.Enabled(b.ctx, l) }

func (b boundHandler) Handle(_ context.Context, r slog.Record) error { return b.h.Handle(b.ctx, r) }

func (b boundHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return boundHandler{h: b.h.WithAttrs(as), ctx: b.ctx}
}

func (b boundHandler) WithGroup(name string) slog.Handler {
	return boundHandler{h: b.h.WithGroup(name), ctx: b.ctx}
}

// routeProgress returns route's reporter of progress under token, or nil
// for no route or one without a stream.
func routeProgress(route callRoute, token any) execution.ProgressReporter {
	if route == nil {
		return nil
	}
	return route.progress(token)
}

// routeLogs returns route's handler of forwarded logs, or nil for no route
// or one without a stream.
func routeLogs(route callRoute, logger string) slog.Handler {
	if route == nil {
		return nil
	}
	return route.logs(logger)
}

// invocation is what every tools/call path (a direct call, a task) gives
// the plan: the caller, the arguments, the round's answers and the server's
// limits. The task path adds its progress and detaching.
//
// It is returned by value: a direct call's stays on its goroutine's stack
// (Plan.Invoke keeps no pointer to it), a task's moves to the heap with the
// task.
func (s *server) invocation(req *mcp.CallToolRequest, p policy.Principal, adm execution.Admission, round *callRound, route callRoute) execution.Invocation {
	var can func(execution.InputKind) bool
	if route != nil {
		can = route.supports // the route's reading (the edge's, memoised)
	} else {
		// The capabilities are read from _meta, which costs a re-encoding
		// in the SDK, only when the plan asks what the client supports.
		caps := sync.OnceValue(req.ClientCapabilities)
		can = func(k execution.InputKind) bool { return supports(caps(), k) }
	}
	return execution.Invocation{
		Principal:       p,
		Admission:       adm,
		Arguments:       req.Params.Arguments,
		ArgumentsDigest: round.digest,
		Timeout:         s.opts.Timeout,
		RateLimit:       s.opts.RateLimit,
		Limiter:         s.opts.Limiter,
		Answers:         round.answers,
		RoundState:      round.kept,
		Unsolicited:     round.unsolicited,
		Counted:         round.resumed,
		Supports:        can,
	}
}
