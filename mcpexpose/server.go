//lint:file-ignore SA1019 logging, sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	watch *watchers // nil unless Swappable
	// listens are the subscriptions/listen streams the HTTP edge holds
	// (listen.go), told of swaps and resource updates as the SDK's are.
	listens    edgeListens
	swapMu     sync.Mutex
	registered map[string]registration // the tools the SDK server has, by name
	// regFeatures are the resources ("r:"+URI), templates ("t:"+template)
	// and prompts ("p:"+name) the SDK server has, with their digests.
	regFeatures map[string]string
	// holds says whether the SDK server holds prompts, and resources or
	// templates, for a listen the edge holds to agree as the SDK would
	// (listen.go); caps are the capabilities it was given.
	holds   struct{ prompts, resources atomic.Bool }
	caps    *mcp.ServerCapabilities
	retired []*epoch // epochs with calls still running

	// levelSet, when the server serves an HTTP handler, records the log
	// level a session's client set (sessions.setLevel).
	levelSet func(sessionID string, level mcp.LoggingLevel)

	// tasks serves the tasks extension (task.go); nil when the snapshot
	// the server was built with has no task tool.
	tasks *taskRunner
	// requests counts the requests limitRequest limits (ratelimit.go):
	// ServerOptions.Limiter, or one in this process.
	requests execution.Limiter
	// checkRate is execution's rate check (registry.RateCheck), resolved
	// once here.
	checkRate rateCheck

	// streamLifetime bounds a subscriptions/listen (streams.go): set by
	// NewHandler, 0 (none) on other transports.
	streamLifetime time.Duration
	// pollAfter and pollRetry poll a 2025-11-25 call's stream
	// (Limits.PollAfter, events.go): set by NewHandler, 0 elsewhere.
	pollAfter, pollRetry time.Duration
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
	s.checkRate = registry.RateCheck[rateCheck]()
	s.identity = s.opts.Identity
	if s.identity == nil {
		s.identity = SubjectPrincipal
	}
	s.logger = s.opts.Logger
	if s.logger == nil {
		s.logger = snap.app.Logger()
	}
	if dp := s.opts.DevelopmentPrincipal; dp != nil {
		s.devLogger().Warn("DEVELOPMENT MODE: callers without a token act as a fixed principal; never use this in production",
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
	s.caps = caps
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
			caps.AddExtension(mcpversion.TasksExtension, map[string]any{})
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
	s.mcp.AddSendingMiddleware(keepElicitAnswer)
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

// modernVersion is the first protocol version served without sessions.
const modernVersion = mcpversion.Modern
