package gateway_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
	"github.com/agnara-go/agnara/prommcp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exchangeWorld is one authorization server (the real one of
// internal/astest), one upstream that takes only tokens whose audience is
// its own URL and records every token it is sent, and one gateway between
// them with credentials token_exchange.
type exchangeWorld struct {
	as          *astest.Server
	upstreamURL string
	gatewayURL  string
	upstream    *tokenLog
	gw          *gateway.Gateway
	log         *mcptest.Buffer
	audit       *mcptest.Buffer
	approvals   *approval.SQLiteStore
	metrics     *prommcp.Metrics
}

// tokenLog is what the upstream saw: the subject, audience and digest of
// each token, by the method of the request it came with.
type tokenLog struct {
	mu   sync.Mutex
	seen []seenToken
	raw  []string // every token, to look for in logs
}

type seenToken struct {
	method, sub, digest string
	aud                 []string
}

func (l *tokenLog) add(s seenToken, raw string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, s)
	l.raw = append(l.raw, raw)
}

func (l *tokenLog) rawTokens() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.raw)
}

func (l *tokenLog) calls() []seenToken {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []seenToken
	for _, s := range l.seen {
		if s.method == "tools/call" {
			out = append(out, s)
		}
	}
	return out
}

const (
	gwClientSecretEnv = "GATEWAY_TEST_EXCHANGE_SECRET"
	gwClientSecret    = "gw-secret"
)

// loopback returns a listener on a free loopback port and its http URL.
func loopback(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String()
}

func newExchangeWorld(t *testing.T, users ...string) *exchangeWorld {
	t.Helper()
	t.Setenv(gwClientSecretEnv, gwClientSecret)
	upLn, upBase := loopback(t)
	gwLn, gwBase := loopback(t)
	w := &exchangeWorld{upstreamURL: upBase + "/mcp", gatewayURL: gwBase + "/mcp", upstream: &tokenLog{}, log: &mcptest.Buffer{}, audit: &mcptest.Buffer{}}
	cfg := astest.Config{
		Clients: []astest.Client{
			{ // the gateway: its own identity for discovery, and the exchange
				ID: "gateway", Secret: gwClientSecret,
				GrantTypes: []string{"client_credentials", "urn:ietf:params:oauth:grant-type:token-exchange"},
				Audiences:  []string{w.upstreamURL}, Scopes: []string{"orders.read"},
			},
			{ // the callers' MCP client
				ID: "agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
				GrantTypes: []string{"authorization_code", "refresh_token"},
				Audiences:  []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read"},
			},
		},
	}
	for _, u := range users {
		cfg.Users = append(cfg.Users, astest.User{Subject: u, Username: u, Password: u + "-pw"})
	}
	w.as = astest.Start(t, cfg)

	// The upstream: the MCP Go SDK's server behind its own bearer check,
	// with this module's verifier for its own URL as the audience.
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
	mcp.AddTool(server, &mcp.Tool{Name: "note", Description: "keeps a note"}, func(_ context.Context, req *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{req.Extra.TokenInfo.UserID + " noted " + in.Text}, nil
	})
	// Stateless: the SDK's only way to serve 2026-07-28 (docs/SDK notes).
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

	gcfg := gateway.Config{
		Auth: gateway.Auth{Issuer: w.as.Issuer(), Resource: w.gatewayURL},
		Upstreams: []gateway.Upstream{{
			Name: "orders",
			HTTP: &gateway.HTTPUpstream{
				URL: w.upstreamURL, Credentials: gateway.CredentialsTokenExchange,
				TokenExchange: &gateway.TokenExchange{TokenURL: w.as.TokenURL(), ClientID: "gateway", ClientSecretEnv: gwClientSecretEnv, Scopes: []string{"orders.read"}},
				OAuth:         &gateway.ClientCredentials{TokenURL: w.as.TokenURL(), ClientID: "gateway", ClientSecretEnv: gwClientSecretEnv, Scopes: []string{"orders.read"}},
			},
			Tools: []gateway.Tool{
				{Remote: "whoami", Title: "Who am I", Scopes: []string{"orders.read"}, ConcurrencySafe: true},
				{Remote: "note", Title: "Keep a note", Scopes: []string{"orders.read"}, Write: "write"},
			},
		}},
		Lock: filepath.Join(t.TempDir(), "gateway.lock"),
	}
	var err2 error
	if w.approvals, err2 = approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil); err2 != nil {
		t.Fatal(err2)
	}
	t.Cleanup(func() { w.approvals.Close() })
	if w.metrics, err2 = prommcp.New(nil); err2 != nil {
		t.Fatal(err2)
	}
	opts := &gateway.Options{
		Logger:    slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Audit:     mcpexpose.NewSlogAudit(slog.New(slog.NewJSONHandler(w.audit, nil))),
		Approvals: w.approvals,
		Meter:     w.metrics,
	}
	accept(t, gcfg, opts)
	g, err := gateway.New(gcfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w.gw = g
	if err := errors.Join(w.metrics.Gateway(g), w.metrics.Handler(g)); err != nil {
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
	return w
}

func audiences(v any) []string {
	switch a := v.(type) {
	case string:
		return []string{a}
	case []any:
		var out []string
		for _, s := range a {
			out = append(out, fmt.Sprint(s))
		}
		return out
	}
	return nil
}

// signIn signs user in at the authorization server through the callers'
// client, for the gateway: the authorization-code flow with PKCE.
func (w *exchangeWorld) signIn(t *testing.T, user string) string {
	t.Helper()
	tok := w.as.SignIn(t, astest.SignInRequest{
		ClientID: "agent", ClientSecret: "agent-secret", Username: user, Password: user + "-pw",
		Scopes: []string{"openid", "orders.read"}, Resource: w.gatewayURL, RedirectURI: "http://127.0.0.1:9/cb",
	})
	return tok.AccessToken
}

// bearer is an HTTP transport that sends token with every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// connectAs connects to the gateway with token.
func (w *exchangeWorld) connectAs(t *testing.T, token string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: w.gatewayURL, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestTokenExchangeActsForEachCaller is issue 40's floor for per-caller
// credentials: two callers, one gateway, one upstream that records the
// subject and audience of every token it receives. Each of 50 interleaved
// calls arrives upstream with its own caller's subject and the upstream's
// audience, never the other caller's; each caller's exchange happens once
// and is kept; the caller's own token, replayed to the upstream, is
// refused there (wrong audience); no token reaches a log line or the audit
// trail, whose records name the credential.
func TestTokenExchangeActsForEachCaller(t *testing.T) {
	w := newExchangeWorld(t, "alice", "bob")
	tokens := map[string]string{"alice": w.signIn(t, "alice"), "bob": w.signIn(t, "bob")}
	sessions := map[string]*mcp.ClientSession{"alice": w.connectAs(t, tokens["alice"]), "bob": w.connectAs(t, tokens["bob"])}

	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 50 {
		who := []string{"alice", "bob"}[i%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := sessions[who].CallTool(ctx, &mcp.CallToolParams{Name: "gateway.whoami", Arguments: map[string]any{}})
			switch {
			case err != nil:
				errs <- fmt.Errorf("%s: %v", who, err)
			case res.IsError:
				errs <- fmt.Errorf("%s: failed: %v", who, res.Content)
			case len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `{"text":"sub=`+who+`"}`:
				errs <- fmt.Errorf("%s's call reached the upstream as %s", who, res.Content[0].(*mcp.TextContent).Text)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	calls := w.upstream.calls()
	if len(calls) != 50 {
		t.Fatalf("the upstream saw %d calls, want 50", len(calls))
	}
	digests := map[string]string{}
	for _, c := range calls {
		if !slices.Equal(c.aud, []string{w.upstreamURL}) {
			t.Errorf("a call reached the upstream with audience %q, want only %q", c.aud, w.upstreamURL)
		}
		if prev, ok := digests[c.digest]; ok && prev != c.sub {
			t.Errorf("one token served %s and %s", prev, c.sub)
		}
		digests[c.digest] = c.sub
	}
	if len(digests) != 2 {
		t.Errorf("the upstream saw %d distinct caller tokens, want 2 (one exchange per caller, kept): %v", len(digests), digests)
	}

	// The caller's own token, replayed to the upstream directly.
	for who, tok := range tokens {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		req, _ := http.NewRequest(http.MethodPost, w.upstreamURL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s's own token replayed to the upstream: status %d, want 401", who, res.StatusCode)
		}
	}

	// No token in the gateway's log (at debug), the audit trail or the
	// metrics.
	rec := httptest.NewRecorder()
	w.metrics.HTTPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "agnara_mcp_") {
		t.Fatalf("the metrics hold no agnara series:\n%s", rec.Body.String())
	}
	for _, tok := range append(w.upstream.rawTokens(), tokens["alice"], tokens["bob"]) {
		if strings.Contains(w.log.String(), tok) || strings.Contains(w.audit.String(), tok) || strings.Contains(rec.Body.String(), tok) {
			t.Fatal("a token is in the gateway's log, audit trail or metrics")
		}
	}
	records := strings.Count(w.audit.String(), `"credential":"token_exchange"`)
	if records != 50 {
		t.Errorf("%d audit records name the credential token_exchange, want 50:\n%s", records, w.audit.String())
	}
}

// TestTokenExchangeRefusedEndsTheCall: when the authorization server
// refuses the exchange (the caller's token was revoked there), the call
// ends with mcp_credential_refused, which says what to do, and nothing
// reaches the upstream; a caller whose token is revoked never uses
// another caller's exchanged token.
func TestTokenExchangeRefusedEndsTheCall(t *testing.T) {
	w := newExchangeWorld(t, "alice", "carol")
	alice := w.connectAs(t, w.signIn(t, "alice"))
	if text, isErr := call(t, alice, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
		t.Fatalf("alice: %s", text)
	}
	carolToken := w.signIn(t, "carol")
	w.as.Revoke(t, "agent", "agent-secret", carolToken)
	before := len(w.upstream.calls())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := w.connectAs(t, carolToken).CallTool(ctx, &mcp.CallToolParams{Name: "gateway.whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(res)
	got := string(raw)
	if !res.IsError || !strings.Contains(got, "mcp_credential_refused") || !strings.Contains(got, "sign in again") {
		t.Errorf("carol's call with a revoked token: %v %v, want mcp_credential_refused", res.Content, res.StructuredContent)
	}
	if after := len(w.upstream.calls()); after != before {
		t.Errorf("the upstream saw %d calls after the refused exchange", after-before)
	}
	if !strings.Contains(w.log.String(), "token exchange refused") {
		t.Errorf("the refusal is not logged:\n%s", w.log.String())
	}
	if strings.Contains(w.log.String(), carolToken) {
		t.Fatal("carol's token is in the log")
	}
	if !bytes.Contains([]byte(w.audit.String()), []byte(`"reason":"mcp_credential_refused"`)) {
		t.Errorf("the audit trail does not record the refusal:\n%s", w.audit.String())
	}
}

// TestTokenExchangeWriteKeepsItsApproval: an approved write whose caller
// cannot have an exchanged token (the token was revoked at the
// authorization server) is refused before its approval is claimed: the
// approval stays approved and nothing reaches the upstream; signed in
// again, the same call claims it and the write goes as the caller.
func TestTokenExchangeWriteKeepsItsApproval(t *testing.T) {
	w := newExchangeWorld(t, "alice")
	token := w.signIn(t, "alice")
	cs := w.connectAs(t, token)
	args := map[string]any{"text": "hello"}
	text, _ := call(t, cs, "gateway.note", args)
	var f struct {
		Reason  string
		Details struct {
			ApprovalID string `json:"approval_id"`
		}
	}
	if err := json.Unmarshal([]byte(text), &f); err != nil || f.Reason != string(approval.ReasonPending) || f.Details.ApprovalID == "" {
		t.Fatalf("the first call: %s, want a pending approval", text)
	}
	id := f.Details.ApprovalID
	if _, err := w.approvals.Approve(context.Background(), id, policy.NewPrincipal("carol", []string{approval.DefaultApproverScope}), "fine"); err != nil {
		t.Fatal(err)
	}
	w.as.Revoke(t, "agent", "agent-secret", token)
	text, isErr := call(t, cs, "gateway.note", args)
	if f := parseFailure(t, text); !isErr || f.Reason != "mcp_credential_refused" {
		t.Fatalf("the approved call with a revoked token: %s, want mcp_credential_refused", text)
	}
	if a, err := w.approvals.Get(context.Background(), id); err != nil || a.State != approval.StateApproved {
		t.Fatalf("the approval after the refusal: %s (%v), want approved, unclaimed", a.State, err)
	}
	for _, c := range w.upstream.calls() {
		t.Errorf("the upstream saw a call: %+v", c)
	}
	text, isErr = call(t, w.connectAs(t, w.signIn(t, "alice")), "gateway.note", args)
	if isErr || text != `{"text":"alice noted hello"}` {
		t.Fatalf("the call signed in again: %s", text)
	}
	if a, err := w.approvals.Get(context.Background(), id); err != nil || a.State != approval.StateCompleted || a.Intent.Credential != "token_exchange" {
		t.Errorf("the approval after the write: %s as %q (%v), want completed, token_exchange", a.State, a.Intent.Credential, err)
	}
}
