// Command gateway is agnara-go's governed gateway example: it imports the
// read tools of a running users example (examples/users) with mcpimport and
// serves them again through mcpexpose, under the gateway's own scopes.
//
//	go run ./examples/users &                 # the upstream, on 127.0.0.1:8080
//	go run ./examples/gateway                 # the gateway, on 127.0.0.1:8090
//
// Callers of the gateway never reach the upstream with their own authority:
// the gateway does not forward their tokens. When the upstream requires
// tokens, the gateway gets its own with the OAuth client credentials grant
// (-upstream-token-url, -upstream-client-id, and the secret in the
// GATEWAY_UPSTREAM_CLIENT_SECRET environment variable), asking for the
// upstream URL as the token's resource (RFC 8707).
//
// With -approvals-db PATH it also imports the upstream's users.create_user as
// a write, behind durable approvals kept in that SQLite file: a call answers
// that an approval is pending (with its id), an approver decides it with
//
//	go run ./cmd/agnara approvals approve -db PATH ID -as alice
//
// and the same call then creates the user, once.
//
// With -approvals-postgres DSN instead, the approvals are kept in that
// PostgreSQL database, which several gateways may share: the gateway
// migrates its schema at start, an approver decides with
//
//	go run ./cmd/agnara approvals approve -postgres DSN ID -as alice
//
// and an approved call reaches the upstream once, whichever gateways it is
// made on.
//
// Like the users example, it runs for local trial only: every caller of the
// gateway acts as a fixed development principal whose scopes come from
// -dev-scopes, and only loopback addresses are allowed.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2/clientcredentials"
)

type config struct {
	addr            string
	upstream        string
	devScopes       string
	tokenURL        string
	clientID        string
	clientSecret    string
	upstreamScopes  string
	resource        string
	protocolVersion string
	approvalsDB     string
	approvalsPG     string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.addr, "addr", "127.0.0.1:8090", "address to listen on")
	flag.StringVar(&cfg.upstream, "upstream", "http://127.0.0.1:8080/mcp", "MCP endpoint of the users example to import from")
	flag.StringVar(&cfg.devScopes, "dev-scopes", "directory:read directory:write", "scopes of the development principal every caller acts as, space separated")
	flag.StringVar(&cfg.tokenURL, "upstream-token-url", "", "token endpoint for the gateway's own upstream credentials (client credentials grant); empty: no credentials")
	flag.StringVar(&cfg.clientID, "upstream-client-id", "", "the gateway's client id at -upstream-token-url")
	flag.StringVar(&cfg.upstreamScopes, "upstream-scopes", "users:read", "scopes the gateway asks the upstream's issuer for, space separated")
	flag.StringVar(&cfg.resource, "upstream-resource", "", "resource to ask the upstream's issuer for a token for (RFC 8707; default: -upstream)")
	flag.StringVar(&cfg.approvalsDB, "approvals-db", "", "SQLite file of durable approvals; when set, users.create_user is imported as an approval-gated write")
	flag.StringVar(&cfg.approvalsPG, "approvals-postgres", "", "PostgreSQL DSN of durable approvals, shared by every gateway on it (migrated at start); the alternative to -approvals-db")
	flag.StringVar(&cfg.protocolVersion, "upstream-protocol", "", "MCP protocol version to ask the upstream for (default: the newest the SDK speaks)")
	flag.Parse()
	cfg.clientSecret = os.Getenv("GATEWAY_UPSTREAM_CLIENT_SECRET")

	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, logger); err != nil {
		fmt.Fprintln(os.Stderr, "gateway:", err)
		os.Exit(1)
	}
}

// bindings are the gateway's explicit declarations: which upstream tools it
// imports (the users example's two read tools, never its writes), under
// which local names, titles and scopes.
func bindings() map[string]mcpimport.Binding {
	return map[string]mcpimport.Binding{
		"users.get_user": {
			Name: "get_user", Title: "Get user",
			Description:    "Look up one user of the directory by id.",
			Scopes:         []string{"directory:read"},
			ScopeValidator: rejectAdminIDs,
		},
		"users.list_users": {
			Name: "list_users", Title: "List users",
			Description:      "List the directory's users in id order.",
			Scopes:           []string{"directory:read"},
			NoScopeValidator: true, // every reader may list
			ConcurrencySafe:  true,
		},
	}
}

// writeBindings are the gateway's explicit authorization of the one upstream
// write it imports when approvals are configured.
func writeBindings() map[string]mcpimport.WriteBinding {
	return map[string]mcpimport.WriteBinding{
		"users.create_user": {
			Name:           "create_user",
			Title:          "Create user",
			Effect:         approval.EffectWrite,
			Description:    "Create a directory user. Every call needs an approval by a directory approver.",
			Scopes:         []string{"directory:write"},
			ScopeValidator: identifiedCallers,
			BindingID:      "gateway-users", BindingRevision: "gateway-config-1",
			ScopeID: "directory", ScopeRevision: "directory-1",
		},
	}
}

// identifiedCallers is the write's scope check: only identified callers may
// ask for a write.
func identifiedCallers(_ context.Context, caller policy.Principal, _ json.RawMessage) error {
	if caller.IsAnonymous() {
		return errors.New("anonymous callers cannot ask for writes")
	}
	return nil
}

// rejectAdminIDs is the gateway's argument-level scope check: callers
// without directory:admin may not look up the reserved "admin" account.
func rejectAdminIDs(_ context.Context, caller policy.Principal, args json.RawMessage) error {
	var in struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return err
	}
	if in.ID == "admin" && !caller.HasScope("directory:admin") {
		return errors.New("the admin account needs directory:admin")
	}
	return nil
}

// run serves until ctx is done. It prints the gateway's MCP URL on its first
// line of output once it is listening.
func run(ctx context.Context, cfg config, stdout io.Writer, logger *slog.Logger) error {
	if err := checkUpstream(cfg.upstream); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		return fmt.Errorf("the gateway example runs for local trial only: listen on a loopback address (such as 127.0.0.1:8090), not %s", addr)
	}

	// The host owns the upstream session: transport, credentials, limits.
	// Connect also wires the session's monitor (tools/list_changed, the
	// negotiated protocol version).
	transport := &mcp.StreamableClientTransport{Endpoint: cfg.upstream, HTTPClient: upstreamClient(ctx, cfg), MaxRetries: -1}
	connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sess, err := mcpimport.Connect(connectCtx, "users", transport, &mcpimport.ConnectOptions{
		Client:         &mcp.Implementation{Name: "agnara-gateway", Version: "0.1.0"},
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: cfg.protocolVersion},
	})
	if err != nil {
		return fmt.Errorf("connecting to the upstream %s: %w", cfg.upstream, err)
	}
	defer sess.Close()

	dev := policy.NewPrincipal("developer", strings.Fields(cfg.devScopes))
	gw := &gateway{session: sess, logger: logger, principal: dev}
	store, err := openApprovals(ctx, cfg)
	if err != nil {
		return err
	}
	if store != nil {
		defer store.Close()
		gw.approvals = store
	}
	stale, err := gw.load(ctx)
	if err != nil {
		return err
	}
	go gw.follow(ctx, stale)

	r := chi.NewRouter()
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	r.Handle("/mcp", gw)
	srv := mcpexpose.NewHTTPServer(r, nil) // read, write and idle timeouts for MCP
	fmt.Fprintf(stdout, "http://%s/mcp\n", addr)
	logger.Info("serving MCP", slog.String("url", fmt.Sprintf("http://%s/mcp", addr)),
		slog.String("upstream", cfg.upstream), slog.String("upstream_protocol", sess.ClientSession().InitializeResult().ProtocolVersion),
		slog.Bool("writes", gw.approvals != nil))
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// gateway serves the current catalog and swaps it, whole, when the upstream
// catalog changes.
type gateway struct {
	session   *mcpimport.Session
	logger    *slog.Logger
	principal policy.Principal
	approvals approval.Store // nil: no writes imported
	handler   atomic.Pointer[mcpexpose.Handler]
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.handler.Load().ServeHTTP(w, r)
}

// load discovers the bound upstream tools (and writes, when approvals are
// configured) and builds a handler serving them. It returns a channel that
// is closed when what it loaded goes stale.
func (g *gateway) load(ctx context.Context) (<-chan struct{}, error) {
	reads, err := mcpimport.Discover(ctx, g.session, bindings(), &mcpimport.Options{Logger: g.logger})
	if err != nil {
		return nil, err
	}
	app := agnara.New("directory", &agnara.Options{Version: "0.1.0", Logger: g.logger})
	exp := mcpexpose.New(app)
	for _, c := range reads.Register(app) {
		exp.Tool(c, nil)
	}
	if g.approvals != nil {
		writes, err := mcpimport.DiscoverWrites(ctx, g.session, writeBindings(), &mcpimport.WriteOptions{Logger: g.logger, Approvals: g.approvals})
		if err != nil {
			return nil, err
		}
		for _, c := range writes.Register(app) {
			exp.Tool(c, nil)
		}
	}
	snap, err := exp.Compile()
	if err != nil {
		return nil, err
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: mcpexpose.ServerOptions{
		Timeout:              mcpimport.DefaultLimits().CallTimeout + 5*time.Second,
		Logger:               g.logger,
		DevelopmentPrincipal: &g.principal,
	}})
	if err != nil {
		return nil, err
	}
	g.handler.Store(h)
	g.logger.Info("imported", slog.String("catalog", reads.Snapshot().Digest()), slog.Any("tools", snap.Names()))
	return reads.Stale(), nil // read and write catalogs share the monitor: they go stale together
}

// follow imports again each time the catalog goes stale: an explicit host
// decision, made here at a safe point (the new handler replaces the old one
// whole; calls of the old catalogs fail with mcp_catalog_stale meanwhile,
// and approvals given for the old write catalog no longer dispatch).
func (g *gateway) follow(ctx context.Context, stale <-chan struct{}) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-stale:
		}
		next, err := g.load(ctx)
		if err != nil {
			g.logger.Error("the upstream catalog changed and could not be imported again; its tools stay unavailable", slog.String("code", string(mcpimport.CodeOf(err))))
			return
		}
		stale = next
	}
}

// upstreamClient returns the HTTP client for the upstream: the gateway's
// own client credentials when configured, never a caller's token, and a
// bound on every response body.
func upstreamClient(ctx context.Context, cfg config) *http.Client {
	base := &http.Client{Transport: limitedBodies{http.DefaultTransport, 4 << 20}}
	if cfg.tokenURL == "" {
		return base
	}
	cc := &clientcredentials.Config{
		ClientID:       cfg.clientID,
		ClientSecret:   cfg.clientSecret,
		TokenURL:       cfg.tokenURL,
		Scopes:         strings.Fields(cfg.upstreamScopes),
		EndpointParams: url.Values{"resource": {cmp.Or(cfg.resource, cfg.upstream)}},
	}
	return cc.Client(context.WithValue(ctx, oauth2HTTPClient, base))
}

// openApprovals opens the approval store the flags name, or returns nil
// when there is none. The gateway is the host: it migrates a PostgreSQL
// schema before opening it (MigratePostgres is safe when several gateways
// start at once); SQLite migrates on open.
func openApprovals(ctx context.Context, cfg config) (approval.Store, error) {
	switch {
	case cfg.approvalsDB != "" && cfg.approvalsPG != "":
		return nil, errors.New("-approvals-db and -approvals-postgres: give one of them")
	case cfg.approvalsDB != "":
		s, err := approval.OpenSQLite(cfg.approvalsDB, nil)
		if err != nil {
			return nil, err
		}
		return s, nil
	case cfg.approvalsPG != "":
		if err := approval.MigratePostgres(ctx, cfg.approvalsPG); err != nil {
			return nil, err
		}
		s, err := approval.OpenPostgres(ctx, cfg.approvalsPG, nil)
		if err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, nil
}

func checkUpstream(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-upstream %q: want the http(s) URL of the users example's MCP endpoint, such as http://127.0.0.1:8080/mcp", raw)
	}
	return nil
}
