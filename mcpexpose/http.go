package mcpexpose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// maxClockSkew bounds how long after its expiry a token a verifier accepted
// is still let through: verifiers check expiry with their own (smaller)
// leeway.
const maxClockSkew = 5 * time.Minute

// HandlerOptions configures [NewHandler]: what the server behind the
// handler does (Server), who may call it (Tokens, AllowAnonymous,
// Resource, AllowedOrigins), and how much it holds for them (Limits). A
// nil *HandlerOptions, a nil Server or Limits, and every zero field mean
// the documented default.
type HandlerOptions struct {
	// Server configures the MCP server behind the handler, as on any
	// transport. Default: nil, the defaults of [ServerOptions].
	Server *ServerOptions
	// Tokens, when set, verifies the bearer token every request must carry
	// (package mcpexpose/oidc provides one); the verified facts reach the
	// Server.Identity mapper. A request without a token gets 401, one with
	// a bad token 401 with error="invalid_token", and a tools/call for a
	// tool whose scopes the caller lacks 403 with error="insufficient_scope"
	// naming them (unless Server.ForbiddenResult). Default: no tokens; every
	// caller is anonymous.
	Tokens auth.TokenVerifier
	// AllowAnonymous, with Tokens, lets requests without a token through as
	// the anonymous principal instead of answering 401. Requests with a bad
	// token are still refused.
	AllowAnonymous bool
	// Resource, when set, describes the handler as an OAuth 2.0 protected
	// resource (RFC 9728): challenges carry resource_metadata, and
	// [Handler.Metadata] serves the metadata document.
	Resource *Resource
	// AllowedOrigins lists the browser origins ("https://app.example.com")
	// allowed besides the handler's own. A request with any other Origin
	// header is refused with 403. Requests without Origin (non-browser
	// clients) are not affected.
	//
	// Origins are compared as RFC 6454 defines them: scheme, host and port
	// all equal, the host case-insensitively, a missing port as the
	// scheme's default (80 for http, 443 for https). An Origin that is not
	// exactly scheme://host[:port] (a path, even "/", userinfo, a query,
	// "null") matches nothing. The handler's own origin is the request's
	// Host with the scheme of the connection it came on: https over TLS,
	// http otherwise — so behind a proxy that terminates TLS, the public
	// https origin is not the handler's own unless it is listed here or is
	// the origin of Resource.URL, which counts as the handler's own.
	AllowedOrigins []string
	// Limits bounds what the handler holds for its callers: the size of a
	// request, the sessions and streams open at once and how long each
	// lives, the memory kept to resume streams. Default: nil, the
	// defaults of [Limits].
	Limits *Limits
	// DisableFastPath sends every request through the SDK's streamable
	// HTTP handler. By default a single tools/call or tools/list POST
	// that passes every check the SDK makes, at 2026-07-28 or on a
	// handshake-era session, is answered by the handler itself, with the
	// same bytes (a whole event stream sent with its length, where the SDK
	// chunks it; a call's progress and logs flushed event by event, as the
	// SDK sends them) and a fraction of the CPU (docs/PERFORMANCE.md, ADR
	// 68, ADR 74); everything else always goes to the SDK. Turn it off to
	// rule it out when chasing a wire problem.
	DisableFastPath bool
}

// Resource is what an OAuth protected resource publishes about itself.
type Resource struct {
	// URL is the canonical resource URI of the MCP endpoint, such as
	// "https://api.example.com/mcp": what tokens must be issued for.
	URL string
	// AuthorizationServers are the issuers clients may get tokens from.
	AuthorizationServers []string
}

// Handler serves a snapshot over MCP's streamable HTTP transport, both
// protocol eras on one URL: 2026-07-28 requests statelessly, and the
// handshake era (2025-11-25, 2025-06-18) with sessions; no other revision
// is negotiated or advertised (an initialize asking for an older one is
// answered 2025-11-25). It mounts at any path of a net/http mux or router.
// It is safe for concurrent use.
type Handler struct {
	srv       *server
	inner     http.Handler // route, behind the SDK's bearer middleware when tokens are used
	stateless http.Handler
	stateful  http.Handler
	events    *eventStore   // the stateful handler's
	sessions  *sessions     // the stateful handler's, counted
	streams   *streams      // open listen streams, counted
	keepAlive time.Duration // Limits.StreamKeepAlive (keepalive.go)
	origins   []wire.Origin // allowed besides the request's own
	maxBody   int64
	logger    *slog.Logger

	tokens      auth.TokenVerifier
	anonymous   bool
	stepUp      bool
	metaURL     string // resource metadata URL, "" without Resource
	metaPaths   []string
	resource    Resource
	metaHandler http.Handler                    // serves meta
	meta        atomic.Pointer[metadataHandler] // the current snapshot's document

	fast       bool                     // the fast path is on (fastpath.go)
	fastServed atomic.Int64             // requests it answered
	fastCaps   atomic.Pointer[capsMemo] // the last fast-path call's client capabilities (fastpath.go)
	// fastDecided, when set (by tests only), runs once the fast path has
	// decided to answer a tools/call on its snapshot, before the call runs,
	// with the call's context.
	fastDecided func(context.Context)
}

// metadataHandler serves one snapshot's protected-resource metadata.
type metadataHandler struct{ http.Handler }

// NewHandler returns the HTTP handler for snap.
//
// Before the SDK sees a request, the handler refuses a foreign Origin (403),
// a body over the limit (413), a body that is not JSON (400, JSON-RPC
// parse error), and a new handshake-era session or a 2026-07-28
// subscriptions/listen past its caps (503). The SDK checks the Host header
// of loopback listeners (DNS rebinding protection). A tools/call's task parameter is ignored, as on
// every transport: this server runs no tasks, and the tasks extension says
// a tool that does not run as a task ignores it.
//
// Without Tokens no caller can hold a scope it was not given up front:
// every request is anonymous (no scope at all) or, with
// Server.DevelopmentPrincipal, acts as that principal (its scopes only),
// and the identity mapper never runs. A tool whose scopes that caller does
// not all hold is then hidden from everyone; NewHandler logs one warning
// naming how many such tools there are and the scopes they need, through
// Server.Logger (or the application's logger; standard error when that
// discards warnings).
func NewHandler(snap *Snapshot, opts *HandlerOptions) (*Handler, error) {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	lim, err := o.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	var so ServerOptions
	if o.Server != nil {
		so = *o.Server
	}
	origins := make([]wire.Origin, 0, len(o.AllowedOrigins)+1)
	for _, s := range o.AllowedOrigins {
		org, ok := wire.ParseOrigin(s)
		if !ok {
			return nil, errors.New("mcpexpose: AllowedOrigins entries must be origins such as https://app.example.com, got " + s)
		}
		origins = append(origins, org)
	}
	if o.Resource != nil && so.Audience == "" {
		so.Audience = o.Resource.URL
	}
	srv, err := newServer(snap, &so, true)
	if err != nil {
		return nil, err
	}
	if o.AllowAnonymous && o.Tokens == nil {
		return nil, errors.New("mcpexpose: AllowAnonymous needs Tokens: without tokens every caller is anonymous already")
	}
	if o.Tokens == nil {
		srv.warnUnreachable(snap)
	}
	srv.streamLifetime = max(lim.StreamLifetime, 0)
	srv.pollAfter, srv.pollRetry = lim.PollAfter, lim.PollRetry
	get := func(*http.Request) *mcp.Server { return srv.mcp }
	events := newEventStore(lim.ReplayBytes)
	// With the fast path on, the edge answers sessions' ordinary calls and
	// so keeps their idle timers (handshake.go); otherwise the SDK does.
	var edgeIdle, sdkIdle time.Duration = lim.SessionTimeout, 0
	if o.DisableFastPath {
		edgeIdle, sdkIdle = 0, lim.SessionTimeout
	}
	sessions := newSessions(lim.MaxSessions, lim.MaxSessionsPerPrincipal, o.Tokens != nil, edgeIdle, srv.mcp, srv.logger)
	srv.levelSet = sessions.setLevel
	h := &Handler{
		stateless: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			Logger:                       srv.sdkLogger,
			MaxRequestBodyBytes:          lim.MaxBodyBytes,
			PropagateRequestCancellation: true,
		}),
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			// Not the SDK's MemoryEventStore: it keeps an entry for every
			// stream (every POST) of a session until the session ends.
			EventStore:          countingStore{events, sessions},
			Logger:              srv.sdkLogger,
			MaxRequestBodyBytes: lim.MaxBodyBytes,
			SessionTimeout:      sdkIdle,
		}),
		events:    events,
		sessions:  sessions,
		streams:   newStreams(lim.MaxStreams, lim.MaxStreamsPerPrincipal, o.Tokens != nil, srv.logger),
		keepAlive: lim.StreamKeepAlive,
		origins:   origins,
		maxBody:   lim.MaxBodyBytes,
		logger:    srv.logger,
		srv:       srv,
		tokens:    o.Tokens,
		anonymous: o.AllowAnonymous,
		stepUp:    o.Tokens != nil && !so.ForbiddenResult,
		fast:      !o.DisableFastPath,
	}
	h.sessions.meter, h.streams.meter = so.Meter, so.Meter
	h.inner = http.HandlerFunc(h.route)
	if o.Tokens != nil {
		// The SDK reads verified token facts from a context key only its
		// bearer middleware sets; hand it the facts verified in ServeHTTP.
		h.inner = auth.RequireBearerToken(verified, &auth.RequireBearerTokenOptions{ClockSkew: maxClockSkew})(h.inner)
	}
	if o.Resource != nil {
		if err := h.setResource(*o.Resource, snap); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// setResource prepares the RFC 9728 metadata document and its URLs.
func (h *Handler) setResource(res Resource, snap *Snapshot) error {
	u, err := url.Parse(res.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		return fmt.Errorf("mcpexpose: Resource.URL %q must be an absolute http(s) URI without query or fragment", res.URL)
	}
	for _, as := range res.AuthorizationServers {
		if a, err := url.Parse(as); err != nil || a.Scheme == "" || a.Host == "" {
			return fmt.Errorf("mcpexpose: authorization server %q must be an absolute URL", as)
		}
	}
	const wellKnown = "/.well-known/oauth-protected-resource"
	path := strings.TrimSuffix(u.Path, "/")
	h.metaPaths = []string{wellKnown}
	if path != "" {
		h.metaPaths = append(h.metaPaths, wellKnown+path)
	}
	h.metaURL = u.Scheme + "://" + u.Host + wellKnown + path
	if org, ok := wire.ParseOrigin(u.Scheme + "://" + u.Host); ok {
		// The resource's public origin is the handler's own, also behind a
		// proxy that changes the scheme or the Host.
		h.origins = append(h.origins, org)
	}
	h.resource = res
	h.resource.AuthorizationServers = slices.Clone(res.AuthorizationServers)
	h.setMetadata(snap)
	h.metaHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.meta.Load().ServeHTTP(w, r) })
	return nil
}

// setMetadata publishes snap's scopes in the metadata document, when there
// is one.
func (h *Handler) setMetadata(snap *Snapshot) {
	if h.metaURL == "" {
		return
	}
	h.meta.Store(&metadataHandler{auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:               h.resource.URL,
		AuthorizationServers:   slices.Clone(h.resource.AuthorizationServers),
		ScopesSupported:        snap.Scopes(),
		BearerMethodsSupported: []string{"header"},
	})})
}

// Metadata returns the handler of the protected-resource metadata document
// (RFC 9728), or nil without HandlerOptions.Resource. Serve it at every path
// of [Handler.MetadataPaths], at the root of the resource's host.
func (h *Handler) Metadata() http.Handler { return h.metaHandler }

// MetadataPaths returns the paths the metadata document is looked up at:
// "/.well-known/oauth-protected-resource" and its form suffixed with the
// resource's path, such as "/.well-known/oauth-protected-resource/mcp".
func (h *Handler) MetadataPaths() []string { return slices.Clone(h.metaPaths) }

// Router is what [Handler.Mount] mounts on: an *http.ServeMux, a chi.Router
// and most routers have this method.
type Router interface {
	Handle(pattern string, h http.Handler)
}

// Mount registers the handler at path on r, and the metadata document, when
// there is one, at its well-known paths.
func (h *Handler) Mount(r Router, path string) {
	r.Handle(path, h)
	if h.metaHandler != nil {
		for _, p := range h.metaPaths {
			r.Handle(p, h.metaHandler)
		}
	}
}

// challenge answers with a Bearer WWW-Authenticate challenge (RFC 6750,
// RFC 9728) and a JSON-RPC error body.
func (h *Handler) challenge(w http.ResponseWriter, status int, errCode, scope, msg string) {
	h.challengeID(w, nil, status, errCode, scope, msg)
}

func (h *Handler) challengeID(w http.ResponseWriter, id json.RawMessage, status int, errCode, scope, msg string) {
	var params []string
	if errCode != "" {
		params = append(params, fmt.Sprintf("error=%q", errCode))
	}
	if scope != "" {
		params = append(params, fmt.Sprintf("scope=%q", scope))
	}
	if h.metaURL != "" {
		params = append(params, fmt.Sprintf("resource_metadata=%q", h.metaURL))
	}
	challenge := "Bearer"
	if len(params) > 0 {
		challenge += " " + strings.Join(params, ", ")
	}
	w.Header().Set("WWW-Authenticate", challenge)
	wire.WriteError(w, status, id, jsonrpc.CodeInvalidRequest, msg)
}

// originAllowed reports whether the Origin header value is r's own origin
// or an allowed one (see HandlerOptions.AllowedOrigins).
func (h *Handler) originAllowed(value string, r *http.Request) bool {
	o, ok := wire.ParseOrigin(value)
	if !ok {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if own, ok := wire.ParseOrigin(scheme + "://" + r.Host); ok && o == own {
		return true
	}
	return slices.Contains(h.origins, o)
}
