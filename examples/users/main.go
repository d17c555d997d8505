// Command users is agnara-go's main example: a small user service whose
// functions are capabilities (scopes, validation, a domain failure, a
// destructive delete that requires confirmation), served over MCP at /mcp in
// a chi router, beside /healthz and /readyz (which names the Redis of
// -replay-redis when it does not answer), with Prometheus metrics at
// http://127.0.0.1:9465/metrics (-metrics-addr moves them; "off" turns
// them off).
//
//	go run ./examples/users                       # local trial, no tokens
//	go run ./examples/users -issuer http://127.0.0.1:9000   # OAuth, see examples/devissuer
//	go run ./examples/users -otel-stdout                    # print a trace of every call
//	go run ./examples/users -audit 2>audit.jsonl            # an audit record per call; see docs/audit.md
//	go run ./examples/users -state-keys FILE -replay-redis redis://127.0.0.1:6379/0 -addr 127.0.0.1:8081
//	                                          # one of several instances; see docs/scaling.md
//
// Without -issuer it runs for local trial only: every caller acts as a fixed
// development principal whose scopes come from -dev-scopes, and only
// loopback addresses are allowed. With -issuer, callers need a bearer token
// from that issuer, issued for the resource (-resource, by default
// http://<addr>/mcp).
package main

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/examples/internal/userservice"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/health"
	"github.com/agnara-go/agnara/internal/hostcheck"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
	"github.com/agnara-go/agnara/otelmcp"
	"github.com/agnara-go/agnara/policy"
	"github.com/agnara-go/agnara/prommcp"
	"github.com/go-chi/chi/v5"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// userView is the page of users.get_user's MCP App view.
//
//go:embed user.html
var userView string

type config struct {
	addr       string
	issuer     string
	resource   string
	devScopes  string
	otelStdout bool
	debug      bool
	// audit, when set, receives the audit trail as JSON lines (-audit:
	// standard error).
	audit io.Writer
	// Shared request state, for running several instances.
	stateKeys   string
	replayRedis string
	stateTTL    time.Duration
	// metrics is where /metrics is served (-metrics-addr).
	metrics health.MetricsFlag
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on")
	flag.StringVar(&cfg.issuer, "issuer", "", "OAuth/OIDC issuer URL; enables bearer-token authorization")
	flag.StringVar(&cfg.resource, "resource", "", "canonical resource URI of the MCP endpoint (default http://<addr>/mcp)")
	flag.StringVar(&cfg.devScopes, "dev-scopes", "users:read", "without -issuer: scopes of the development principal, space separated")
	flag.BoolVar(&cfg.otelStdout, "otel-stdout", false, "export OpenTelemetry traces of every tools/call and tools/list to standard output")
	flag.BoolVar(&cfg.debug, "debug-goroutines", false, "serve the goroutine count and live heap at /debug/goroutines and /debug/heap, and a heap profile at /debug/pprof/heap (for soak tests; loopback listeners only)")
	flag.StringVar(&cfg.stateKeys, "state-keys", "", "key file sealing request state, shared by every instance (agnara keys generate -o FILE); default: a key per process")
	flag.StringVar(&cfg.replayRedis, "replay-redis", "", "Redis URL (redis://HOST:PORT/DB) recording used request states for every instance; default: in this process")
	flag.DurationVar(&cfg.stateTTL, "state-ttl", 0, "how long a client may take to answer a confirmation (default 5m, at most 1h)")
	cfg.metrics.Default = health.UsersMetricsAddr
	flag.Var(&cfg.metrics, "metrics-addr", `serve Prometheus metrics at http://ADDR/metrics on a listener of their own; "off" serves none`)
	dump := flag.Bool("dump-snapshot", false, "print the compiled snapshot (tools, resources, prompts, schemas, scopes, annotations) as JSON and exit, without serving; testdata/snapshot.json is its output, for review")
	audit := flag.Bool("audit", false, "write an audit record (JSON, one line per decided tools/call; see docs/audit.md) to standard error")
	flag.Parse()
	if *audit {
		cfg.audit = os.Stderr
	}

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if *dump {
		if err := dumpSnapshot(os.Stdout, logger); err != nil {
			fmt.Fprintln(os.Stderr, "users:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, logger); err != nil {
		fmt.Fprintln(os.Stderr, "users:", err)
		os.Exit(1)
	}
}

// run serves until ctx is done. It prints the MCP URL on its first line of
// output once it is listening.
func run(ctx context.Context, cfg config, stdout io.Writer, logger *slog.Logger) error {
	// Refuse a wider address before binding it, not after.
	if host, _, err := net.SplitHostPort(cfg.addr); err == nil && cfg.issuer == "" && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("without -issuer the example runs for local trial only: listen on a loopback address (such as 127.0.0.1:8080), not %s", cfg.addr)
		}
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	if cfg.issuer == "" && !addr.IP.IsLoopback() {
		return fmt.Errorf("without -issuer the example runs for local trial only: listen on a loopback address (such as 127.0.0.1:8080), not %s", addr)
	}
	if cfg.resource == "" {
		cfg.resource = fmt.Sprintf("http://%s/mcp", addr)
	}

	a, err := newApplication(ctx, cfg, stdout, logger)
	if err != nil {
		return err
	}
	defer a.close()
	snap, opts := a.snap, a.opts
	m, err := prommcp.New(nil)
	if err != nil {
		return err
	}
	opts.Server.Meter = m
	h, err := mcpexpose.NewHandler(snap, opts)
	if err != nil {
		return err
	}
	if err := m.Handler(h); err != nil {
		return err
	}
	metricsCtx, stopMetrics := context.WithCancel(ctx)
	defer stopMetrics()
	if _, err := health.ServeMetrics(metricsCtx, &cfg.metrics, m.HTTPHandler(), logger); err != nil {
		return err
	}

	r := chi.NewRouter()
	h.Mount(r, "/mcp") // the handler checks Host itself
	// The other routes answer only loopback names on a loopback listener,
	// as the MCP endpoint does: a rebound page reads none of them.
	side := r.With(func(next http.Handler) http.Handler { return hostcheck.OnLoopbackListener(next, nil) })
	side.Get("/healthz", health.Live().ServeHTTP)
	side.Get("/readyz", health.Ready(func() []health.Check { return a.checks }, logger).ServeHTTP)
	if cfg.debug {
		if !addr.IP.IsLoopback() {
			return fmt.Errorf("-debug-goroutines serves profiles: listen on a loopback address, not %s", addr)
		}
		side.Get("/debug/goroutines", func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, runtime.NumGoroutine())
		})
		side.Get("/debug/heap", func(w http.ResponseWriter, _ *http.Request) {
			// The bytes the forced collection marked live: unlike
			// HeapAlloc, not what the load allocated since it ended.
			runtime.GC()
			live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
			metrics.Read(live)
			fmt.Fprintln(w, live[0].Value.Uint64())
		})
		// Only the heap profile (?gc=1 collects first): enough to tell what
		// holds memory under load, without the rest of net/http/pprof.
		side.Get("/debug/pprof/heap", pprof.Handler("heap").ServeHTTP)
	}

	srv := mcpexpose.NewHTTPServer(r, nil) // read, write and idle timeouts for MCP
	fmt.Fprintf(stdout, "http://%s/mcp\n", addr)
	logger.Info("serving MCP", slog.String("url", fmt.Sprintf("http://%s/mcp", addr)), slog.String("agnara", agnara.Version),
		slog.String("resource", cfg.resource), slog.Bool("oauth", cfg.issuer != ""), slog.Any("tools", snap.Names()),
		slog.String("state_keys", cmp.Or(cfg.stateKeys, "per process")), slog.Bool("replay_redis", cfg.replayRedis != ""))
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shutdown) // waits for requests in flight
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// application is the users example's compiled exposure and the handler
// options its flags choose, before anything listens: what run serves, and
// what the tests call in process (package agnaratest).
type application struct {
	snap    *mcpexpose.Snapshot
	opts    *mcpexpose.HandlerOptions
	closers []func()
	// checks are what /readyz checks: the Redis of -replay-redis.
	checks []health.Check
}

// close releases what newApplication opened, last first, once.
func (a *application) close() {
	for _, c := range slices.Backward(a.closers) {
		c()
	}
	a.closers = nil
}

// newApplication compiles the application and chooses its handler options
// from cfg, whose resource is set. On error, what it opened is released.
func newApplication(ctx context.Context, cfg config, stdout io.Writer, logger *slog.Logger) (_ *application, err error) {
	a := &application{}
	defer func() {
		if err != nil {
			a.close()
		}
	}()
	appOpts := &agnara.Options{Version: "0.1.0", Logger: logger}
	if cfg.otelStdout {
		exporter, err := stdouttrace.New(stdouttrace.WithWriter(stdout), stdouttrace.WithPrettyPrint())
		if err != nil {
			return nil, err
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
		a.closers = append(a.closers, func() { tp.Shutdown(context.Background()) })
		tel, err := otelmcp.New(&otelmcp.Options{TracerProvider: tp})
		if err != nil {
			return nil, err
		}
		appOpts.Observer = tel
	}
	store := userservice.NewStore()
	app, caps := userservice.NewApp(store, appOpts)
	a.closers = append(a.closers, func() { app.Close() })
	welcome := app.Capability(WelcomeUser, &agnara.CapabilityOptions{
		Title:       "Welcome a user",
		Description: "Ask the model to write a short welcome message to one user.",
		Scopes:      []string{"users:read"},
	})
	exp := mcpexpose.New(app)
	// users.get_user has a view (an MCP App, docs/apps.md): a host that
	// supports them shows the user as a card. It is self-contained, so its
	// CSP lets it reach no other origin.
	exp.Tool(caps.Get, &mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: userView}})
	exp.Tool(caps.List, nil)
	exp.Tool(caps.Create, nil)
	exp.Tool(caps.Delete, nil)
	// The same capability as users.get_user, read as a resource: users://u1.
	complete := map[string]mcpexpose.Completer{"id": userIDs(store)}
	exp.ResourceTemplate(caps.Get, &mcpexpose.ResourceTemplateOptions{URITemplate: "users://{id}", Name: "user", Complete: complete})
	exp.Prompt(welcome, &mcpexpose.PromptOptions{Complete: complete})
	if a.snap, err = exp.Compile(); err != nil {
		return nil, err
	}

	opts := &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Timeout: 30 * time.Second, Logger: logger, StateTTL: cfg.stateTTL}}
	if cfg.audit != nil {
		opts.Server.Audit = mcpexpose.NewSlogAudit(slog.New(slog.NewJSONHandler(cfg.audit, nil)))
	}
	if cfg.stateKeys != "" {
		if opts.Server.StateKeys, err = requeststate.LoadKeyRing(cfg.stateKeys); err != nil {
			return nil, err
		}
	}
	if cfg.replayRedis != "" {
		if cfg.stateKeys == "" {
			return nil, errors.New("-replay-redis needs -state-keys: without a shared key file no other instance can open this one's states")
		}
		redis.SetLogger(redisLog{logger}) // the client's reconnect notes, as warnings
		store, closeRedis, err := redisreplay.Open(ctx, cfg.replayRedis, &redisreplay.Options{Logger: logger})
		if err != nil {
			return nil, err
		}
		a.closers = append(a.closers, func() { closeRedis() })
		opts.Server.StateReplay = store
		a.checks = append(a.checks, health.Check{Name: "redis", Probe: func(ctx context.Context) error {
			_, err := store.Epoch(ctx)
			return err
		}})
	}
	if cfg.issuer != "" {
		v, err := oidc.NewVerifier(ctx, cfg.issuer, cfg.resource, nil)
		if err != nil {
			return nil, err
		}
		opts.Tokens = v.Verify
		opts.Resource = &mcpexpose.Resource{URL: cfg.resource, AuthorizationServers: []string{cfg.issuer}}
	} else {
		dev := policy.NewPrincipal("developer", strings.Fields(cfg.devScopes))
		opts.Server.DevelopmentPrincipal = &dev
	}
	a.opts = opts
	return a, nil
}

// redisLog sends the Redis client's own notes (failed dials while Redis is
// down) to the server's log as warnings, instead of the standard logger.
// WelcomeUser is the users.welcome_user prompt: the messages that ask a
// model to welcome the user with the given id.
func WelcomeUser(ctx context.Context, in userservice.GetUserInput, s *userservice.Store) ([]execution.Message, error) {
	u, err := userservice.GetUser(ctx, in, s)
	if err != nil {
		return nil, err
	}
	return []execution.Message{{
		Role:    execution.User,
		Content: execution.Text{Text: fmt.Sprintf("Write a short, friendly welcome message to %s <%s>, who just joined.", u.Name, u.Email)},
	}}, nil
}

// userIDs completes user ids from the store, by prefix, in id order.
func userIDs(s *userservice.Store) mcpexpose.Completer {
	return func(ctx context.Context, req mcpexpose.CompletionRequest) ([]string, error) {
		users, err := userservice.ListUsers(ctx, userservice.ListUsersInput{Limit: 100}, s)
		if err != nil {
			return nil, err
		}
		var ids []string
		for _, u := range users {
			if strings.HasPrefix(u.ID, req.Value) {
				ids = append(ids, u.ID)
			}
		}
		return ids, nil
	}
}

type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.WarnContext(ctx, "redis client", slog.String("note", fmt.Sprintf(format, v...)))
}

// dumpSnapshot writes the example's compiled snapshot as JSON
// (mcpexpose.Snapshot.WriteJSON): what it exposes, without serving it.
func dumpSnapshot(w io.Writer, logger *slog.Logger) error {
	a, err := newApplication(context.Background(), config{}, io.Discard, logger)
	if err != nil {
		return err
	}
	defer a.close()
	return a.snap.WriteJSON(w)
}
