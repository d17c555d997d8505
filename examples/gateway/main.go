// Command gateway is agnara-go's governed gateway example: it imports the
// read tools of a running users example (examples/users) with mcpimport and
// serves them again through mcpexpose, under the gateway's own scopes.
//
//	go run ./examples/users &                 # the upstream, on 127.0.0.1:8080
//	go run ./examples/gateway                 # the gateway, on 127.0.0.1:8090
//
// It also imports the users example's user template (users://{id}) as
// directory://users/{id} and its users.welcome_user prompt as
// directory.welcome_user, under the same directory:read scope: resources and
// prompts are bound one by one, as tools are.
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
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"expvar"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	agw "github.com/agnara-go/agnara/gateway" // the package; this program has its own type gateway
	"github.com/agnara-go/agnara/internal/hostcheck"
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

// featureBindings are the gateway's explicit declarations of the upstream
// resource template and prompt it imports.
func featureBindings() mcpimport.FeatureBindings {
	return mcpimport.FeatureBindings{
		ResourceTemplates: map[string]mcpimport.ResourceBinding{
			"users://{id}": {
				Name: "user", URI: "directory://users/{id}", Title: "A directory user",
				Description: "One user of the directory, as JSON, by id.",
				Scopes:      []string{"directory:read"}, MIMETypes: []string{"application/json"},
			},
		},
		Prompts: map[string]mcpimport.PromptBinding{
			"users.welcome_user": {
				Name: "welcome_user", Title: "Welcome a user",
				Description: "Ask the model to write a short welcome message to one directory user.",
				Scopes:      []string{"directory:read"},
			},
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
	// Refuse a wider address before binding it, not after.
	if host, _, err := net.SplitHostPort(cfg.addr); err == nil && host != "localhost" {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("the gateway example runs for local trial only: listen on a loopback address (such as 127.0.0.1:8090), not %s", cfg.addr)
		}
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
	gw := &gateway{session: sess, logger: logger, principal: dev, swaps: catalogSwaps, backoff: defaultBackoff}
	store, err := openApprovals(ctx, cfg)
	if err != nil {
		return err
	}
	if store != nil {
		defer store.Close()
		gw.approvals = store
	}
	if err := gw.load(connectCtx); err != nil {
		return err
	}
	go gw.follow(ctx)

	r := chi.NewRouter()
	r.Handle("/mcp", gw) // the handler checks Host itself
	// The other routes answer only loopback names on a loopback listener,
	// as the MCP endpoint does: /debug/vars shows the command line, which
	// may hold a PostgreSQL password, and no rebound page may read it.
	side := r.With(func(next http.Handler) http.Handler { return hostcheck.OnLoopbackListener(next, nil) })
	side.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok\n")
	})
	side.Handle("/debug/vars", expvar.Handler()) // gateway_catalog_swaps among them
	srv := mcpexpose.NewHTTPServer(r, nil)       // read, write and idle timeouts for MCP
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

// gateway serves the current catalog and follows the upstream's: it
// re-imports in the background on every tools/list_changed and, when what
// it imports changed, hands the running handler a new snapshot.
type gateway struct {
	session   *mcpimport.Session
	logger    *slog.Logger
	principal policy.Principal
	approvals approval.Store // nil: no writes imported
	swaps     *expvar.Int    // counts catalog swaps; nil: not counted
	backoff   backoff
	handler   atomic.Pointer[mcpexpose.Handler]

	// The catalogs served; only load (before follow starts) and follow
	// touch them.
	reads, writes, features *mcpimport.Catalog
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.handler.Load().ServeHTTP(w, r)
}

// catalogs is one discovery of everything the gateway imports.
type catalogs struct {
	reads, writes *mcpimport.Catalog // writes nil without approvals
	features      *mcpimport.Catalog // the resource template and the prompt
}

// discover imports the bound upstream tools (and writes, when approvals are
// configured). A bound tool that the upstream no longer lists, or lists
// with a schema outside the profile, is left out alone (AllowAbsent): it is
// hidden until the upstream restores it, and never imported wider.
func (g *gateway) discover(ctx context.Context) (catalogs, error) {
	reads, err := mcpimport.Discover(ctx, g.session, bindings(), &mcpimport.Options{Logger: g.logger, AllowAbsent: true})
	if err != nil {
		return catalogs{}, err
	}
	c := catalogs{reads: reads}
	c.features, err = mcpimport.DiscoverFeatures(ctx, g.session, featureBindings(), &mcpimport.Options{Logger: g.logger, AllowAbsent: true})
	if err != nil {
		return catalogs{}, err
	}
	if g.approvals != nil {
		c.writes, err = mcpimport.DiscoverWrites(ctx, g.session, writeBindings(), &mcpimport.WriteOptions{Logger: g.logger, Approvals: g.approvals, AllowAbsent: true})
		if err != nil {
			return catalogs{}, err
		}
	}
	return c, nil
}

// compile builds the snapshot serving c: a new application of its tools.
// A bound tool the discovery left out is withdrawn: in no tools/list,
// answered with mcp_catalog_stale under its binding's scopes, running
// nothing; its callers learn it is gone for now, not that it never
// existed.
func (g *gateway) compile(c catalogs) (*mcpexpose.Snapshot, error) {
	app := agnara.New("directory", &agnara.Options{Version: "0.1.0", Logger: g.logger})
	exp := mcpexpose.New(app)
	for _, cat := range []*mcpimport.Catalog{c.reads, c.writes} {
		if cat == nil {
			continue
		}
		for _, capability := range cat.Register(app) {
			exp.Tool(capability, nil)
		}
		for _, a := range cat.Absent() {
			// The name it has when the upstream serves it: its
			// capability's identity.
			exp.Withdrawn(app.Name()+"."+a.Name, staleFailure(), &mcpexpose.WithdrawnOptions{Scopes: boundScopes(a.Name)})
		}
	}
	// The template and the prompt; one the upstream no longer offers is
	// left out of the lists until it is back.
	for _, r := range c.features.RegisterResources(app) {
		exp.ResourceTemplate(r.Capability, &mcpexpose.ResourceTemplateOptions{URITemplate: r.URITemplate, Name: r.Name, MIMEType: r.MIMEType})
	}
	for _, capability := range c.features.RegisterPrompts(app) {
		exp.Prompt(capability, nil) // directory.welcome_user
	}
	return exp.Compile()
}

// boundScopes are the scopes the host's bindings give each local tool name.
func boundScopes(name string) []string {
	for _, b := range bindings() {
		if b.Name == name {
			return b.Scopes
		}
	}
	for _, b := range writeBindings() {
		if b.Name == name {
			return b.Scopes
		}
	}
	return nil
}

// staleFailure answers every call of a bound tool the upstream no longer
// offers; nothing reaches the upstream.
func staleFailure() *execution.Failure {
	return execution.Fail(execution.Unavailable, "the upstream no longer offers this tool; it comes back when the upstream restores it", nil).
		WithReason(mcpimport.ReasonCatalogStale)
}

func (g *gateway) newHandler(snap *mcpexpose.Snapshot) (*mcpexpose.Handler, error) {
	return mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{
		Timeout:              mcpimport.DefaultLimits().CallTimeout + 5*time.Second,
		Logger:               g.logger,
		DevelopmentPrincipal: &g.principal,
		Swappable:            true, // follow upstream changes without dropping sessions
	}})
}

// load makes the first import and builds the handler serving it, retrying
// with backoff until ctx is done.
func (g *gateway) load(ctx context.Context) error {
	return g.backoff.retry(ctx, g.logger, "import", func() error {
		c, err := g.discover(ctx)
		if err != nil {
			return err
		}
		snap, err := g.compile(c)
		if err != nil {
			return err
		}
		h, err := g.newHandler(snap)
		if err != nil {
			return err
		}
		g.handler.Store(h)
		g.reads, g.writes, g.features = c.reads, c.writes, c.features
		g.logger.Info("imported", slog.String("catalog", c.reads.Snapshot().Digest()), slog.Any("tools", snap.Names()),
			slog.Any("absent", absentNames(c)))
		return nil
	})
}

// follow re-imports each time the served catalog goes stale, with backoff,
// until ctx is done: an explicit host decision, made here at a safe point.
// Meanwhile calls of the stale catalog fail with mcp_catalog_stale.
func (g *gateway) follow(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.reads.Stale(): // read and write catalogs share the monitor: they go stale together
		case <-g.features.Stale(): // resources/list_changed, prompts/list_changed
		}
		if err := g.backoff.retry(ctx, g.logger, "re-import", func() error { return g.reimport(ctx) }); err != nil {
			return // ctx is done
		}
	}
}

// reimport discovers again. When nothing the gateway imports changed, it
// keeps serving the catalogs it has (renewed: no swap, no notification);
// otherwise it hands the handler a snapshot of the new ones, logs what
// changed and counts the swap.
func (g *gateway) reimport(ctx context.Context) error {
	next, err := g.discover(ctx)
	if err != nil {
		return err
	}
	renewed := g.reads.Renew(next.reads)
	if g.writes != nil {
		renewed = g.writes.Renew(next.writes) && renewed
	}
	renewed = g.features.Renew(next.features) && renewed
	if renewed {
		g.logger.Debug("the upstream catalog changed; what the gateway imports did not", slog.String("catalog", g.reads.Snapshot().Digest()))
		return nil
	}
	snap, err := g.compile(next)
	if err != nil {
		return err
	}
	if err := g.swap(snap); err != nil {
		return err
	}
	d := diff(catalogs{g.reads, g.writes, g.features}, next)
	g.reads, g.writes, g.features = next.reads, next.writes, next.features
	g.logger.Info("upstream catalog changed; serving the new one",
		slog.Any("added", d.added), slog.Any("removed", d.removed), slog.Any("changed", d.changed),
		slog.Any("absent", absentNames(next)), slog.String("catalog", next.reads.Snapshot().Digest()))
	if g.swaps != nil { // after the log line, so that a swap counted is a swap logged
		g.swaps.Add(1)
	}
	return nil
}

// swap hands the running handler snap: sessions, streams and calls in
// flight survive, and sessions whose list changed are told. Handler.Swap
// takes only snapshots of the application the handler was built for, and
// every discovery registers new capabilities, so a new application: when
// Swap refuses, the handler is replaced whole, which drops every session,
// and the log says so.
func (g *gateway) swap(snap *mcpexpose.Snapshot) error {
	err := g.handler.Load().Swap(snap)
	if err == nil {
		return nil
	}
	h, herr := g.newHandler(snap)
	if herr != nil {
		return herr
	}
	g.handler.Store(h)
	g.logger.Warn("the running handler refused the new snapshot; replaced it whole, dropping its sessions", slog.String("error", err.Error()))
	return nil
}

// change lists the local tool names a swap adds, removes and changes.
type change struct{ added, removed, changed []string }

func diff(old, next catalogs) change {
	entries := func(c catalogs) map[string]mcpimport.Entry {
		m := map[string]mcpimport.Entry{}
		for _, cat := range []*mcpimport.Catalog{c.reads, c.writes} {
			if cat != nil {
				for _, e := range cat.Snapshot().Entries() {
					m[e.Name] = e
				}
			}
		}
		return m
	}
	before, after := entries(old), entries(next)
	ch := change{added: []string{}, removed: []string{}, changed: []string{}}
	for _, name := range slices.Sorted(maps.Keys(after)) {
		b, ok := before[name]
		switch {
		case !ok:
			ch.added = append(ch.added, name)
		case !sameEntry(b, after[name]):
			ch.changed = append(ch.changed, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, ok := after[name]; !ok {
			ch.removed = append(ch.removed, name)
		}
	}
	return ch
}

func sameEntry(a, b mcpimport.Entry) bool {
	return a.RemoteName == b.RemoteName && a.Title == b.Title && a.Mode == b.Mode && a.Effect == b.Effect &&
		a.Description == b.Description && a.ConcurrencySafe == b.ConcurrencySafe &&
		bytes.Equal(a.InputSchema, b.InputSchema) && bytes.Equal(a.OutputSchema, b.OutputSchema) &&
		(a.Authorization == nil) == (b.Authorization == nil) && (a.Authorization == nil || *a.Authorization == *b.Authorization)
}

// absentNames lists the bound tools, resources and prompts a discovery
// left out, with why.
func absentNames(c catalogs) []string {
	out := []string{}
	for _, cat := range []*mcpimport.Catalog{c.reads, c.writes, c.features} {
		if cat != nil {
			for _, a := range cat.Absent() {
				out = append(out, a.Name+" ("+string(a.Reason)+")")
			}
		}
	}
	return out
}

// upstreamClient returns the HTTP client for the upstream: the gateway's
// own client credentials when configured, never a caller's token, and a
// bound on every response body.
func upstreamClient(ctx context.Context, cfg config) *http.Client {
	base := &http.Client{Transport: agw.LimitBodies(http.DefaultTransport, 4<<20)}
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
