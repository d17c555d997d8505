package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/health"
	"github.com/agnara-go/agnara/internal/hostcheck"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/go-chi/chi/v5"
)

// ReasonUpstreamUnavailable is the failure reason of a call of a bound tool
// whose upstream is not connected (starting, or down and being retried).
// Its canonical code is unavailable.
const ReasonUpstreamUnavailable execution.Reason = "gateway_upstream_unavailable"

// The reasons a bound tool its upstream offers is held, not served (ADR
// 42): withdrawn, in no tools/list, answering the failure unavailable with
// one of them until an operator accepts the definition the upstream offers
// (`agnara gateway accept`, then [Gateway.Reload]).
const (
	// ReasonDefinitionChanged: the upstream's definition of the tool
	// differs from the one the lock file pins (its description, a schema,
	// its annotations, or the binding's own declaration).
	ReasonDefinitionChanged execution.Reason = "gateway_definition_changed"
	// ReasonDefinitionUnaccepted: the lock file pins no definition of the
	// tool: no operator has accepted one yet.
	ReasonDefinitionUnaccepted execution.Reason = "gateway_definition_unaccepted"
)

// Options configures [New]. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Logger receives the gateway's records: upstreams connecting, going
	// down and coming back, catalog swaps, the stderr of stdio upstreams.
	// Default: a logger that discards everything.
	Logger *slog.Logger
	// Validators are argument-level scope checks, by local tool name, for
	// hosts that embed the gateway in Go (a config file cannot hold code).
	// A read without one declares that it needs none; a write without one
	// is allowed to every identified caller holding its scopes (anonymous
	// callers can never ask for writes). A name that binds no tool is an
	// error.
	Validators map[string]mcpimport.ScopeValidator
	// Approvals, when set, is the approval store of writes, instead of the
	// one Config.Approvals names; the host closes it.
	Approvals approval.Store
	// StartTimeout bounds how long Start waits for every upstream's first
	// import before serving what it has. Default 30 s.
	StartTimeout time.Duration
	// Meter, when set, is told of the gateway's calls and refusals (see
	// [mcpexpose.Meter]; `agnara gateway` sets package prommcp's).
	// Default: none.
	Meter mcpexpose.Meter
	// WrapApprovals, when set, is applied once to the approval store of
	// writes, the one the gateway opens or Options.Approvals, and the
	// gateway uses what it returns (prommcp.Metrics.Approvals counts the
	// store's dispatches and errors). Default: the store as it is.
	WrapApprovals func(approval.Store) approval.Store
	// Started, when set, is called by [Run] once the gateway has started,
	// before it serves: a host attaches what reads the gateway's state
	// (prommcp.Metrics.Gateway and Handler do). Default: none.
	Started func(*Gateway)
	// Audit, when set, receives an audit record of each decided tools/call
	// (see [mcpexpose.AuditSink]); the record of an imported tool names
	// its upstream's credentials (AuditRecord.Credential). Default: none.
	Audit mcpexpose.AuditSink
	// Reload, when set, makes the gateway reload ([Gateway.Reload]) each
	// time a value is received from it, from Start until Close; the
	// command `agnara gateway` feeds it SIGHUP.
	Reload <-chan struct{}
}

// State is an upstream's state.
type State string

// Upstream states.
const (
	StateStarting State = "starting" // no import yet
	StateUp       State = "up"       // connected; its catalog is served
	StateDown     State = "down"     // lost or refused; retried with backoff
	// StateFailed: refused for a reason no new session mends (a protocol
	// revision the gateway does not speak, a strict binding it cannot
	// import); not retried until [Gateway.Reload].
	StateFailed State = "failed"
)

// UpstreamStatus is what [Gateway.Status] reports of one upstream.
type UpstreamStatus struct {
	Name  string
	State State
	// Tools are the local names of the tools served from it; Absent the
	// optional bindings, and the bound resources, templates and prompts,
	// it cannot import or does not offer now ("name (reason)").
	Tools, Absent []string
	// Resources are the local names of its resources and resource
	// templates served; Prompts of its prompts.
	Resources, Prompts []string
	// Held are the bound tools it offers that are not served because
	// their definition is not the one the lock file pins: each says why
	// ([ReasonDefinitionChanged], [ReasonDefinitionUnaccepted]) and what
	// changed. Sorted by local name.
	Held []Change
	// Error is why it is down or failed (caller-safe: reasons and the
	// transport's words, never a secret); empty when up.
	Error string
	// Reason is why it is down or failed, as a stable name: the reason
	// [execution.ReasonOf] reads from the error that took it down, such as
	// [mcpimport.ConnectFailed], [mcpimport.ProtocolUnsupported],
	// [mcpimport.DiscoveryFailed], [mcpimport.SchemaUnsupported] (a
	// strict binding) or [mcpimport.ReasonConnectionClosed] (its session
	// ended), or [ReasonUpstreamUnavailable] when that error names none.
	// Empty when up or starting.
	Reason execution.Reason
	// Connections counts the sessions made (for stdio, the processes
	// started); Swaps the catalogs of it served after the first.
	Connections, Swaps int
}

// Gateway serves the tools it imports from its upstreams as one MCP server,
// under its own scopes, identity and approvals. One upstream failing leaves
// the others serving: its tools answer [ReasonUpstreamUnavailable] until it
// is back (or, failed, the reason it was refused), and its callers' lists
// drop them. A tool is served only with the definition the lock file pins.
// A Gateway is safe for concurrent use.
type Gateway struct {
	cfg    Config
	opts   Options
	logger *slog.Logger
	ups    []*upstream
	// subjects holds each verified caller's token, for the upstreams
	// whose credentials are "token_exchange" (exchange.go); nil when none.
	subjects *subjectTokens
	// conn serves the connections pages, for the upstreams whose
	// credentials are "consent" (connect.go); nil when none.
	conn *connector

	mu       sync.Mutex // serializes publish; guards each upstream's served state, and lock
	lock     *Lock
	handler  *mcpexpose.Handler
	router   http.Handler
	store    approval.Store
	closeDB  func() error
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	started  bool
	closeErr error
}

// New checks cfg and the options and returns a gateway that has connected
// to nothing yet; [Gateway.Start] connects. Every mistake is reported at
// once, as a [*ConfigError]; local name collisions across upstreams are
// among them.
func New(cfg Config, opts *Options) (*Gateway, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	ce := &ConfigError{}
	cfg.Upstreams = slices.Clone(cfg.Upstreams)
	for i := range cfg.Upstreams {
		u := &cfg.Upstreams[i]
		u.Tools = slices.Clone(u.Tools)
		u.Resources, u.ResourceTemplates, u.Prompts = slices.Clone(u.Resources), slices.Clone(u.ResourceTemplates), slices.Clone(u.Prompts)
	}
	approvalsGiven := o.Approvals != nil
	if approvalsGiven && cfg.Approvals == (Approvals{}) {
		cfg.Approvals.SQLite = "(Options.Approvals)" // satisfies the write rule; never opened
	}
	cfg.validate(ce, positions{}, os.LookupEnv)
	if approvalsGiven {
		cfg.Approvals = Approvals{}
	}
	bound := map[string]bool{}
	for _, u := range cfg.Upstreams {
		for _, t := range u.Tools {
			bound[t.Name] = true
		}
	}
	for _, name := range slices.Sorted(mapsKeys(o.Validators)) {
		if !bound[name] {
			ce.add(0, "Options.Validators", "%q binds no tool", name)
		}
	}
	if len(ce.Problems) > 0 {
		return nil, ce
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	o.StartTimeout = cmp.Or(o.StartTimeout, 30*time.Second)
	g := &Gateway{cfg: cfg, opts: o, logger: o.Logger, store: o.Approvals}
	for _, u := range cfg.Upstreams {
		if u.HTTP != nil && u.HTTP.Credentials == CredentialsTokenExchange {
			g.subjects = newSubjectTokens()
			break
		}
	}
	for _, u := range cfg.Upstreams {
		if u.HTTP != nil && u.HTTP.Credentials == CredentialsConsent {
			v, _ := os.LookupEnv(cfg.Connections.KeyEnv)
			key, _ := sealingKey(v) // validated
			secret, _ := os.LookupEnv(cfg.Connections.SignIn.ClientSecretEnv)
			conn, err := newConnector(&g.cfg, key, secret, o.Logger)
			if err != nil {
				return nil, err
			}
			g.conn = conn
			break
		}
	}
	for i := range g.cfg.Upstreams {
		g.ups = append(g.ups, newUpstream(g, &g.cfg.Upstreams[i]))
	}
	return g, nil
}

// Config returns the gateway's config, defaults filled in.
func (g *Gateway) Config() Config { return g.cfg }

// Start reads the lock file, opens the approval store, builds the MCP
// handler, connects to every upstream in the background, and waits until
// each has made its first import (or StartTimeout passes): the first
// catalog served is then whole when the upstreams are healthy. An upstream
// that fails keeps being retried, unless it was refused for a reason no
// retry mends (it is then failed); Start fails only for what no retry
// mends in the gateway itself: a missing or unreadable lock file, the
// approval store, the token issuer. Stop the gateway with [Gateway.Close].
func (g *Gateway) Start(ctx context.Context) error {
	if g.started {
		return errors.New("gateway: Start called twice")
	}
	g.started = true
	lock, err := ReadLock(g.cfg.Lock)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("gateway: there is no lock file %s: a tool is served only with the definition an operator accepted; "+
			"review the upstreams' definitions with `agnara gateway diff -config FILE` and pin them with `agnara gateway accept -config FILE` (from Go: Inspect, Review.Accept, Lock.WriteFile)", g.cfg.Lock)
	}
	if err != nil {
		return fmt.Errorf("gateway: lock file: %w", err)
	}
	g.lock = lock
	if err := g.openApprovals(ctx); err != nil {
		return err
	}
	if g.conn != nil {
		// The store as opened: a wrapper need not keep connections.
		if err := g.conn.start(ctx, g.store); err != nil {
			g.closeApprovals()
			return fmt.Errorf("gateway: connections: %w", err)
		}
	}
	if g.store != nil && g.opts.WrapApprovals != nil {
		g.store = g.opts.WrapApprovals(g.store)
	}
	opts, err := g.handlerOptions(ctx)
	if err != nil {
		g.closeApprovals()
		return err
	}
	snap, err := g.compile()
	if err != nil {
		g.closeApprovals()
		return err
	}
	h, err := mcpexpose.NewHandler(snap, opts)
	if err != nil {
		g.closeApprovals()
		return err
	}
	g.handler = h
	r := chi.NewRouter()
	h.Mount(r, g.cfg.Path) // the handler checks Host itself
	if g.conn != nil {
		r.Handle(connectionsPath+"*", g.conn) // the connector checks Host itself
	}
	// /healthz and /readyz answer only loopback names on a loopback
	// listener, as the MCP endpoint does.
	local := r.With(func(next http.Handler) http.Handler { return hostcheck.OnLoopbackListener(next, nil) })
	local.Get("/healthz", health.Live().ServeHTTP)
	local.Get("/readyz", health.Ready(g.readiness, g.logger).ServeHTTP)
	g.router = r

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	g.cancel = cancel
	for _, u := range g.ups {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			u.run(runCtx)
		}()
	}
	if reload := g.opts.Reload; reload != nil {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for {
				select {
				case <-runCtx.Done():
					return
				case _, ok := <-reload:
					if !ok {
						return
					}
					g.Reload() // it logs its own failure
				}
			}
		}()
	}
	wait := time.NewTimer(g.opts.StartTimeout)
	defer wait.Stop()
	for _, u := range g.ups {
		select {
		case <-u.tried:
		case <-wait.C:
			g.logger.Warn("serving before every upstream answered", slog.Duration("start_timeout", g.opts.StartTimeout))
			return nil
		case <-ctx.Done():
			return errors.Join(ctx.Err(), g.Close())
		}
	}
	return nil
}

// ServeHTTP serves the MCP endpoint at Config.Path (and its OAuth metadata)
// and /healthz. It answers 503 before Start.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.router == nil {
		http.Error(w, "the gateway has not started", http.StatusServiceUnavailable)
		return
	}
	g.router.ServeHTTP(w, r)
}

// Load reports the sessions and streams the gateway's MCP handler holds
// open, against their caps (see [mcpexpose.Handler.Load]); zero before
// Start.
func (g *Gateway) Load() mcpexpose.Load {
	if g.handler == nil {
		return mcpexpose.Load{}
	}
	return g.handler.Load()
}

// Status reports every upstream, in config order.
func (g *Gateway) Status() []UpstreamStatus {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]UpstreamStatus, 0, len(g.ups))
	for _, u := range g.ups {
		out = append(out, u.status())
	}
	return out
}

// Reload re-reads the lock file and serves what it now pins: a held tool
// whose upstream offers the definition just accepted is served (no new
// import is needed: the gateway holds what its upstream offers), and a
// served one whose pin no longer matches is held. It also retries every
// failed upstream, once. When the lock file cannot be read, the gateway
// keeps the lock it has, logs why and returns it. The config is not
// re-read: a changed config needs a restart.
func (g *Gateway) Reload() error {
	lock, err := ReadLock(g.cfg.Lock)
	if err != nil {
		g.logger.Error("reload: the lock file cannot be read; the gateway keeps the one it has", slog.String("error", err.Error()))
		return fmt.Errorf("gateway: reload: %w", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lock = lock
	g.swap(nil)
	retried := 0
	for _, u := range g.ups {
		if u.served.state == StateFailed {
			select {
			case u.retry <- struct{}{}:
			default: // already woken
			}
			retried++
		}
	}
	g.logger.Info("reloaded the lock file", slog.String("lock", g.cfg.Lock), slog.Int("pins", len(lock.pins)), slog.Int("failed_upstreams_retried", retried))
	return nil
}

// Close stops following the upstreams, closes their sessions (stopping
// stdio upstreams' processes) and the approval store the gateway opened.
// It does not stop an http.Server serving the gateway.
func (g *Gateway) Close() error {
	if g.cancel != nil {
		g.cancel()
		g.cancel = nil
		g.wg.Wait()
		g.closeErr = g.closeApprovals()
	}
	return g.closeErr
}

func (g *Gateway) closeApprovals() error {
	if g.closeDB == nil {
		return nil
	}
	err := g.closeDB()
	g.closeDB = nil
	return err
}

func (g *Gateway) openApprovals(ctx context.Context) error {
	a := g.cfg.Approvals
	switch {
	case g.store != nil:
		return nil
	case a.SQLite != "":
		s, err := approval.OpenSQLite(a.SQLite, nil)
		if err != nil {
			return fmt.Errorf("approvals: %w", err)
		}
		g.store, g.closeDB = s, s.Close
	case a.PostgresEnv != "":
		dsn := os.Getenv(a.PostgresEnv)
		if err := approval.MigratePostgres(ctx, dsn); err != nil {
			return fmt.Errorf("approvals (%s): %w", a.PostgresEnv, err)
		}
		s, err := approval.OpenPostgres(ctx, dsn, nil)
		if err != nil {
			return fmt.Errorf("approvals (%s): %w", a.PostgresEnv, err)
		}
		g.store, g.closeDB = s, s.Close
	}
	return nil
}

func (g *Gateway) handlerOptions(ctx context.Context) (*mcpexpose.HandlerOptions, error) {
	timeout := g.cfg.Limits.CallTimeout.D()
	if timeout == 0 {
		for _, u := range g.ups {
			timeout = max(timeout, u.limits.CallTimeout)
		}
		timeout += 5 * time.Second
	}
	opts := &mcpexpose.HandlerOptions{
		Server: &mcpexpose.ServerOptions{
			Timeout:   timeout,
			Logger:    g.logger,
			Swappable: true, // upstreams come, go and change without dropping sessions
			Meter:     g.opts.Meter,
		},
		Limits: &mcpexpose.Limits{
			MaxBodyBytes:            g.cfg.Limits.MaxBodyBytes,
			MaxSessions:             g.cfg.Limits.MaxSessions,
			MaxSessionsPerPrincipal: g.cfg.Limits.MaxSessionsPerPrincipal,
		},
	}
	if g.opts.Audit != nil {
		opts.Server.Audit = credentialAudit{sink: g.opts.Audit, modes: g.credentialModes()}
	}
	if r := g.cfg.Limits.RateLimit; r != nil {
		opts.Server.RateLimit = agnara.RateLimit{Rate: r.PerSecond, Burst: r.Burst}
	}
	switch a := g.cfg.Auth; {
	case a.Issuer != "":
		v, err := oidc.NewVerifier(ctx, a.Issuer, a.Resource, nil)
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		opts.Tokens = v.Verify
		if g.subjects != nil {
			opts.Tokens = g.subjects.keep(v.Verify)
		}
		if g.conn != nil || g.subjects != nil {
			// Consent is per client; an exchange presents the very token
			// of the call's own request.
			opts.Server.Identity = callerPrincipal(g.subjects != nil)
		}
		opts.Resource = &mcpexpose.Resource{URL: a.Resource, AuthorizationServers: []string{a.Issuer}}
	case a.Development != nil:
		dev := policy.NewPrincipal(a.Development.Principal, a.Development.Scopes)
		opts.Server.DevelopmentPrincipal = &dev
	}
	return opts, nil
}

// Run serves cfg until ctx is done: it listens on cfg.Listen, starts the
// gateway, prints the MCP URL as the first line of stdout, and on ctx's end
// stops serving (requests in flight get 5 s) and closes the gateway.
func Run(ctx context.Context, cfg Config, opts *Options, stdout io.Writer) error {
	g, err := New(cfg, opts)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", g.cfg.Listen)
	if err != nil {
		return err
	}
	defer ln.Close()
	if err := g.Start(ctx); err != nil {
		return err
	}
	defer g.Close()
	if g.opts.Started != nil {
		g.opts.Started(g)
	}
	srv := mcpexpose.NewHTTPServer(g, nil)
	url := fmt.Sprintf("http://%s%s", ln.Addr(), g.cfg.Path)
	fmt.Fprintln(stdout, url)
	names := make([]string, 0, len(g.ups))
	for _, s := range g.Status() {
		names = append(names, s.Name+"="+string(s.State))
	}
	g.logger.Info("serving MCP", slog.String("url", url), slog.String("agnara", agnara.Version), slog.Any("upstreams", names),
		slog.Bool("oauth", g.cfg.Auth.Issuer != ""))
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(shutdown)
		if errors.Is(err, context.DeadlineExceeded) {
			// Requests still running after 5 s, or clients holding an
			// event stream open: they are cut, which is what stopping
			// means; it is not the gateway failing.
			g.logger.Warn("stopping: connections still open after 5s were closed", slog.String("error", err.Error()))
			err = srv.Close()
		}
		stopped <- err
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}
