package gateway_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/astest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// consentWorld is one authorization server (the real one of
// internal/astest) that both the gateway's callers and the upstream trust,
// one upstream that takes only tokens for its own URL, and one gateway
// with credentials consent: each person connects the upstream once, by
// signing in at the gateway's pages and then at the upstream's
// authorization server, through a link the gateway asks their client to
// open.
type consentWorld struct {
	as          *astest.Server
	upstreamURL string
	gatewayBase string
	gatewayURL  string
	upstream    *tokenLog
	store       *approval.SQLiteStore
	log         *mcptest.Buffer
	audit       *mcptest.Buffer
}

const (
	consentKeyEnv    = "GATEWAY_TEST_CONNECTIONS_KEY"
	consentSecretEnv = "GATEWAY_TEST_CONSENT_SECRET"
)

func newConsentWorld(t *testing.T, users ...string) *consentWorld {
	return newConsentWorldWith(t, "", users...)
}

// newConsentWorldWith is newConsentWorld whose authorization server issues
// access tokens for lifetime ("" for its default).
func newConsentWorldWith(t *testing.T, lifetime string, users ...string) *consentWorld {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	t.Setenv(consentKeyEnv, base64.StdEncoding.EncodeToString(key))
	t.Setenv(consentSecretEnv, "consent-secret")
	t.Setenv(gwClientSecretEnv, gwClientSecret)
	upLn, upBase := loopback(t)
	gwLn, gwBase := loopback(t)
	w := &consentWorld{upstreamURL: upBase + "/mcp", gatewayBase: gwBase, gatewayURL: gwBase + "/mcp", upstream: &tokenLog{}, log: &mcptest.Buffer{}, audit: &mcptest.Buffer{}}
	cfg := astest.Config{Clients: []astest.Client{
		{ // the gateway's own identity, for discovery
			ID: "gateway", Secret: gwClientSecret, GrantTypes: []string{"client_credentials"},
			Audiences: []string{w.upstreamURL}, Scopes: []string{"orders.read"},
		},
		{ // the gateway's pages: people sign in there
			ID: "gateway-web", Secret: "web-secret", RedirectURIs: []string{"http://127.0.0.1/connections/signed-in"},
			GrantTypes: []string{"authorization_code"}, Scopes: []string{"openid"},
		},
		{ // the gateway's client at the upstream's authorization server
			ID: "gateway-orders", Secret: "consent-secret", RedirectURIs: []string{"http://127.0.0.1/connections/callback"},
			GrantTypes: []string{"authorization_code", "refresh_token"},
			Audiences:  []string{w.upstreamURL}, Scopes: []string{"orders.read", "offline_access"},
		},
		{ // the callers' MCP clients
			ID: "agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
			GrantTypes: []string{"authorization_code"}, Audiences: []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read"},
		},
		{
			ID: "other-agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
			GrantTypes: []string{"authorization_code"}, Audiences: []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read"},
		},
	}, AccessTokenLifetime: lifetime}
	for _, u := range users {
		cfg.Users = append(cfg.Users, astest.User{Subject: u, Username: u, Password: u + "-pw"})
	}
	w.as = astest.Start(t, cfg)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := oidc.NewVerifier(ctx, w.as.Issuer(), w.upstreamURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "who called"}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"sub=" + req.Extra.TokenInfo.UserID}, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	recording := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		claims := astest.Claims(t, token)
		sum := sha256.Sum256([]byte(token))
		w.upstream.add(seenToken{method: r.Header.Get("Mcp-Method"), sub: fmt.Sprint(claims["sub"]), aud: audiences(claims["aud"]), digest: hex.EncodeToString(sum[:8])}, token)
		return v.Verify(ctx, token, r)
	}
	up := &httptest.Server{Listener: upLn, Config: &http.Server{Handler: auth.RequireBearerToken(recording, nil)(sdk)}}
	up.Start()
	t.Cleanup(up.Close)

	dbPath := filepath.Join(t.TempDir(), "approvals.db")
	gcfg := gateway.Config{
		Auth:      gateway.Auth{Issuer: w.as.Issuer(), Resource: w.gatewayURL},
		Approvals: gateway.Approvals{SQLite: dbPath},
		Connections: &gateway.Connections{URL: gwBase, KeyEnv: consentKeyEnv,
			SignIn: gateway.ClientRegistration{ClientID: "gateway-web", ClientSecretEnv: "GATEWAY_TEST_WEB_SECRET"}},
		Upstreams: []gateway.Upstream{{
			Name: "orders",
			HTTP: &gateway.HTTPUpstream{
				URL: w.upstreamURL, Credentials: gateway.CredentialsConsent,
				Consent: &gateway.Consent{AuthorizationServer: w.as.Issuer(), ClientID: "gateway-orders", ClientSecretEnv: consentSecretEnv,
					Scopes: []string{"orders.read", "offline_access"}},
				OAuth: &gateway.ClientCredentials{TokenURL: w.as.TokenURL(), ClientID: "gateway", ClientSecretEnv: gwClientSecretEnv, Scopes: []string{"orders.read"}},
			},
			Tools: []gateway.Tool{{Remote: "whoami", Title: "Who am I", Scopes: []string{"orders.read"}, ConcurrencySafe: true}},
		}},
		Lock: filepath.Join(t.TempDir(), "gateway.lock"),
	}
	t.Setenv("GATEWAY_TEST_WEB_SECRET", "web-secret")
	opts := &gateway.Options{
		Logger: slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Audit:  mcpexpose.NewSlogAudit(slog.New(slog.NewJSONHandler(w.audit, nil))),
	}
	accept(t, gcfg, opts)
	g, err := gateway.New(gcfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: gwLn, Config: &http.Server{Handler: g}}
	srv.Start()
	t.Cleanup(func() {
		srv.Close()
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	// The same database, as an operator's tools (and the inbox) open it.
	w.store, err = approval.OpenSQLite(dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.store.Close() })
	return w
}

// signIn is a caller's token for the gateway, through client.
func (w *consentWorld) signIn(t *testing.T, client, user string) string {
	t.Helper()
	return w.as.SignIn(t, astest.SignInRequest{
		ClientID: client, ClientSecret: "agent-secret", Username: user, Password: user + "-pw",
		Scopes: []string{"openid", "orders.read"}, Resource: w.gatewayURL, RedirectURI: "http://127.0.0.1:9/cb",
	}).AccessToken
}

// opener answers the gateway's URL questions: it records each URL and
// hands it to open, which plays the person's browser.
type opener struct {
	mu   sync.Mutex
	urls []string
	open func(url string) error
}

func (o *opener) asked() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.urls)
}

// connectAs connects an MCP client declaring URL elicitations to the
// gateway with token, at protocol ("" for the newest).
func (w *consentWorld) connectAs(t *testing.T, token, protocol string, o *opener) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	copts := &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if req.Params.Mode != "url" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			o.mu.Lock()
			o.urls = append(o.urls, req.Params.URL)
			o.mu.Unlock()
			if err := o.open(req.Params.URL); err != nil {
				t.Errorf("the person's browser: %v", err)
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, copts).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: w.gatewayURL, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// browser is a person's browser, as plain HTTP with cookies: it follows
// redirects and submits forms.
type browser struct {
	c    *http.Client
	page string
	at   *url.URL
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

func (b *browser) do(req *http.Request) error {
	res, err := b.c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	b.page, b.at = string(body), res.Request.URL
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: status %d: %s", res.Request.URL, res.StatusCode, pageText(b.page))
	}
	return err
}

func (b *browser) get(u string) error {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	return b.do(req)
}

var (
	formTag  = regexp.MustCompile(`(?is)<form\b[^>]*>`)
	inputTag = regexp.MustCompile(`(?is)<input\b[^>]*>`)
	attrPat  = regexp.MustCompile(`(?is)\b([a-z-]+)\s*=\s*"([^"]*)"`)
	tagPat   = regexp.MustCompile(`(?s)<[^>]*>`)
)

func pageText(p string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tagPat.ReplaceAllString(p, " "))), " ")
}

func tagAttrs(tag string) map[string]string {
	m := map[string]string{}
	for _, a := range attrPat.FindAllStringSubmatch(tag, -1) {
		m[strings.ToLower(a[1])] = html.UnescapeString(a[2])
	}
	return m
}

// submit posts the page's first form with its hidden inputs and fields.
func (b *browser) submit(fields map[string]string) error {
	tag := formTag.FindString(b.page)
	if tag == "" {
		return fmt.Errorf("no form on %s: %s", b.at, pageText(b.page))
	}
	action, err := b.at.Parse(tagAttrs(tag)["action"])
	if err != nil {
		return err
	}
	form := url.Values{}
	body := b.page[strings.Index(b.page, tag):]
	if end := strings.Index(body, "</form>"); end >= 0 {
		body = body[:end]
	}
	for _, in := range inputTag.FindAllString(body, -1) {
		a := tagAttrs(in)
		if a["type"] == "hidden" && a["name"] != "" {
			form.Set(a["name"], a["value"])
		}
	}
	for k, v := range fields {
		form.Set(k, v)
	}
	req, err := http.NewRequest(http.MethodPost, action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// connectBrowser plays a person who opens link, signs in as user where asked
// (the gateway's pages, then the upstream's authorization server), and
// allows the connection.
func connectBrowser(b *browser, link, user string) error {
	if err := b.get(link); err != nil {
		return err
	}
	for range 4 {
		switch {
		case strings.Contains(b.page, `id="login"`):
			if err := b.submit(map[string]string{"username": user, "password": user + "-pw"}); err != nil {
				return err
			}
		case strings.Contains(b.page, `id="allow"`):
			if err := b.submit(nil); err != nil {
				return err
			}
		case strings.Contains(b.page, `<h1 id="title">Connected</h1>`):
			return nil
		default:
			return fmt.Errorf("unexpected page %s: %s", b.at, pageText(b.page))
		}
	}
	return fmt.Errorf("not connected after four pages; at %s: %s", b.at, pageText(b.page))
}

// TestConsentSignInByURL is issue 40's floor for the caller's consent, in
// Go: a caller without a grant is asked to open the gateway's page (a URL
// elicitation), the person signs in there and at the upstream's
// authorization server and allows it, and the call completes once, with
// the person's own subject and the upstream's audience, at both
// revisions. The grant is sealed in the approval store, per person and
// client; another client of the same person is asked again; a revocation
// in the store stops the next call, which asks again; no token is in the
// log.
func TestConsentSignInByURL(t *testing.T) {
	w := newConsentWorld(t, "alice", "bob")
	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			w.forget(t, "alice")
			b := newBrowser(t)
			o := &opener{open: func(link string) error { return connectBrowser(b, link, "alice") }}
			cs := w.connectAs(t, w.signIn(t, "agent", "alice"), protocol, o)
			before := len(w.upstream.calls())
			text, isErr := call(t, cs, "gateway.whoami", map[string]any{})
			if isErr || text != `{"text":"sub=alice"}` {
				t.Fatalf("alice's call after connecting: %s", text)
			}
			if got := o.asked(); len(got) != 1 || got[0] != w.gatewayBase+"/connections/start?client=agent&upstream=orders" {
				t.Errorf("the URLs asked: %q", got)
			}
			calls := w.upstream.calls()[before:]
			if len(calls) != 1 || calls[0].sub != "alice" || !slices.Equal(calls[0].aud, []string{w.upstreamURL}) {
				t.Errorf("the upstream saw %+v, want one call as alice for itself", calls)
			}
			// Connected: the next call asks nothing.
			if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
				t.Fatalf("alice's second call: %s", text)
			}
			if n := len(o.asked()); n != 1 {
				t.Errorf("asked %d times, want once", n)
			}
		})
	}
}

// forget deletes every grant of user, as a revocation does.
func (w *consentWorld) forget(t *testing.T, user string) {
	t.Helper()
	p := policy.NewPrincipal(user, nil).WithIssuer(w.as.Issuer())
	conns, err := w.store.ListConnections(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		if _, err := w.store.DeleteConnection(context.Background(), p, c.Upstream, c.ClientID); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConsentIsPerClientAndRevocable: a grant alice gave for one client is
// not used for another of hers, which is asked to connect too; revoked on
// the gateway's connections page (her own grants only), it stops working
// on the next call, which asks her again; and her grant is refreshed when
// its access token expires, without asking.
func TestConsentIsPerClientAndRevocable(t *testing.T) {
	w := newConsentWorldWith(t, "20s", "alice") // within the gateway's 30 s margin: every use refreshes
	b := newBrowser(t)
	o := &opener{open: func(link string) error { return connectBrowser(b, link, "alice") }}
	agent := w.connectAs(t, w.signIn(t, "agent", "alice"), "", o)
	other := w.connectAs(t, w.signIn(t, "other-agent", "alice"), "", o)
	for i, cs := range []*mcp.ClientSession{agent, other, agent} {
		if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
			t.Fatalf("call %d: %s", i, text)
		}
	}
	if got := o.asked(); len(got) != 2 || !strings.Contains(got[0], "client=agent") || !strings.Contains(got[1], "client=other-agent") {
		t.Fatalf("asked %q, want once per client", got)
	}
	calls := w.upstream.calls()
	if len(calls) != 3 || calls[0].digest == calls[2].digest {
		t.Errorf("agent's two calls reached the upstream with the same access token: its grant was not refreshed (%+v)", calls)
	}
	p := policy.NewPrincipal("alice", nil).WithIssuer(w.as.Issuer())
	list, err := w.store.ListConnections(context.Background(), p)
	if err != nil || len(list) != 2 {
		t.Fatalf("alice's grants: %+v (%v)", list, err)
	}

	// Revoked on the gateway's connections page, in alice's browser.
	if err := b.get(w.gatewayBase + "/connections/"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.page, `id="revoke-orders"`) || strings.Count(b.page, `class="revoke"`) != 2 {
		t.Fatalf("alice's connections page: %s", pageText(b.page))
	}
	// The first form is the page's first grant: orders through agent.
	if err := b.submit(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.store.LoadConnection(context.Background(), p, "orders", "agent"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("agent's grant after revoking it: %v", err)
	}
	if _, err := w.store.LoadConnection(context.Background(), p, "orders", "other-agent"); err != nil {
		t.Errorf("other-agent's grant after revoking agent's: %v", err)
	}
	if text, isErr := call(t, agent, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
		t.Fatalf("the call after revoking: %s", text)
	}
	if n := len(o.asked()); n != 3 {
		t.Errorf("the call after revoking asked %d times in all, want 3: the revoked grant was used", n)
	}
	for _, raw := range append(w.upstream.rawTokens(), w.signIn(t, "agent", "alice")) {
		if strings.Contains(w.log.String(), raw) || strings.Contains(w.audit.String(), raw) {
			t.Fatal("a token is in the gateway's log or audit trail")
		}
	}
	// Four calls answered, three rounds that asked to connect: each record
	// names the credential.
	records := strings.Split(strings.TrimSpace(w.audit.String()), "\n")
	ok, asked := 0, 0
	for _, r := range records {
		if !strings.Contains(r, `"credential":"consent"`) {
			t.Errorf("a record without the credential: %s", r)
		}
		ok += strings.Count(r, `"outcome":"ok"`)
		asked += strings.Count(r, `"outcome":"input_required"`)
	}
	if ok != 4 || asked != 3 {
		t.Errorf("audit: %d ok and %d input_required records, want 4 and 3:\n%s", ok, asked, w.audit.String())
	}
}

// TestConsentLinkConnectsWhoSignsIn: the link the gateway asks alice's
// client to open connects whoever signs in on it, for themselves: bob,
// opening it, connects his own grant, and alice still has none. A
// callback without the flow this browser started keeps nothing.
func TestConsentLinkConnectsWhoSignsIn(t *testing.T) {
	w := newConsentWorld(t, "alice", "bob")
	link := w.gatewayBase + "/connections/start?client=agent&upstream=orders"
	b := newBrowser(t)
	if err := connectBrowser(b, link, "bob"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := w.store.LoadConnection(ctx, policy.NewPrincipal("bob", nil).WithIssuer(w.as.Issuer()), "orders", "agent"); err != nil {
		t.Errorf("bob's grant: %v", err)
	}
	alice := policy.NewPrincipal("alice", nil).WithIssuer(w.as.Issuer())
	if list, _ := w.store.ListConnections(ctx, alice); len(list) != 0 {
		t.Errorf("alice has grants she never gave: %+v", list)
	}
	// Signed in as alice, a callback that no flow of this browser made.
	a := newBrowser(t)
	if err := a.get(w.gatewayBase + "/connections/"); err != nil || !strings.Contains(a.page, `id="login"`) {
		t.Fatalf("the connections page without a sign-in: %v %s", err, pageText(a.page))
	}
	if err := a.submit(map[string]string{"username": "alice", "password": "alice-pw"}); err != nil || !strings.Contains(a.page, `id="none"`) {
		t.Fatalf("alice's connections page: %v %s", err, pageText(a.page))
	}
	err := a.get(w.gatewayBase + "/connections/callback?code=stolen&state=guessed")
	if err == nil || !strings.Contains(err.Error(), "status 400") {
		t.Errorf("a callback without a flow: %v", err)
	}
	if list, _ := w.store.ListConnections(ctx, alice); len(list) != 0 {
		t.Errorf("a callback without a flow kept a grant: %+v", list)
	}
	// Another Host: refused before anything.
	req, _ := http.NewRequest(http.MethodGet, w.gatewayBase+"/connections/", nil)
	req.Host = "evil.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("the pages under another Host: %d, want 421", res.StatusCode)
	}
}
