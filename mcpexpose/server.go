//lint:file-ignore SA1019 logging, sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ServerOptions configures an MCP server built from a snapshot, on any
// transport: who callers are (Identity, DevelopmentPrincipal), how calls
// run (Timeout, RateLimit, Limiter, ForbiddenResult, ForwardLogs), the
// state of calls across rounds (StateKeys, StateReplay, StateTTL,
// Audience), what is recorded (Logger, Audit), whether the catalog may
// change (Swappable) and how tasks run (Tasks). A nil *ServerOptions, a
// nil Tasks and every zero field mean the documented default.
type ServerOptions struct {
	// Identity maps a caller's verified token facts to a principal.
	// Default: [SubjectPrincipal]. Callers without a token are anonymous
	// (or DevelopmentPrincipal) and never reach the mapper.
	Identity IdentityMapper
	// Instructions are sent to clients with the server's capabilities.
	Instructions string
	// Timeout, when positive, bounds the invocation of every tools/call
	// (policies, dependencies, handler); when it passes, the caller
	// receives a "timeout" failure. A capability's own shorter Timeout
	// still applies. Identity mapping and request-state verification happen
	// before the invocation and are not covered: they must bound
	// themselves (or rely on the client's cancellation).
	Timeout time.Duration
	// RateLimit is the rate limit of every tool whose capability declares
	// none (CapabilityOptions.RateLimit wins), counted per tool and caller.
	// A call over it gets the canonical "unavailable" failure with reason
	// "rate_limited" and details.retry_after_ms. It also limits tasks/get,
	// tasks/update, tasks/cancel and completion/complete, each method
	// counted per caller apart from the calls (a JSON-RPC error carrying
	// the same failure). Default: no limit.
	RateLimit agnara.RateLimit
	// Limiter counts calls against rate limits. Default: in this process,
	// shared by every server built from one snapshot; instances behind a
	// load balancer share a Redis one (package execution/redislimit, see
	// docs/scaling.md).
	Limiter execution.Limiter
	// ForwardLogs lets records that handlers log through the execution
	// context's logger reach clients as MCP log messages, at the level each
	// client asked for (nothing to a 2026-07-28 request that did not ask).
	// It also advertises the logging capability.
	ForwardLogs bool
	// DevelopmentPrincipal, when set, is who every caller without a token
	// acts as, instead of the anonymous principal. It exists for trying an
	// application locally without an authorization server; never set it in
	// production. The server logs a warning naming the principal when it is
	// built.
	DevelopmentPrincipal *policy.Principal
	// ForbiddenResult makes a tools/call for a tool whose scopes the caller
	// lacks answer the canonical "forbidden" tool result (from the plan's
	// scope guard, naming the required scopes) instead of -32602 "unknown
	// tool", and, over HTTP with tokens, instead of the 403
	// insufficient_scope challenge. tools/list still hides such tools.
	ForbiddenResult bool
	// StateKeys seals the requestState of input-required results (see
	// package requeststate). Default: a key generated when the server is
	// built, so state does not survive a restart and is not accepted by
	// another instance: give every instance the same ring to share it.
	StateKeys *requeststate.KeyRing
	// StateReplay makes each requestState single-use. Default: in memory,
	// per process; instances sharing StateKeys must share it too.
	StateReplay requeststate.ReplayStore
	// StateTTL bounds how long a client may take to answer. Default:
	// requeststate.DefaultTTL.
	StateTTL time.Duration
	// Audience identifies this server in sealed state, so that state minted
	// for another server is refused. Default: the resource URL when the
	// handler is an OAuth resource, else the application name.
	Audience string
	// Logger receives the server's own records (refused identities,
	// projection failures). Default: the application's logger.
	Logger *slog.Logger
	// Audit, when set, receives one record per decided tools/call (see
	// [AuditSink]; [NewSlogAudit] writes them through a logger). Default:
	// none, and nothing is computed for it.
	Audit AuditSink
	// Swappable lets [Handler.Swap] replace the snapshot while clients stay
	// connected, and advertises tools.listChanged: handshake-era sessions
	// and 2026-07-28 subscriptions/listen streams are told when their
	// caller's tool list changes. Without it the list never changes and
	// none of this is offered (subscriptions/listen answers -32601).
	// [NewLive] implies it; [NewDiscoveryServer] ignores it.
	Swappable bool
	// Tasks configures the tasks of tools declared with ToolOptions.Task
	// (see docs/tasks.md): the server advertises the tasks extension when
	// the snapshot it is built with has such a tool. Default: nil, the
	// defaults of [TaskOptions].
	Tasks *TaskOptions
}

// server holds what the middleware and tool handlers of one SDK server
// share.
type server struct {
	app      *agnara.App
	cur      atomic.Pointer[epoch] // loaded once per request
	opts     ServerOptions
	invoke   bool
	logger   *slog.Logger
	mcp      *mcp.Server
	impl     *mcp.Implementation // the SDK server's, in every 2026-07-28 result
	identity IdentityMapper
	local    *policy.Principal // over stdio: the local user
	sealer   *requeststate.Sealer
	audience string
	// wire encodes the answers the edge writes itself, as the SDK would
	// (internal/wire).
	wire *wire.Encoder
	// sdkLogger is the application's logger without the SDK's per-request
	// info records (every stateless request connects a session).
	sdkLogger *slog.Logger
	// refusals limits the HTTP handler's "bearer token refused" records.
	refusals logRate

	// What swaps need (live.go, notify.go).
	watch      *watchers // nil unless Swappable
	swapMu     sync.Mutex
	registered map[string]registration // the tools the SDK server has, by name
	// regFeatures are the resources ("r:"+URI), templates ("t:"+template)
	// and prompts ("p:"+name) the SDK server has, with their digests.
	regFeatures map[string]string
	retired     []*epoch // epochs with calls still running

	// lent holds, by the verified token facts handed to the SDK, the
	// records of handshake-era requests the SDK is serving (recordOf).
	lent sync.Map

	// tasks serves the tasks extension (task.go); nil when the snapshot
	// the server was built with has no task tool.
	tasks *taskRunner
	// requests counts the requests limitRequest limits (ratelimit.go):
	// ServerOptions.Limiter, or one in this process.
	requests execution.Limiter

	// streamLifetime bounds a subscriptions/listen (streams.go): set by
	// NewHandler, 0 (none) on other transports.
	streamLifetime time.Duration
}

// levelFloor drops records below min.
type levelFloor struct {
	h   slog.Handler
	min slog.Level
}

func (f levelFloor) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= f.min && f.h.Enabled(ctx, l)
}

func (f levelFloor) Handle(ctx context.Context, r slog.Record) error { return f.h.Handle(ctx, r) }

func (f levelFloor) WithAttrs(as []slog.Attr) slog.Handler {
	return levelFloor{h: f.h.WithAttrs(as), min: f.min}
}

func (f levelFloor) WithGroup(name string) slog.Handler {
	return levelFloor{h: f.h.WithGroup(name), min: f.min}
}

// NewServer returns an SDK server that lists and invokes the snapshot's
// tools, and serves its resources, resource templates, prompts and
// completions. It advertises the tools capability, and resources, prompts
// and completions only when the snapshot has some (and logging, with
// ForwardLogs), without list-changed notifications, and answers only the
// methods of these besides the protocol's own lifecycle methods.
// Its snapshot is fixed: [NewLive] returns one that can be swapped.
// It fails, saying which, when snap is nil or an option is out of range.
func NewServer(snap *Snapshot, opts *ServerOptions) (*mcp.Server, error) {
	s, err := newServer(snap, opts, true)
	if err != nil {
		return nil, err
	}
	return s.mcp, nil
}

// NewDiscoveryServer returns an SDK server that lists the snapshot's tools
// but invokes none: tools/call answers -32601 (method not found). It fails
// as NewServer does.
func NewDiscoveryServer(snap *Snapshot, opts *ServerOptions) (*mcp.Server, error) {
	s, err := newServer(snap, opts, false)
	if err != nil {
		return nil, err
	}
	return s.mcp, nil
}

func newServer(snap *Snapshot, opts *ServerOptions, invoke bool) (*server, error) {
	return newServerFor(snap, opts, invoke, nil)
}

// checkServerOptions reports the first option that is out of range.
func checkServerOptions(o *ServerOptions) error {
	switch {
	case o.Timeout < 0:
		return fmt.Errorf("mcpexpose: negative Timeout %v", o.Timeout)
	case o.RateLimit.Validate() != nil:
		return fmt.Errorf("mcpexpose: RateLimit: %w", o.RateLimit.Validate())
	case o.StateTTL < 0 || o.StateTTL > requeststate.MaxTTL:
		return fmt.Errorf("mcpexpose: StateTTL %v must be positive and at most %v", o.StateTTL, requeststate.MaxTTL)
	}
	return o.Tasks.check()
}

func newServerFor(snap *Snapshot, opts *ServerOptions, invoke bool, local *policy.Principal) (*server, error) {
	if snap == nil {
		return nil, errors.New("mcpexpose: no snapshot: build one with Exposure.Compile")
	}
	s := &server{app: snap.app, invoke: invoke, local: local, registered: map[string]registration{}}
	s.cur.Store(newEpoch(snap))
	if opts != nil {
		s.opts = *opts
	}
	if !invoke {
		s.opts.Swappable = false // nothing to call, nothing to swap to
	}
	if err := checkServerOptions(&s.opts); err != nil {
		return nil, err
	}
	s.requests = s.opts.Limiter
	if s.requests == nil {
		lim, err := execution.NewLocalLimiter(nil)
		if err != nil {
			return nil, fmt.Errorf("mcpexpose: %w", err)
		}
		s.requests = lim
	}
	s.identity = s.opts.Identity
	if s.identity == nil {
		s.identity = SubjectPrincipal
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = snap.app.Logger()
	}
	if dp := s.opts.DevelopmentPrincipal; dp != nil {
		warn := s.logger
		if !warn.Enabled(context.Background(), slog.LevelWarn) {
			// The application logs nothing (agnara's default): this one
			// goes to the process's default logger, standard error, anyway.
			warn = slog.Default()
		}
		warn.Warn("DEVELOPMENT MODE: callers without a token act as a fixed principal; never use this in production",
			slog.String("principal", dp.ID()), slog.Any("scopes", dp.Scopes()))
	}
	ring := s.opts.StateKeys
	if ring == nil {
		key, err := requeststate.GenerateKey("k1")
		if err == nil {
			ring, err = requeststate.NewKeyRing(key)
		}
		if err != nil {
			return nil, fmt.Errorf("mcpexpose: cannot generate a request state key: %w", err)
		}
	}
	if s.opts.StateKeys != nil && s.opts.StateReplay == nil {
		// A shared ring with a per-process replay store is how several
		// instances end up accepting one state once each.
		s.logger.Warn("request state keys are shared but single use is enforced in this process only: run one instance, or set StateReplay to a shared store (see docs/scaling.md)")
	}
	sealer, err := requeststate.NewSealer(ring, &requeststate.Options{TTL: s.opts.StateTTL, Replay: s.opts.StateReplay})
	if err != nil {
		return nil, fmt.Errorf("mcpexpose: %w", err)
	}
	s.sealer = sealer
	s.audience = s.opts.Audience
	if s.audience == "" {
		s.audience = snap.app.Name()
	}
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: s.opts.Swappable}}
	if s.opts.ForwardLogs {
		caps.Logging = &mcp.LoggingCapabilities{}
	}
	sopts := &mcp.ServerOptions{
		Instructions: s.opts.Instructions,
		Capabilities: caps,
		// Only the revisions tests cover with real clients (DESIGN.md §2).
		SupportedProtocolVersions: mcpversion.Supported(),
	}
	if invoke {
		// Resources, prompts and completion (features.go): advertised only
		// when the snapshot has some; subscriptions are guarded by the
		// middleware, which the SDK's handlers then accept.
		featureCapabilities(caps, snap, s.opts.Swappable)
		if hasTaskTools(snap) {
			s.tasks = newTaskRunner(s, s.opts.Tasks)
			caps.AddExtension(TasksExtension, map[string]any{})
		}
		sopts.SubscribeHandler, sopts.UnsubscribeHandler = subscribeHandler, unsubscribeHandler
	}
	s.sdkLogger = slog.New(levelFloor{h: s.logger.Handler(), min: slog.LevelWarn})
	sopts.Logger = s.sdkLogger
	s.impl = &mcp.Implementation{Name: snap.app.Name(), Version: snap.app.Version()}
	if s.wire, err = wire.NewEncoder(s.impl); err != nil {
		return nil, fmt.Errorf("mcpexpose: the server's identity does not encode: %v", err)
	}
	s.mcp = mcp.NewServer(s.impl, sopts)
	if invoke {
		s.registerTools(snap)
		s.registerFeatures(snap)
		if s.tasks != nil {
			if err := registerTaskMethods(s.mcp); err != nil {
				return nil, fmt.Errorf("mcpexpose: %w", err)
			}
		}
	}
	s.mcp.AddReceivingMiddleware(s.middleware)
	if s.opts.Swappable {
		s.watch = newWatchers(s.mcp)
		s.mcp.AddSendingMiddleware(s.watch.filter)
	}
	return s, nil
}

// Errors answered to requests the server refuses.
var (
	errCursor = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "this server does not paginate: the first page is the whole list; send no cursor"}
	errDenied = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the caller's identity was not accepted"}
	errNoCall = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tools/call is not served here: this server is for discovery only"}
)

func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// allowedMethods are the methods the server answers; everything else is
// "method not found", so no surface the server does not mean to offer is
// reachable through the SDK's defaults.
var allowedMethods = map[string]bool{
	"initialize": true, "notifications/initialized": true, "ping": true,
	"server/discover": true, "notifications/cancelled": true,
	"tools/list": true, "tools/call": true,
}

// middleware answers tools/list itself, guards tools/call, and refuses
// methods the server does not offer.
func (s *server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			rec, release := s.recordOf(ctx, method, req)
			defer release()
			return s.listToolsOf(ctx, rec, req)
		case "tools/call":
			if !s.invoke {
				return nil, errNoCall
			}
			cr, _ := req.(*mcp.CallToolRequest)
			if cr == nil || cr.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}
			}
			rec, release := s.recordOf(ctx, method, req)
			defer release()
			// The SDK runs the tool's handler (handler), which runs the
			// call, and finishes its result; a call that became a task
			// comes back as the one answer a tool handler cannot return.
			res, err := next(withRecord(ctx, rec), method, req)
			var tc *taskCreated
			if errors.As(err, &tc) {
				return tc.result, nil
			}
			return res, err
		case "resources/list", "resources/templates/list", "resources/read",
			"resources/subscribe", "resources/unsubscribe",
			"prompts/list", "prompts/get", "completion/complete":
			return s.serveFeature(ctx, method, req, next)
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
			if s.tasks != nil {
				return s.serveTask(ctx, method, req)
			}
		case "logging/setLevel":
			if s.opts.ForwardLogs {
				return next(ctx, method, req)
			}
		case "initialize":
			if s.watch != nil {
				if p, err := s.callerOf(ctx, method, req); err == nil {
					ss, _ := req.GetSession().(*mcp.ServerSession)
					s.watch.seen(ss, p)
				}
			}
			return next(ctx, method, req)
		case "subscriptions/listen":
			// The 2026-07-28 way to hear of changes; only a server whose
			// list can change, or that has resources to subscribe to,
			// offers it. A handshake-era session hears of them on its GET
			// stream: a listen of its own would park a handler that its
			// client's going away does not end (streams.go).
			if !legacySession(req) && (s.watch != nil || (s.invoke && s.cur.Load().snap.offers("resources/read"))) {
				p, err := s.callerOf(ctx, method, req)
				if err != nil {
					return nil, err
				}
				if err := s.checkListen(req, p); err != nil {
					return nil, err
				}
				if s.watch != nil {
					ss, _ := req.GetSession().(*mcp.ServerSession)
					s.watch.seen(ss, p)
					defer s.watch.forget(ss)
				}
				ctx, cancel := s.boundListen(ctx, req)
				defer cancel()
				return next(ctx, method, req)
			}
		default:
			if allowedMethods[method] {
				return next(ctx, method, req)
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not offered by this server", method)}
	}
}

// requestInfo describes a request for the application's observer.
func (s *server) requestInfo(method, tool string, req mcp.Request, p policy.Principal) agnara.RequestInfo {
	info := agnara.RequestInfo{Method: method, Tool: tool, PrincipalID: p.ID()}
	// Params may be a typed nil (a legacy tools/list sends none).
	switch params := req.GetParams().(type) {
	case *mcp.ListToolsParams:
		if params != nil {
			info.Meta = params.Meta
		}
	case *mcp.CallToolParamsRaw:
		if params != nil {
			info.Meta = params.Meta
		}
	}
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		info.ProtocolVersion = r.ProtocolVersion()
	case *mcp.ListToolsRequest:
		info.ProtocolVersion = r.ProtocolVersion()
	}
	return info
}

// labelOf is the label of a request whose result needs no further naming:
// answered, or refused with a protocol error.
func labelOf(err error) agnara.Label {
	if err != nil {
		return agnara.LabelError
	}
	return agnara.LabelOK
}

// principalOf maps verified token facts; nil means anonymous.
func (s *server) principalOf(ctx context.Context, ti *auth.TokenInfo) (policy.Principal, error) {
	if ti == nil {
		switch {
		case s.local != nil:
			return *s.local, nil
		case s.opts.DevelopmentPrincipal != nil:
			return *s.opts.DevelopmentPrincipal, nil
		}
		return policy.Anonymous(), nil
	}
	p, err := s.identity(ctx, identityOf(ti))
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelWarn, "identity mapper refused a caller", slog.Any("error", err))
		return policy.Principal{}, errDenied
	}
	return p, nil
}

// legacySession reports whether req came on a handshake-era session, which
// hears of list changes without asking.
func legacySession(req mcp.Request) bool {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion < modernVersion
}

// listTools answers tools/list for p from e: the tools p may see, in one
// page.
func (s *server) listTools(e *epoch, req mcp.Request, p policy.Principal) (mcp.Result, error) {
	if params, _ := req.GetParams().(*mcp.ListToolsParams); params != nil && params.Cursor != "" {
		return nil, errCursor
	}
	visible := e.snap.visible(p)
	res := &mcp.ListToolsResult{Tools: make([]*mcp.Tool, len(visible))}
	for i, t := range visible {
		res.Tools[i] = t.listed(req)
	}
	res.TTLMs = 0
	res.CacheScope = "public"
	if e.private {
		res.CacheScope = "private"
	}
	return res, nil
}

// call runs one round of a tools/call: the plan invoked as p with the
// answers the round's sealed state vouches for. It returns the result and
// the outcome's label ([execution.LabelOf]); an error means a protocol error
// (bad state) or that the caller went away.
//
// adm is p's admission to t when p holds t's scopes; otherwise (only with
// ServerOptions.ForbiddenResult) the plan's own scope guard answers.
func (s *server) call(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, adm execution.Admission) (*mcp.CallToolResult, agnara.Label, error) {
	round, err := s.openRound(ctx, req, t, p)
	if err != nil {
		return nil, "error", err // bad state: the plan is not invoked
	}
	inv := s.invocation(req, p, adm, round)
	if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
		inv.Progress = &progress{session: req.Session, token: token}
	}
	if s.opts.ForwardLogs && req.Session != nil {
		inv.LogHandler = boundHandler{h: mcp.NewLoggingHandler(req.Session, &mcp.LoggingHandlerOptions{LoggerName: t.plan.Identity()}), ctx: ctx}
	}
	out, err := t.plan.Invoke(ctx, inv)
	if err != nil {
		return nil, execution.LabelOf(nil), err // the caller went away: no result to send
	}
	if ir, ok := out.(*execution.InputRequired); ok {
		res, err := s.interact(ctx, req, t, round, ir.Requests)
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
		return failureResult(internal), execution.LabelOf(internal), nil
	}
	return res, execution.LabelOf(out), nil
}

// project turns an outcome into the tool's result.
func (s *server) project(t *tool, out execution.Outcome) (*mcp.CallToolResult, error) {
	succ, ok := out.(execution.Success)
	if !ok || succ.Content != nil {
		return ProjectResult(out)
	}
	if t.output == nil || t.enforced {
		// Nothing to check, or nothing a check could find: the value's
		// type guarantees its schema (execution.Plan.OutputEnforced).
		env, err := encodeEnvelopeOnce(succ.Value)
		if err != nil {
			return nil, err
		}
		return successResult(env), nil
	}
	env, doc, err := encodeEnvelope(succ.Value)
	if err != nil {
		return nil, err
	}
	{
		if verr := t.output.Validate(doc); verr != nil {
			// Name where, never what: the value may hold anything.
			return nil, fmt.Errorf("%w: the value does not match the published output schema at %s", errProjection, strings.Join(violationPaths(verr), ", "))
		}
	}
	return successResult(env), nil
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

// invocation is what every tools/call path (a direct call, a task) gives
// the plan: the caller, the arguments, the round's answers and the server's
// limits. The task path adds its progress and detaching.
func (s *server) invocation(req *mcp.CallToolRequest, p policy.Principal, adm execution.Admission, round *callRound) *execution.Invocation {
	// The capabilities are read from _meta, which costs a re-encoding in
	// the SDK, only when the plan asks what the client supports.
	caps := sync.OnceValue(req.ClientCapabilities)
	return &execution.Invocation{
		Principal:       p,
		Admission:       adm,
		Arguments:       req.Params.Arguments,
		ArgumentsDigest: round.digest,
		Timeout:         s.opts.Timeout,
		RateLimit:       s.opts.RateLimit,
		Limiter:         s.opts.Limiter,
		Answers:         round.answers,
		Unsolicited:     round.unsolicited,
		Counted:         round.resumed,
		Supports:        func(k execution.InputKind) bool { return supports(caps(), k) },
	}
}
