package gateway_test

// Attacks on the per-caller credentials (docs/gateway.md "Credentials",
// ADR 79 and ADR 80), each kept as a test: the confused deputy between
// callers and between clients of one person, the token exchange against a
// misbehaving authorization server, the connections pages (CSRF, replayed
// and stolen callbacks, open redirects, injection, Host, forged cookies,
// cookie attributes), sealed grants moved between rows, and secrets in
// the logs.
//
// The authorization server is the real one of internal/astest wherever a
// test needs one that behaves. Where a test needs one that misbehaves
// (answers 500, garbage, no token, a huge body, a redirect), an
// httptest server stands in front of it, at the gateway's token_url:
// that is fault injection, not a model of a real server.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/astest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---------------------------------------------------------------------
// The token exchange world for attacks.
// ---------------------------------------------------------------------

// atkExchange is a gateway with credentials token_exchange in front of an
// upstream that reports the subject and scopes of the token each call
// reaches it with; the gateway's token_url is atkTokenEndpoint, which
// passes requests to the real authorization server unless a test injects
// a fault.
type atkExchange struct {
	as          *astest.Server
	upstreamURL string
	gatewayURL  string
	seen        *atkSeen
	tokenEP     *atkTokenEndpoint
	log         *mcptest.Buffer
	// hook, when set, runs in the whoami binding's scope validator, that
	// is during a call, after the caller's token was verified and before
	// the gateway exchanges it: the place where another request of the
	// same person can slip in.
	hook atomic.Pointer[func(policy.Principal)]
}

// atkSeen is what the upstream saw of each tools/call.
type atkSeen struct {
	mu    sync.Mutex
	calls []atkSeenCall
	raw   []string
}

type atkSeenCall struct{ sub, scope string }

func (s *atkSeen) add(method string, c atkSeenCall, raw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.raw = append(s.raw, raw)
	if method == "tools/call" {
		s.calls = append(s.calls, c)
	}
}

func (s *atkSeen) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

func (s *atkSeen) tokens() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.raw)
}

// atkTokenEndpoint stands at the gateway's token_url: it counts and
// records each exchange, and passes it to the real server, unless fault
// is set (fault injection) or gate holds it.
type atkTokenEndpoint struct {
	real    string
	arrived chan struct{}

	mu       sync.Mutex
	n        int
	subjects []string
	answers  []string
	fault    http.HandlerFunc
	gate     chan struct{}
}

func (e *atkTokenEndpoint) set(fault http.HandlerFunc, gate chan struct{}) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fault, e.gate = fault, gate
}

func (e *atkTokenEndpoint) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n
}

func (e *atkTokenEndpoint) secrets() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := slices.Clone(e.subjects)
	for _, a := range e.answers {
		var m map[string]any
		if json.Unmarshal([]byte(a), &m) == nil {
			for _, k := range []string{"access_token", "refresh_token", "id_token"} {
				if s, _ := m[k].(string); s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func (e *atkTokenEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	form, _ := url.ParseQuery(string(body))
	e.mu.Lock()
	e.n++
	e.subjects = append(e.subjects, form.Get("subject_token"))
	fault, gate := e.fault, e.gate
	e.mu.Unlock()
	select {
	case e.arrived <- struct{}{}:
	default:
	}
	if gate != nil {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
	}
	if fault != nil {
		fault(w, r)
		return
	}
	atkForward(w, r, e.real, body, func(b []byte) {
		e.mu.Lock()
		e.answers = append(e.answers, string(b))
		e.mu.Unlock()
	})
}

// atkForward posts body to target with r's credentials and content type,
// and answers with what it answered.
func atkForward(w http.ResponseWriter, r *http.Request, target string, body []byte, record func([]byte)) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for _, h := range []string{"Authorization", "Content-Type", "Accept"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	record(b)
	w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
	w.WriteHeader(res.StatusCode)
	w.Write(b)
}

const atkMachineSecret = "machine-secret"

func newAtkExchange(t *testing.T, lifetime string) *atkExchange {
	t.Helper()
	t.Setenv(gwClientSecretEnv, gwClientSecret)
	upLn, upBase := loopback(t)
	gwLn, gwBase := loopback(t)
	w := &atkExchange{upstreamURL: upBase + "/mcp", gatewayURL: gwBase + "/mcp", seen: &atkSeen{}, log: &mcptest.Buffer{}}
	w.as = astest.Start(t, astest.Config{
		Clients: []astest.Client{
			{ // the gateway: its own identity for discovery, and the exchange
				ID: "gateway", Secret: gwClientSecret,
				GrantTypes: []string{astest.GrantClientCredentials, astest.GrantTokenExchange},
				Audiences:  []string{w.upstreamURL}, Scopes: []string{"orders.read", "orders.write"},
			},
			{ // alice's trusted MCP client: may read and write
				ID: "agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
				GrantTypes: []string{astest.GrantAuthorizationCode},
				Audiences:  []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read", "orders.write"},
			},
			{ // a client of the same people that may only read
				ID: "weak-agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
				GrantTypes: []string{astest.GrantAuthorizationCode},
				Audiences:  []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read"},
			},
			{ // a machine client whose id is a person's subject: its
				// client credentials tokens name "alice" as their subject
				ID: "alice", Secret: atkMachineSecret, GrantTypes: []string{astest.GrantClientCredentials},
				Audiences: []string{w.gatewayURL}, Scopes: []string{"orders.read"},
			},
		},
		Users: []astest.User{
			{Subject: "alice", Username: "alice", Password: "alice-pw"},
			{Subject: "bob", Username: "bob", Password: "bob-pw"},
		},
		AccessTokenLifetime: lifetime,
	})

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	v, err := oidc.NewVerifier(ctx, w.as.Issuer(), w.upstreamURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "who called, with which scopes"}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, textOut, error) {
		ti := req.Extra.TokenInfo
		return nil, textOut{"sub=" + ti.UserID + " scope=" + strings.Join(slices.Sorted(slices.Values(ti.Scopes)), " ")}, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Stateless: true})
	recording := func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		ti, err := v.Verify(ctx, token, r)
		c := atkSeenCall{sub: "?", scope: "?"}
		if err == nil {
			c = atkSeenCall{sub: ti.UserID, scope: strings.Join(slices.Sorted(slices.Values(ti.Scopes)), " ")}
		}
		w.seen.add(r.Header.Get("Mcp-Method"), c, token)
		return ti, err
	}
	up := &httptest.Server{Listener: upLn, Config: &http.Server{Handler: auth.RequireBearerToken(recording, nil)(sdk)}}
	up.Start()
	t.Cleanup(up.Close)

	w.tokenEP = &atkTokenEndpoint{real: w.as.TokenURL(), arrived: make(chan struct{}, 1000)}
	ep := httptest.NewServer(w.tokenEP)
	t.Cleanup(ep.Close)

	gcfg := gateway.Config{
		Auth: gateway.Auth{Issuer: w.as.Issuer(), Resource: w.gatewayURL},
		Upstreams: []gateway.Upstream{{
			Name: "orders",
			HTTP: &gateway.HTTPUpstream{
				URL: w.upstreamURL, Credentials: gateway.CredentialsTokenExchange,
				TokenExchange: &gateway.TokenExchange{TokenURL: ep.URL + "/token", ClientID: "gateway", ClientSecretEnv: gwClientSecretEnv,
					Scopes: []string{"orders.read", "orders.write"}},
				OAuth: &gateway.ClientCredentials{TokenURL: w.as.TokenURL(), ClientID: "gateway", ClientSecretEnv: gwClientSecretEnv, Scopes: []string{"orders.read"}},
			},
			Tools: []gateway.Tool{{Remote: "whoami", Title: "Who am I", Scopes: []string{"orders.read"}, ConcurrencySafe: true}},
		}},
		Lock: filepath.Join(t.TempDir(), "gateway.lock"),
	}
	opts := &gateway.Options{
		Logger: slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Validators: map[string]mcpimport.ScopeValidator{"whoami": func(_ context.Context, caller policy.Principal, _ json.RawMessage) error {
			if h := w.hook.Load(); h != nil {
				(*h)(caller)
			}
			return nil
		}},
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
	return w
}

// signIn is user's token for the gateway through client, with scopes.
func (w *atkExchange) signIn(t *testing.T, client, user string, scopes ...string) string {
	t.Helper()
	return w.as.SignIn(t, astest.SignInRequest{
		ClientID: client, ClientSecret: "agent-secret", Username: user, Password: user + "-pw",
		Scopes: append([]string{"openid"}, scopes...), Resource: w.gatewayURL, RedirectURI: "http://127.0.0.1:9/cb",
	}).AccessToken
}

// atkConnect connects an MCP client to url with token, over base.
func atkConnect(t *testing.T, url, token string, base http.RoundTripper, copts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, copts).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, MaxRetries: -1, HTTPClient: &http.Client{Transport: bearer{token, base}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// atkCall calls gateway.whoami; it does not end the test, so that
// goroutines can use it.
func atkCall(ctx context.Context, cs *mcp.ClientSession) (text string, isErr bool, err error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", false, err
	}
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*mcp.TextContent); ok {
			return tc.Text, res.IsError, nil
		}
	}
	raw, _ := json.Marshal(res)
	return string(raw), res.IsError, nil
}

// wantScope is the text whoami answers for sub with scope.
func wantWhoami(sub, scope string) string { return `{"text":"sub=` + sub + ` scope=` + scope + `"}` }

// ---------------------------------------------------------------------
// Token exchange: the confused deputy.
// ---------------------------------------------------------------------

// TestAttackExchangeNeverUsesAnotherTokenOfTheSamePerson: the gateway
// keeps each caller's token for the exchange, by principal. Alice has two
// clients: agent, whose token may write, and weak-agent, whose token may
// only read. While weak-agent's call is under way (after its token was
// verified, before the exchange), a request of agent's arrives. The
// exchange for weak-agent's call must still present weak-agent's token:
// otherwise the upstream is reached with scopes the caller's own token
// does not hold (docs: "the server grants at most what the caller's token
// holds"). Likewise a machine client whose id is "alice" (its tokens name
// subject alice) never acts with the person alice's token.
func TestAttackExchangeNeverUsesAnotherTokenOfTheSamePerson(t *testing.T) {
	w := newAtkExchange(t, "")
	strongTok := w.signIn(t, "agent", "alice", "orders.read", "orders.write")
	weakTok := w.signIn(t, "weak-agent", "alice", "orders.read")
	strong := atkConnect(t, w.gatewayURL, strongTok, http.DefaultTransport, nil)
	weak := atkConnect(t, w.gatewayURL, weakTok, http.DefaultTransport, nil)
	machine := atkConnect(t, w.gatewayURL, w.as.ClientCredentials(t, "alice", atkMachineSecret, w.gatewayURL, "orders.read").AccessToken, http.DefaultTransport, nil)

	// In each call of a caller that cannot write, the person's writing
	// client sends a request first.
	interleave := func(caller policy.Principal) {
		if caller.HasScope("orders.write") {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := strong.ListTools(ctx, nil); err != nil {
			t.Errorf("agent's request in between: %v", err)
		}
	}
	w.hook.Store(&interleave)

	for name, cs := range map[string]*mcp.ClientSession{"weak-agent": weak, "the machine client alice": machine} {
		for i := range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			text, isErr, err := atkCall(ctx, cs)
			cancel()
			if err != nil || isErr || text != wantWhoami("alice", "orders.read") {
				t.Errorf("%s's call %d reached the upstream as %q (%v), want alice with orders.read only", name, i, text, err)
			}
		}
	}
	w.hook.Store(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if text, isErr, err := atkCall(ctx, strong); err != nil || isErr || text != wantWhoami("alice", "orders.read orders.write") {
		t.Errorf("agent's own call: %q (%v)", text, err)
	}
}

// TestAttackExchangeRevokedTokenNeverBorrowsAFreshOne: two tokens of the
// same person, client and scopes. The first is revoked at the
// authorization server (the gateway still verifies it: it is a signed JWT
// that has not expired). While a call made with it is under way, a request
// with the fresh token arrives. The exchange for the revoked token's call
// must present that token, and be refused: a token kept per person (or
// per person and scopes) would have lent it the fresh one's.
func TestAttackExchangeRevokedTokenNeverBorrowsAFreshOne(t *testing.T) {
	w := newAtkExchange(t, "")
	revokedTok := w.signIn(t, "agent", "alice", "orders.read")
	freshTok := w.signIn(t, "agent", "alice", "orders.read")
	w.as.Revoke(t, "agent", "agent-secret", revokedTok)
	revoked := atkConnect(t, w.gatewayURL, revokedTok, http.DefaultTransport, nil)
	fresh := atkConnect(t, w.gatewayURL, freshTok, http.DefaultTransport, nil)
	var once sync.Once
	interleave := func(policy.Principal) {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := fresh.ListTools(ctx, nil); err != nil {
				t.Errorf("the fresh token's request in between: %v", err)
			}
		})
	}
	w.hook.Store(&interleave)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	text, isErr, err := atkCall(ctx, revoked)
	if err != nil || !isErr || !strings.Contains(text, "mcp_credential_refused") {
		t.Errorf("the revoked token's call: %q (%v), want mcp_credential_refused", text, err)
	}
	w.hook.Store(nil)
	if text, isErr, err := atkCall(ctx, fresh); err != nil || isErr || text != wantWhoami("alice", "orders.read") {
		t.Errorf("the fresh token's call: %q (%v)", text, err)
	}
}

// TestAttackExchangeCallersNeverShare: 60 interleaved calls of alice,
// bob and alice through another client: each reaches the upstream as its
// own caller with its own token's scopes, never another's.
func TestAttackExchangeCallersNeverShare(t *testing.T) {
	w := newAtkExchange(t, "")
	type who struct {
		cs   *mcp.ClientSession
		want string
	}
	callers := []who{
		{atkConnect(t, w.gatewayURL, w.signIn(t, "agent", "alice", "orders.read", "orders.write"), http.DefaultTransport, nil), wantWhoami("alice", "orders.read orders.write")},
		{atkConnect(t, w.gatewayURL, w.signIn(t, "agent", "bob", "orders.read"), http.DefaultTransport, nil), wantWhoami("bob", "orders.read")},
		{atkConnect(t, w.gatewayURL, w.signIn(t, "weak-agent", "alice", "orders.read"), http.DefaultTransport, nil), wantWhoami("alice", "orders.read")},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 60 {
		c := callers[i%3]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if text, isErr, err := atkCall(ctx, c.cs); err != nil || isErr || text != c.want {
				errs <- fmt.Errorf("call %d: %q (%v), want %s", i, text, err, c.want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestAttackExchangeOtherIssuerAndAnonymous: a token of the same subject
// from another authorization server, and a request without a token, are
// refused at the gateway: nothing is exchanged, nothing reaches the
// upstream.
func TestAttackExchangeOtherIssuerAndAnonymous(t *testing.T) {
	w := newAtkExchange(t, "")
	other := astest.Start(t, astest.Config{
		Clients: []astest.Client{{ID: "agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
			Audiences: []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read", "orders.write"}}},
		Users: []astest.User{{Subject: "alice", Username: "alice", Password: "alice-pw"}},
	})
	foreign := other.SignIn(t, astest.SignInRequest{ClientID: "agent", ClientSecret: "agent-secret", Username: "alice", Password: "alice-pw",
		Scopes: []string{"openid", "orders.read", "orders.write"}, Resource: w.gatewayURL, RedirectURI: "http://127.0.0.1:9/cb"}).AccessToken
	// Alice is known at the gateway (her token from its issuer is kept).
	alice := atkConnect(t, w.gatewayURL, w.signIn(t, "agent", "alice", "orders.read"), http.DefaultTransport, nil)
	if text, _ := call(t, alice, "gateway.whoami", map[string]any{}); text != wantWhoami("alice", "orders.read") {
		t.Fatalf("alice: %s", text)
	}
	exchanges, calls := w.tokenEP.count(), w.seen.n()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gateway.whoami","arguments":{}}}`
	for name, token := range map[string]string{"another issuer's alice": foreign, "no token": "", "a garbage token": "x.y.z"} {
		req, _ := http.NewRequest(http.MethodPost, w.gatewayURL, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "gateway.whoami")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, res.StatusCode)
		}
	}
	if n := w.tokenEP.count(); n != exchanges {
		t.Errorf("%d exchanges for callers the gateway refused", n-exchanges)
	}
	if n := w.seen.n(); n != calls {
		t.Errorf("%d calls reached the upstream for callers the gateway refused", n-calls)
	}
}

// ---------------------------------------------------------------------
// Token exchange: a caller whose token expires; a misbehaving server.
// ---------------------------------------------------------------------

// TestAttackExchangeExpiredSubjectTokenIsNotUsed: the gateway's verifier
// tolerates 30 s of clock skew, so a caller token just past its expiry is
// still accepted at the MCP endpoint. The vault must not present it: the
// call ends with mcp_credential_refused, nothing is exchanged and nothing
// reaches the upstream. A fresh token then works, and is what the
// exchange presents.
func TestAttackExchangeExpiredSubjectTokenIsNotUsed(t *testing.T) {
	w := newAtkExchange(t, "3s")
	t1 := w.signIn(t, "agent", "alice", "orders.read")
	cs := atkConnect(t, w.gatewayURL, t1, http.DefaultTransport, nil)
	if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != wantWhoami("alice", "orders.read") {
		t.Fatalf("alice's first call: %s", text)
	}
	exp, _ := astest.Claims(t, t1)["exp"].(float64)
	time.Sleep(time.Until(time.Unix(int64(exp), 0).Add(1500 * time.Millisecond)))
	exchanges, calls := w.tokenEP.count(), w.seen.n()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	text, isErr, err := atkCall(ctx, cs)
	switch {
	case err != nil:
		// Refused at the MCP endpoint: as good.
	case !isErr || parseFailure(t, text).Reason != "mcp_credential_refused":
		t.Errorf("a call with an expired token: %s, want mcp_credential_refused", text)
	}
	if n := w.tokenEP.count(); n != exchanges {
		t.Errorf("the expired token was presented to the authorization server (%d exchanges)", n-exchanges)
	}
	if n := w.seen.n(); n != calls {
		t.Errorf("a call with an expired token reached the upstream")
	}
	t2 := w.signIn(t, "agent", "alice", "orders.read")
	if text, isErr := call(t, atkConnect(t, w.gatewayURL, t2, http.DefaultTransport, nil), "gateway.whoami", map[string]any{}); isErr || text != wantWhoami("alice", "orders.read") {
		t.Fatalf("alice's call with a fresh token: %s", text)
	}
	w.tokenEP.mu.Lock()
	last := w.tokenEP.subjects[len(w.tokenEP.subjects)-1]
	w.tokenEP.mu.Unlock()
	if last != t2 {
		t.Error("the exchange after the new sign-in did not present the new token")
	}
}

// TestAttackExchangeMisbehavingServer (fault injection: an httptest
// server answers at the gateway's token_url instead of the real
// authorization server): each bad answer ends the call with a credential
// reason, nothing reaches the upstream, a redirect is not followed (it
// would carry the caller's token and the gateway's secret elsewhere), and
// nothing of the answers is kept: the next good exchange works.
func TestAttackExchangeMisbehavingServer(t *testing.T) {
	w := newAtkExchange(t, "")
	tok := w.signIn(t, "agent", "alice", "orders.read")
	cs := atkConnect(t, w.gatewayURL, tok, http.DefaultTransport, nil)

	var thiefMu sync.Mutex
	var thiefSaw []string
	thief := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		thiefMu.Lock()
		thiefSaw = append(thiefSaw, r.Method+" "+r.Header.Get("Authorization")+" "+string(b))
		thiefMu.Unlock()
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, `{"access_token":"stolen-token","token_type":"Bearer","expires_in":600}`)
	}))
	defer thief.Close()

	answer := func(status int, ctype, body string) http.HandlerFunc {
		return func(rw http.ResponseWriter, _ *http.Request) {
			if ctype != "" {
				rw.Header().Set("Content-Type", ctype)
			}
			rw.WriteHeader(status)
			io.WriteString(rw, body)
		}
	}
	redirect := func(status int) http.HandlerFunc {
		return func(rw http.ResponseWriter, r *http.Request) {
			http.Redirect(rw, r, thief.URL+"/token", status)
		}
	}
	huge := `{"access_token":"` + strings.Repeat("A", 2<<20) + `","token_type":"Bearer"}`
	cases := []struct {
		name   string
		fault  http.HandlerFunc
		reason string
	}{
		{"500 JSON", answer(500, "application/json", `{"error":"server_error"}`), "mcp_credential_unavailable"},
		{"502 HTML", answer(502, "text/html", `<h1>bad gateway</h1>`), "mcp_credential_unavailable"},
		{"garbage JSON", answer(200, "application/json", `{"access_token":`), "mcp_credential_unavailable"},
		{"not JSON", answer(200, "text/plain", `access_token=x&token_type=Bearer`), "mcp_credential_unavailable"},
		{"no access_token", answer(200, "application/json", `{"token_type":"Bearer","expires_in":60}`), "mcp_credential_unavailable"},
		{"empty access_token", answer(200, "application/json", `{"access_token":"","token_type":"Bearer"}`), "mcp_credential_unavailable"},
		{"huge body", answer(200, "application/json", huge), "mcp_credential_unavailable"},
		{"token_type mac", answer(200, "application/json", `{"access_token":"x","token_type":"mac"}`), "mcp_credential_unavailable"},
		{"no token_type", answer(200, "application/json", `{"access_token":"x"}`), "mcp_credential_unavailable"},
		{"an ID token", answer(200, "application/json", `{"access_token":"x","token_type":"Bearer","issued_token_type":"urn:ietf:params:oauth:token-type:id_token"}`), "mcp_credential_unavailable"},
		{"a token with CRLF", answer(200, "application/json", `{"access_token":"x\r\nX-Injected: 1","token_type":"Bearer"}`), "mcp_credential_unavailable"},
		{"a token with a space", answer(200, "application/json", `{"access_token":"x, Bearer y","token_type":"Bearer"}`), "mcp_credential_unavailable"},
		{"200 with an error", answer(200, "application/json", `{"error":"invalid_grant","access_token":"x","token_type":"Bearer"}`), "mcp_credential_refused"},
		{"invalid_grant", answer(400, "application/json", `{"error":"invalid_grant","error_description":"secret stuff"}`), "mcp_credential_refused"},
		{"invalid_client", answer(401, "application/json", `{"error":"invalid_client"}`), "mcp_credential_unavailable"},
		{"307 elsewhere", redirect(http.StatusTemporaryRedirect), "mcp_credential_unavailable"},
		{"308 elsewhere", redirect(http.StatusPermanentRedirect), "mcp_credential_unavailable"},
		{"302 elsewhere", redirect(http.StatusFound), "mcp_credential_unavailable"},
		{"307 with a JSON error", func(rw http.ResponseWriter, r *http.Request) {
			rw.Header().Set("Location", thief.URL+"/token")
			answer(http.StatusTemporaryRedirect, "application/json", `{"error":"invalid_grant"}`)(rw, r)
		}, "mcp_credential_unavailable"},
	}
	for _, c := range cases {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			w.tokenEP.set(c.fault, nil)
			exchanges, calls := w.tokenEP.count(), w.seen.n()
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			text, isErr, err := atkCall(ctx, cs)
			if err != nil {
				t.Fatal(err)
			}
			if !isErr || parseFailure(t, text).Reason != c.reason {
				t.Errorf("the call: %s, want %s", text, c.reason)
			}
			if n := w.tokenEP.count(); n != exchanges+1 {
				t.Errorf("%d exchanges asked, want 1", n-exchanges)
			}
			if n := w.seen.n(); n != calls {
				t.Errorf("%d calls reached the upstream", n-calls)
			}
			if strings.Contains(text, "secret stuff") {
				t.Errorf("the server's description reached the caller: %s", text)
			}
		})
	}
	thiefMu.Lock()
	for _, s := range thiefSaw {
		t.Errorf("a redirect from the token endpoint was followed: elsewhere received %.80q", s)
	}
	thiefMu.Unlock()
	if strings.Contains(w.log.String(), "secret stuff") || strings.Contains(w.log.String(), "X-Injected") {
		t.Errorf("the server's own words reached the log:\n%s", w.log.String())
	}
	// Nothing of the bad answers was kept: the server behaves again, the
	// call goes through.
	w.tokenEP.set(nil, nil)
	if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != wantWhoami("alice", "orders.read") {
		t.Errorf("the call once the server behaves: %s", text)
	}
	for _, tok := range w.seen.tokens() {
		if tok == "stolen-token" || tok == "x" {
			t.Error("a bad answer's token reached the upstream")
		}
	}
}

// TestAttackExchangeSlowServer: calls of one caller waiting for one slow
// exchange share it (one request at the server), a caller that gives up
// does not end it for the others, and the token it gets serves them all.
func TestAttackExchangeSlowServer(t *testing.T) {
	w := newAtkExchange(t, "")
	tok := w.signIn(t, "agent", "alice", "orders.read")
	sessions := []*mcp.ClientSession{atkConnect(t, w.gatewayURL, tok, http.DefaultTransport, nil), atkConnect(t, w.gatewayURL, tok, http.DefaultTransport, nil)}
	gate := make(chan struct{})
	w.tokenEP.set(nil, gate)
	for len(w.tokenEP.arrived) > 0 {
		<-w.tokenEP.arrived
	}
	before := w.tokenEP.count()

	// The first caller starts the exchange, then gives up.
	quitter, quit := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, _, err := atkCall(quitter, sessions[0])
		gaveUp <- err
	}()
	select {
	case <-w.tokenEP.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the exchange never reached the server")
	}
	// Ten more calls of the same caller wait for it.
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			if text, isErr, err := atkCall(ctx, sessions[i%2]); err != nil || isErr || text != wantWhoami("alice", "orders.read") {
				errs <- fmt.Errorf("waiting call %d: %q (%v)", i, text, err)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // let them queue behind the exchange
	quit()
	if err := <-gaveUp; err == nil {
		t.Error("the call that gave up did not end")
	}
	time.Sleep(200 * time.Millisecond)
	close(gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := w.tokenEP.count() - before; n != 1 {
		t.Errorf("%d exchanges for one caller's concurrent calls, want 1", n)
	}
	w.tokenEP.set(nil, nil)
}

// TestAttackExchangeLogsHoldNoSecret: at debug, after good calls, refused
// exchanges and faults, no log line holds a caller's token, an exchanged
// token, the gateway's secret or anything shaped like a JWT.
func TestAttackExchangeLogsHoldNoSecret(t *testing.T) {
	w := newAtkExchange(t, "")
	tok := w.signIn(t, "agent", "alice", "orders.read")
	cs := atkConnect(t, w.gatewayURL, tok, http.DefaultTransport, nil)
	for range 2 {
		call(t, cs, "gateway.whoami", map[string]any{})
	}
	revoked := w.signIn(t, "agent", "bob", "orders.read")
	w.as.Revoke(t, "agent", "agent-secret", revoked)
	call(t, atkConnect(t, w.gatewayURL, revoked, http.DefaultTransport, nil), "gateway.whoami", map[string]any{})
	w.tokenEP.set(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(500)
		b, _ := io.ReadAll(r.Body)
		rw.Write(b) // echoes the request, the subject token with it
	}, nil)
	call(t, atkConnect(t, w.gatewayURL, w.signIn(t, "agent", "alice", "orders.read"), http.DefaultTransport, nil), "gateway.whoami", map[string]any{})
	w.tokenEP.set(nil, nil)

	log := w.log.String()
	if !strings.Contains(log, "token exchange refused") || !strings.Contains(log, "token exchange failed") {
		t.Fatalf("the log lacks the refusal or the failure:\n%s", log)
	}
	secrets := append(append(w.tokenEP.secrets(), w.seen.tokens()...), tok, revoked, gwClientSecret)
	atkNoSecretInLog(t, log, secrets)
}

// atkNoSecretInLog fails when log holds any of secrets, or a JWT.
func atkNoSecretInLog(t *testing.T, log string, secrets []string) {
	t.Helper()
	n := 0
	for _, s := range secrets {
		if len(s) < 8 {
			continue
		}
		n++
		if i := strings.Index(log, s); i >= 0 {
			t.Errorf("a secret (%.12s…) is in the log: %.200q", s, log[max(0, i-100):])
		}
	}
	if n == 0 {
		t.Fatal("no secrets to look for")
	}
	if m := regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}`).FindString(log); m != "" {
		t.Errorf("something shaped like a JWT is in the log: %.40s…", m)
	}
}

// ---------------------------------------------------------------------
// Consent: the pages.
// ---------------------------------------------------------------------

// atkRecorder is a browser's transport that records every URL it asks
// for and every cookie it is set.
type atkRecorder struct {
	base    http.RoundTripper
	mu      sync.Mutex
	urls    []*url.URL
	cookies []*http.Cookie
}

func (r *atkRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.base.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.urls = append(r.urls, req.URL)
	if res != nil {
		r.cookies = append(r.cookies, res.Cookies()...)
	}
	return res, err
}

func (r *atkRecorder) setCookies() []*http.Cookie {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.cookies)
}

func (r *atkRecorder) visited() []*url.URL {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.urls)
}

// atkBrowser is newBrowser with an atkRecorder over base.
func atkBrowser(t *testing.T, base http.RoundTripper) (*browser, *atkRecorder) {
	b := newBrowser(t)
	rec := &atkRecorder{base: base}
	b.c.Transport = rec
	return b, rec
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([^"]*)"`)

// csrfOf opens the start page in b (signing in as user if asked) and
// returns the csrf token of its form.
func csrfOf(t *testing.T, b *browser, link, user string) string {
	t.Helper()
	if err := b.get(link); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.page, `id="login"`) {
		if err := b.submit(map[string]string{"username": user, "password": user + "-pw"}); err != nil {
			t.Fatal(err)
		}
	}
	m := csrfInput.FindStringSubmatch(b.page)
	if m == nil {
		t.Fatalf("no csrf token on %s: %s", b.at, pageText(b.page))
	}
	return m[1]
}

// post posts form to the gateway's path in b, following nothing: it
// returns the status and the Location.
func atkPost(t *testing.T, b *browser, u string, form url.Values) (int, string) {
	t.Helper()
	c := *b.c
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Location")
}

func (w *consentWorld) grants(t *testing.T, user string) []approval.Connection {
	t.Helper()
	list, err := w.store.ListConnections(context.Background(), policy.NewPrincipal(user, nil).WithIssuer(w.as.Issuer()))
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// TestAttackConsentCSRF: allowing a connection and revoking one need the
// csrf token of the person's own sign-in: none, an empty one, another
// person's, or the right one without the session cookie (a cross-site
// form) is refused, nothing is started and nothing revoked.
func TestAttackConsentCSRF(t *testing.T) {
	w := newConsentWorld(t, "alice", "bob")
	link := w.gatewayBase + "/connections/start?client=agent&upstream=orders"
	a, aRec := atkBrowser(t, http.DefaultTransport)
	if err := connectBrowser(a, link, "alice"); err != nil {
		t.Fatal(err)
	}
	aliceCSRF := csrfOf(t, a, link, "alice")
	b := newBrowser(t)
	bobCSRF := csrfOf(t, b, link, "bob")
	if aliceCSRF == bobCSRF {
		t.Fatal("two people's sign-ins share a csrf token")
	}
	stranger := newBrowser(t) // no cookie of the gateway's at all

	setBefore := len(aRec.setCookies())
	for name, try := range map[string]struct {
		b    *browser
		csrf []string
	}{
		"no csrf":                       {a, nil},
		"an empty csrf":                 {a, []string{""}},
		"bob's csrf":                    {a, []string{bobCSRF}},
		"two csrf, bob's first":         {a, []string{bobCSRF, aliceCSRF}},
		"alice's csrf, no cookie":       {stranger, []string{aliceCSRF}},
		"alice's csrf in bob's browser": {b, []string{aliceCSRF}},
	} {
		for _, path := range []string{"/connections/allow", "/connections/revoke"} {
			form := url.Values{"upstream": {"orders"}, "client": {"agent"}}
			if try.csrf != nil {
				form["csrf"] = try.csrf
			}
			if status, loc := atkPost(t, try.b, w.gatewayBase+path, form); status != http.StatusForbidden {
				t.Errorf("%s to %s: %d (to %q), want 403", name, path, status, loc)
			}
		}
	}
	for _, c := range aRec.setCookies()[setBefore:] {
		if strings.Contains(c.Name, "agnara-connect") && c.MaxAge >= 0 {
			t.Errorf("a refused allow started a flow: cookie %s", c.Name)
		}
	}
	if list := w.grants(t, "alice"); len(list) != 1 {
		t.Errorf("alice's grants after the forged revocations: %+v", list)
	}
	// The right token in the right browser works: the checks above were
	// refused for what they lacked.
	if status, loc := atkPost(t, a, w.gatewayBase+"/connections/revoke", url.Values{"csrf": {aliceCSRF}, "upstream": {"orders"}, "client": {"agent"}}); status != http.StatusSeeOther || loc != "/connections/" {
		t.Errorf("alice's own revocation: %d %q", status, loc)
	}
	if list := w.grants(t, "alice"); len(list) != 0 {
		t.Errorf("alice's grants after revoking: %+v", list)
	}
}

// atkToCallback drives b through the start page (signing in as user at
// the gateway), allows, signs in as user at the upstream's authorization
// server, and stops before the callback: it returns the callback's URL,
// which carries the code and the state.
func atkToCallback(t *testing.T, b *browser, link, user string) *url.URL {
	t.Helper()
	var stopped *url.URL
	b.c.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == "/connections/callback" {
			stopped = req.URL
			return http.ErrUseLastResponse
		}
		return nil
	}
	defer func() { b.c.CheckRedirect = nil }()
	_ = b.get(link)
	for range 4 {
		if stopped != nil {
			return stopped
		}
		switch {
		case strings.Contains(b.page, `id="login"`):
			_ = b.submit(map[string]string{"username": user, "password": user + "-pw"})
		case strings.Contains(b.page, `id="allow"`):
			_ = b.submit(nil)
		default:
			t.Fatalf("unexpected page %s: %s", b.at, pageText(b.page))
		}
	}
	if stopped == nil {
		t.Fatalf("never reached the callback; at %s: %s", b.at, pageText(b.page))
	}
	return stopped
}

func atkCookie(t *testing.T, b *browser, base, name string) string {
	t.Helper()
	u, _ := url.Parse(base)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("no cookie %s", name)
	return ""
}

func atkSetCookie(b *browser, base, name, value string) {
	u, _ := url.Parse(base)
	b.c.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// TestAttackConsentStolenAndReplayedCallbacks: bob's callback (his code
// and state) opened in alice's browser, with or without a flow of hers
// under way, or with bob's own flow cookie copied into it, keeps nothing
// for anyone; bob's browser then completes it (the code was good all
// along). A callback replayed after success, with or without its flow
// cookie, keeps nothing more.
func TestAttackConsentStolenAndReplayedCallbacks(t *testing.T) {
	w := newConsentWorld(t, "alice", "bob")
	link := w.gatewayBase + "/connections/start?client=agent&upstream=orders"
	bob := newBrowser(t)
	stolen := atkToCallback(t, bob, link, "bob")
	bobFlow := atkCookie(t, bob, w.gatewayBase, "agnara-connect")

	alice := newBrowser(t)
	csrfOf(t, alice, link, "alice") // signed in as alice, no flow
	if err := alice.get(stolen.String()); err == nil || !strings.Contains(err.Error(), "status 400") {
		t.Errorf("bob's callback in alice's browser: %v", err)
	}
	atkToCallback(t, alice, link, "alice") // a flow of hers under way, left there
	if err := alice.get(stolen.String()); err == nil || !strings.Contains(err.Error(), "status 400") {
		t.Errorf("bob's callback in alice's browser, her flow under way: %v", err)
	}
	atkSetCookie(alice, w.gatewayBase, "agnara-connect", bobFlow)
	if err := alice.get(stolen.String()); err == nil || !strings.Contains(err.Error(), "status 400") {
		t.Errorf("bob's callback and flow cookie with alice's session: %v", err)
	}
	if n := len(w.grants(t, "alice")) + len(w.grants(t, "bob")); n != 0 {
		t.Fatalf("the stolen callback kept %d grants", n)
	}
	// The code was good: bob's own browser completes it.
	if err := bob.get(stolen.String()); err != nil || !strings.Contains(bob.page, `<h1 id="title">Connected</h1>`) {
		t.Fatalf("bob's own callback: %v %s", err, pageText(bob.page))
	}
	if len(w.grants(t, "bob")) != 1 || len(w.grants(t, "alice")) != 0 {
		t.Fatalf("after bob's callback: bob %d, alice %d grants", len(w.grants(t, "bob")), len(w.grants(t, "alice")))
	}

	// Replayed after success: the flow cookie is gone.
	ctx := context.Background()
	bp := policy.NewPrincipal("bob", nil).WithIssuer(w.as.Issuer())
	before, err := w.store.LoadConnection(ctx, bp, "orders", "agent")
	if err != nil {
		t.Fatal(err)
	}
	if err := bob.get(stolen.String()); err == nil || !strings.Contains(err.Error(), "status 400") {
		t.Errorf("the callback replayed: %v", err)
	}
	// Replayed with the flow cookie put back: the code is spent.
	atkSetCookie(bob, w.gatewayBase, "agnara-connect", bobFlow)
	if err := bob.get(stolen.String()); err == nil || !strings.Contains(err.Error(), "status 403") {
		t.Errorf("the callback replayed with its flow cookie: %v, want 403 (the code is spent)", err)
	}
	after, err := w.store.LoadConnection(ctx, bp, "orders", "agent")
	if err != nil || !bytes.Equal(before.Sealed, after.Sealed) {
		t.Errorf("a replayed callback changed bob's grant (%v)", err)
	}
}

// atkRaw sends a raw HTTP/1.1 request to addr and returns the response.
func atkRaw(t *testing.T, addr, raw string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// TestAttackConsentSignInNextStaysOnTheGateway: the page asked for before
// the sign-in is where the sign-in returns. Crafted request targets must
// never make that an open redirect: the browser always lands on the
// gateway's own host.
func TestAttackConsentSignInNextStaysOnTheGateway(t *testing.T) {
	w := newConsentWorld(t, "alice")
	gw, _ := url.Parse(w.gatewayBase)
	followed := 0
	for _, target := range []string{
		"/connections//evil.example/",
		"/connections/..//evil.example",
		"/connections/../\\evil.example",
		"/connections/..\\/evil.example",
		"/connections/../%2F%2Fevil.example",
		"/connections/%2F%2E%2E%2F%2Fevil.example",
		"/connections/../../evil.example/",
		"/connections/?next=https://evil.example/",
		"/connections/..;/evil.example",
		"//evil.example/connections/",
		"http://evil.example/connections/",
		"/connections/" + strings.Repeat("a", 600),
	} {
		res := atkRaw(t, gw.Host, "GET "+target+" HTTP/1.1\r\nHost: "+gw.Host+"\r\nConnection: close\r\n\r\n")
		if res.StatusCode != http.StatusSeeOther {
			t.Logf("%q: %d", target, res.StatusCode)
			continue // not served by the pages, or refused: nothing to redirect
		}
		var signin *http.Cookie
		for _, c := range res.Cookies() {
			if c.Name == "agnara-signin" {
				signin = c
			}
		}
		if signin == nil {
			t.Errorf("%q: a sign-in without its cookie", target)
			continue
		}
		b := newBrowser(t)
		b.c.Jar.SetCookies(gw, []*http.Cookie{signin})
		var loc string // the Location the signed-in page sends the browser to
		b.c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if prev := via[len(via)-1].URL; prev.Host == gw.Host && prev.Path == "/connections/signed-in" {
				loc = req.Response.Header.Get("Location")
				return http.ErrUseLastResponse
			}
			return nil
		}
		_ = b.get(res.Header.Get("Location"))
		if strings.Contains(b.page, `id="login"`) {
			_ = b.submit(map[string]string{"username": "alice", "password": "alice-pw"})
		}
		if loc == "" {
			t.Errorf("%q: the sign-in did not return to the gateway: %s", target, pageText(b.page))
			continue
		}
		// As a browser reads it: backslashes are slashes, tabs and
		// newlines are dropped.
		read := strings.NewReplacer("\\", "/", "\t", "", "\n", "", "\r", "").Replace(loc)
		next, err := gw.Parse(read)
		if err != nil || next.Host != gw.Host || !strings.HasPrefix(read, "/") || strings.HasPrefix(read, "//") {
			t.Errorf("%q: the sign-in returns to %q", target, loc)
		}
		t.Logf("%q: the sign-in returns to %q", target, loc)
		followed++
	}
	if followed < 8 {
		t.Errorf("only %d of the crafted targets reached a sign-in", followed)
	}
}

// TestAttackConsentPagesShowWhatTheyAreGivenEscaped: the start page shows
// the client and upstream it is given; HTML, control characters and
// oversized values are escaped or refused, and a client name that is not
// an OAuth client id (RFC 6749: visible ASCII) is refused, so that the
// consent is given for the client the person reads.
func TestAttackConsentPagesShowWhatTheyAreGivenEscaped(t *testing.T) {
	w := newConsentWorld(t, "alice")
	b := newBrowser(t)
	start := func(client, upstream string) (int, string) {
		q := url.Values{"upstream": {upstream}, "client": {client}}
		err := b.get(w.gatewayBase + "/connections/start?" + q.Encode())
		if strings.Contains(b.page, `id="login"`) {
			err = b.submit(map[string]string{"username": "alice", "password": "alice-pw"})
		}
		status := http.StatusOK
		if err != nil {
			if m := regexp.MustCompile(`status (\d+)`).FindStringSubmatch(err.Error()); m != nil {
				fmt.Sscan(m[1], &status)
			}
		}
		return status, b.page
	}
	evil := `<script>alert(1)</script>"'><img src=x onerror=alert(2)>{{.CSRF}}`
	status, page := start(evil, "orders")
	if status != http.StatusOK {
		t.Fatalf("the start page for an odd client: %d", status)
	}
	for _, raw := range []string{"<script>", "<img", `"'>`} {
		if strings.Contains(page, raw) {
			t.Errorf("the page holds %q unescaped", raw)
		}
	}
	if m := inputTag.FindAllString(page, -1); len(m) < 3 || tagAttrs(m[2])["value"] != evil {
		t.Errorf("the client does not round-trip through the form: %q", m)
	}
	if status, _ := start(evil, `orders"><script>`); status != http.StatusNotFound {
		t.Errorf("an unknown upstream: %d", status)
	}
	if status, _ := start(strings.Repeat("c", 256), "orders"); status != http.StatusOK {
		t.Errorf("a client of 256 bytes: %d", status)
	}
	if status, _ := start(strings.Repeat("c", 257), "orders"); status != http.StatusNotFound {
		t.Errorf("a client of 257 bytes: %d", status)
	}
	if status, _ := start("agent", strings.Repeat("u", 64<<10)); status != http.StatusNotFound {
		t.Errorf("an upstream of 64 KiB: %d", status)
	}
	// Names no OAuth client has, which show as another: a right-to-left
	// override ("tnega" reads "agent"), controls, invisible characters.
	for _, client := range []string{"\u202etnega", "agent\r\nSet-Cookie: x=y", "age\u200bnt", "agent\x00", "agent\x7f"} {
		if status, page := start(client, "orders"); status == http.StatusOK || strings.Contains(page, `id="allow"`) {
			t.Errorf("the start page for client %q: %d, want it refused", client, status)
		}
		csrf := csrfOf(t, b, w.gatewayBase+"/connections/start?client=agent&upstream=orders", "alice")
		if status, loc := atkPost(t, b, w.gatewayBase+"/connections/allow", url.Values{"csrf": {csrf}, "upstream": {"orders"}, "client": {client}}); status == http.StatusSeeOther {
			t.Errorf("allowing client %q: sent to %s", client, loc)
		}
	}
	// Error codes echoed from a redirect are printable and escaped.
	if err := b.get(w.gatewayBase + "/connections/callback?error=" + url.QueryEscape("<b>x</b>\r\n")); err == nil {
		t.Error("a callback without a flow succeeded")
	}
	if strings.Contains(b.page, "<b>x") {
		t.Error("the callback page holds HTML from the query")
	}
}

// TestAttackConsentPagesAnswerOneHost: every page, signed in or not,
// answers 421 under any Host but the gateway's, and sets no cookie.
func TestAttackConsentPagesAnswerOneHost(t *testing.T) {
	w := newConsentWorld(t, "alice")
	b := newBrowser(t)
	csrf := csrfOf(t, b, w.gatewayBase+"/connections/start?client=agent&upstream=orders", "alice")
	gw, _ := url.Parse(w.gatewayBase)
	_, port, _ := net.SplitHostPort(gw.Host)
	session := atkCookie(t, b, w.gatewayBase, "agnara-connections")
	for _, host := range []string{"evil.example", "127.0.0.1", "127.0.0.1:" + port + ".", "localhost:" + port, "127.0.0.1:" + port + "@evil.example", "[::1]:" + port, "127.0.0.1:0" + port} {
		for _, p := range []struct{ method, path string }{
			{"GET", "/connections/"}, {"GET", "/connections/start?client=agent&upstream=orders"}, {"POST", "/connections/allow"},
			{"GET", "/connections/callback?code=x&state=y"}, {"GET", "/connections/signed-in?code=x&state=y"}, {"POST", "/connections/revoke"},
		} {
			req, _ := http.NewRequest(p.method, w.gatewayBase+p.path, strings.NewReader(url.Values{"csrf": {csrf}, "upstream": {"orders"}, "client": {"agent"}}.Encode()))
			req.Host = host
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.AddCookie(&http.Cookie{Name: "agnara-connections", Value: session})
			res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusMisdirectedRequest && res.StatusCode != http.StatusBadRequest {
				t.Errorf("%s %s with Host %q: %d, want 421", p.method, p.path, host, res.StatusCode)
			}
			if len(res.Cookies()) != 0 {
				t.Errorf("%s %s with Host %q set cookies", p.method, p.path, host)
			}
		}
	}
}

// atkSealAs seals v for purpose the way the gateway seals its cookies,
// with the key the test world set: a forger who has the key.
func atkSealAs(t *testing.T, purpose string, v any) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(os.Getenv(consentKeyEnv))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce)
	plain, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, []byte(purpose)))
}

// TestAttackConsentForgedSessionCookies: a session cookie that is random,
// truncated, altered, oversized, another cookie's value, or sealed right
// but expired is no session: the pages send the browser to sign in, and
// a revocation with the person's csrf token is refused.
func TestAttackConsentForgedSessionCookies(t *testing.T) {
	w := newConsentWorld(t, "alice")
	link := w.gatewayBase + "/connections/start?client=agent&upstream=orders"
	a, rec := atkBrowser(t, http.DefaultTransport)
	if err := connectBrowser(a, link, "alice"); err != nil {
		t.Fatal(err)
	}
	csrf := csrfOf(t, a, link, "alice")
	good := atkCookie(t, a, w.gatewayBase, "agnara-connections")
	others := map[string]string{}
	for _, c := range rec.setCookies() {
		if c.Value != "" && c.Name != "agnara-connections" {
			others[c.Name] = c.Value
		}
	}
	if others["agnara-signin"] == "" || others["agnara-connect"] == "" {
		t.Fatalf("the flow did not set its cookies: %v", others)
	}
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flipped := slices.Clone(raw)
	flipped[len(flipped)/2] ^= 1
	random := make([]byte, len(raw))
	rand.Read(random)
	forged := map[string]string{
		"random":             base64.RawURLEncoding.EncodeToString(random),
		"truncated":          good[:len(good)-6],
		"one bit flipped":    base64.RawURLEncoding.EncodeToString(flipped),
		"oversized":          good + strings.Repeat("A", 3000),
		"padded base64":      good + "==",
		"the sign-in cookie": others["agnara-signin"],
		"the flow cookie":    others["agnara-connect"],
		"expired": atkSealAs(t, "session", map[string]any{"i": "alice", "s": w.as.Issuer(), "c": csrf,
			"e": time.Now().Add(-time.Second).Unix()}),
		"sealed for another purpose": atkSealAs(t, "signin", map[string]any{"i": "alice", "s": w.as.Issuer(), "c": csrf,
			"e": time.Now().Add(time.Hour).Unix()}),
		"empty": "",
	}
	check := func(name, value string, wantSession bool) {
		t.Helper()
		nc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		req, _ := http.NewRequest(http.MethodGet, w.gatewayBase+"/connections/", nil)
		req.AddCookie(&http.Cookie{Name: "agnara-connections", Value: value})
		res, err := nc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		signedIn := res.StatusCode == http.StatusOK && strings.Contains(string(body), `id="person"`)
		if signedIn != wantSession {
			t.Errorf("%s: the connections page answered %d (signed in: %v)", name, res.StatusCode, signedIn)
		}
		if wantSession {
			return
		}
		req, _ = http.NewRequest(http.MethodPost, w.gatewayBase+"/connections/revoke", strings.NewReader(url.Values{"csrf": {csrf}, "upstream": {"orders"}, "client": {"agent"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.AddCookie(&http.Cookie{Name: "agnara-connections", Value: value})
		if res, err = nc.Do(req); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("%s: a revocation answered %d, want 403", name, res.StatusCode)
		}
	}
	for name, value := range forged {
		check(name, value, false)
	}
	if len(w.grants(t, "alice")) != 1 {
		t.Error("a forged session revoked alice's grant")
	}
	// The forger's tools are right: the same seal, unexpired, is a session.
	check("sealed right, unexpired", atkSealAs(t, "session", map[string]any{"i": "alice", "s": w.as.Issuer(), "c": csrf,
		"e": time.Now().Add(time.Hour).Unix()}), true)
	check("alice's own", good, true)
}

// TestAttackConsentCookieAttributes over http (loopback, for trial): every
// cookie the pages set is HttpOnly, SameSite=Lax, Path=/, host-only; none
// is Secure or __Host- (a browser would drop them over http).
func TestAttackConsentCookieAttributes(t *testing.T) {
	w := newConsentWorld(t, "alice")
	b, rec := atkBrowser(t, http.DefaultTransport)
	if err := connectBrowser(b, w.gatewayBase+"/connections/start?client=agent&upstream=orders", "alice"); err != nil {
		t.Fatal(err)
	}
	gw, _ := url.Parse(w.gatewayBase)
	atkCheckCookies(t, rec, gw.Host, false)
}

func atkCheckCookies(t *testing.T, rec *atkRecorder, gwHost string, secure bool) {
	t.Helper()
	seen := map[string]bool{}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	// Cookies are matched to the gateway by name: the authorization
	// server's are its own business.
	for _, c := range rec.cookies {
		name := strings.TrimPrefix(c.Name, "__Host-")
		if !strings.HasPrefix(name, "agnara-") {
			continue
		}
		seen[name] = true
		if secure != strings.HasPrefix(c.Name, "__Host-") || c.Secure != secure {
			t.Errorf("cookie %s: Secure %v, want %v (and the __Host- prefix with it)", c.Name, c.Secure, secure)
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Domain != "" {
			t.Errorf("cookie %s: HttpOnly %v SameSite %v Path %q Domain %q, want HttpOnly, Lax, /, host-only", c.Name, c.HttpOnly, c.SameSite, c.Path, c.Domain)
		}
		if c.Value != "" && (c.MaxAge <= 0 || c.MaxAge > 8*3600) {
			t.Errorf("cookie %s: Max-Age %d", c.Name, c.MaxAge)
		}
	}
	for _, n := range []string{"agnara-signin", "agnara-connections", "agnara-connect"} {
		if !seen[n] {
			t.Errorf("the pages never set %s", n)
		}
	}
}

// ---------------------------------------------------------------------
// Consent over https, with the upstream's token endpoint recorded.
// ---------------------------------------------------------------------

// atkConsent is a consent world whose gateway serves https (so its cookies
// are __Host- and Secure), whose access tokens last 20 s (every use
// refreshes the grant), and whose upstream authorization server is
// reached through atkASProxy, which records every token request and
// answer: the codes, PKCE verifiers, refresh and access tokens to look
// for in the logs.
type atkConsent struct {
	*consentWorld
	tls   *httptest.Server
	proxy *atkASProxy
}

// atkASProxy is the upstream's authorization server as the gateway sees
// it: its metadata names the proxy as issuer and token endpoint (the
// authorization endpoint is the real one), and it passes token requests
// on, recording them.
type atkASProxy struct {
	as      *astest.Server
	self    string
	mu      sync.Mutex
	secrets []string
}

func (p *atkASProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/.well-known/"):
		res, err := http.Get(p.as.Issuer() + "/.well-known/openid-configuration")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		var m map[string]any
		json.NewDecoder(res.Body).Decode(&m)
		m["issuer"], m["token_endpoint"] = p.self, p.self+"/token"
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(m)
	case r.URL.Path == "/token":
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		p.mu.Lock()
		for _, k := range []string{"code", "code_verifier", "refresh_token", "client_secret"} {
			p.secrets = append(p.secrets, form.Get(k))
		}
		p.mu.Unlock()
		atkForward(w, r, p.as.TokenURL(), body, func(b []byte) {
			var m map[string]any
			json.Unmarshal(b, &m)
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, k := range []string{"access_token", "refresh_token", "id_token"} {
				if s, _ := m[k].(string); s != "" {
					p.secrets = append(p.secrets, s)
				}
			}
		})
	default:
		http.NotFound(w, r)
	}
}

func newAtkConsent(t *testing.T, users ...string) *atkConsent {
	t.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	t.Setenv(consentKeyEnv, base64.StdEncoding.EncodeToString(key))
	t.Setenv(consentSecretEnv, "consent-secret")
	t.Setenv(gwClientSecretEnv, gwClientSecret)
	t.Setenv("GATEWAY_TEST_WEB_SECRET", "web-secret")
	upLn, upBase := loopback(t)
	gwLn, _ := loopback(t)
	gwBase := "https://" + gwLn.Addr().String()
	w := &atkConsent{consentWorld: &consentWorld{upstreamURL: upBase + "/mcp", gatewayBase: gwBase, gatewayURL: gwBase + "/mcp",
		upstream: &tokenLog{}, log: &mcptest.Buffer{}, audit: &mcptest.Buffer{}}}
	cfg := astest.Config{Clients: []astest.Client{
		{ID: "gateway", Secret: gwClientSecret, GrantTypes: []string{astest.GrantClientCredentials},
			Audiences: []string{w.upstreamURL}, Scopes: []string{"orders.read"}},
		{ID: "gateway-web", Secret: "web-secret", RedirectURIs: []string{gwBase + "/connections/signed-in"},
			GrantTypes: []string{astest.GrantAuthorizationCode}, Scopes: []string{"openid"}},
		{ID: "gateway-orders", Secret: "consent-secret", RedirectURIs: []string{gwBase + "/connections/callback"},
			GrantTypes: []string{astest.GrantAuthorizationCode, astest.GrantRefreshToken},
			Audiences:  []string{w.upstreamURL}, Scopes: []string{"orders.read", "offline_access"}},
		{ID: "agent", Secret: "agent-secret", RedirectURIs: []string{"http://127.0.0.1/cb"},
			GrantTypes: []string{astest.GrantAuthorizationCode}, Audiences: []string{w.gatewayURL}, Scopes: []string{"openid", "orders.read"}},
	}, AccessTokenLifetime: "20s"}
	for _, u := range users {
		cfg.Users = append(cfg.Users, astest.User{Subject: u, Username: u, Password: u + "-pw"})
	}
	w.as = astest.Start(t, cfg)
	w.proxy = &atkASProxy{as: w.as}
	ps := httptest.NewServer(w.proxy)
	t.Cleanup(ps.Close)
	w.proxy.self = ps.URL

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
				Consent: &gateway.Consent{AuthorizationServer: ps.URL, ClientID: "gateway-orders", ClientSecretEnv: consentSecretEnv,
					Scopes: []string{"orders.read", "offline_access"}},
				OAuth: &gateway.ClientCredentials{TokenURL: w.as.TokenURL(), ClientID: "gateway", ClientSecretEnv: gwClientSecretEnv, Scopes: []string{"orders.read"}},
			},
			Tools: []gateway.Tool{{Remote: "whoami", Title: "Who am I", Scopes: []string{"orders.read"}, ConcurrencySafe: true}},
		}},
		Lock: filepath.Join(t.TempDir(), "gateway.lock"),
	}
	opts := &gateway.Options{Logger: slog.New(slog.NewTextHandler(w.log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	accept(t, gcfg, opts)
	g, err := gateway.New(gcfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(ctx); err != nil {
		t.Fatal(err)
	}
	w.tls = &httptest.Server{Listener: gwLn, Config: &http.Server{Handler: g}}
	w.tls.StartTLS()
	t.Cleanup(func() {
		w.tls.Close()
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	w.store, err = approval.OpenSQLite(dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.store.Close() })
	return w
}

// connect is a caller's session through agent, answering URL questions
// with o.
func (w *atkConsent) connect(t *testing.T, token string, o *opener) *mcp.ClientSession {
	t.Helper()
	return atkConnect(t, w.gatewayURL, token, w.tls.Client().Transport, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			o.mu.Lock()
			o.urls = append(o.urls, req.Params.URL)
			o.mu.Unlock()
			if err := o.open(req.Params.URL); err != nil {
				t.Errorf("the person's browser: %v", err)
				return &mcp.ElicitResult{Action: "cancel"}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
}

// TestAttackConsentOverHTTPSCookiesAndLogs: over https every cookie of the
// pages is __Host-, Secure, HttpOnly, SameSite=Lax, Path=/; and after a
// whole life of a grant (connected through a call, refreshed on every
// use, a bogus callback, revoked on the page, connected again), no log
// line at debug holds a token, code, PKCE verifier, refresh token, csrf
// token, state, cookie value or secret.
func TestAttackConsentOverHTTPSCookiesAndLogs(t *testing.T) {
	w := newAtkConsent(t, "alice")
	b, rec := atkBrowser(t, w.tls.Client().Transport)
	o := &opener{open: func(link string) error { return connectBrowser(b, link, "alice") }}
	callerTok := w.signIn(t, "agent", "alice")
	cs := w.connect(t, callerTok, o)
	for i := range 3 {
		if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
			t.Fatalf("call %d: %s", i, text)
		}
	}
	if n := len(o.asked()); n != 1 {
		t.Fatalf("asked %d times, want once", n)
	}
	if err := b.get(w.gatewayBase + "/connections/callback?code=bogus&state=bogus"); err == nil {
		t.Error("a bogus callback succeeded")
	}
	if err := b.get(w.gatewayBase + "/connections/"); err != nil {
		t.Fatal(err)
	}
	csrf := csrfInput.FindStringSubmatch(b.page)
	if err := b.submit(nil); err != nil {
		t.Fatal(err)
	}
	if text, isErr := call(t, cs, "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
		t.Fatalf("the call after revoking: %s", text)
	}
	if n := len(o.asked()); n != 2 {
		t.Errorf("asked %d times, want twice (once more after revoking)", n)
	}
	gw, _ := url.Parse(w.gatewayBase)
	atkCheckCookies(t, rec, gw.Host, true)

	secrets := []string{callerTok, "consent-secret", "web-secret", gwClientSecret, os.Getenv(consentKeyEnv)}
	if csrf != nil {
		secrets = append(secrets, csrf[1])
	}
	w.proxy.mu.Lock()
	secrets = append(secrets, w.proxy.secrets...)
	w.proxy.mu.Unlock()
	secrets = append(secrets, w.upstream.rawTokens()...)
	for _, c := range rec.setCookies() {
		secrets = append(secrets, c.Value)
	}
	for _, u := range rec.visited() {
		for _, k := range []string{"code", "state", "nonce"} {
			secrets = append(secrets, u.Query().Get(k))
		}
	}
	log := w.log.String()
	if !strings.Contains(log, "connections: connected") || !strings.Contains(log, "connections: revoked") {
		t.Fatalf("the log lacks the connection's life:\n%s", log)
	}
	atkNoSecretInLog(t, log, secrets)
}

// ---------------------------------------------------------------------
// Consent: sealed grants moved between rows.
// ---------------------------------------------------------------------

// TestAttackConsentGrantCopiedToAnotherRow: someone with write access to
// the approval store copies alice's sealed grant to bob's row, and to
// alice's row for another client, and alters a byte of it: none opens;
// bob is asked to connect and his call reaches the upstream as bob,
// never alice; alice's other client is asked too; the altered grant is
// asked again; each is logged as a grant that does not open.
func TestAttackConsentGrantCopiedToAnotherRow(t *testing.T) {
	w := newConsentWorld(t, "alice", "bob")
	ctx := context.Background()
	link := w.gatewayBase + "/connections/start?client=agent&upstream=orders"
	if err := connectBrowser(newBrowser(t), link, "alice"); err != nil {
		t.Fatal(err)
	}
	alice := policy.NewPrincipal("alice", nil).WithIssuer(w.as.Issuer())
	bob := policy.NewPrincipal("bob", nil).WithIssuer(w.as.Issuer())
	row, err := w.store.LoadConnection(ctx, alice, "orders", "agent")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []approval.Connection{
		{Principal: bob, Upstream: "orders", ClientID: "agent", Scopes: row.Scopes, Sealed: row.Sealed},
		{Principal: alice, Upstream: "orders", ClientID: "other-agent", Scopes: row.Scopes, Sealed: row.Sealed},
	} {
		if err := w.store.SaveConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, who := range []struct{ user, client string }{{"bob", "agent"}, {"alice", "other-agent"}} {
		b := newBrowser(t)
		o := &opener{open: func(link string) error { return connectBrowser(b, link, who.user) }}
		before := len(w.upstream.calls())
		text, isErr := call(t, w.connectAs(t, w.signIn(t, who.client, who.user), "", o), "gateway.whoami", map[string]any{})
		if isErr || text != `{"text":"sub=`+who.user+`"}` {
			t.Errorf("%s through %s: %s", who.user, who.client, text)
		}
		if n := len(o.asked()); n != 1 {
			t.Errorf("%s through %s was asked %d times, want once: the copied grant was used", who.user, who.client, n)
		}
		for _, c := range w.upstream.calls()[before:] {
			if c.sub != who.user {
				t.Errorf("%s's call reached the upstream as %s", who.user, c.sub)
			}
		}
	}
	// Altered in place.
	row, _ = w.store.LoadConnection(ctx, alice, "orders", "agent")
	row.Sealed[len(row.Sealed)-1] ^= 1
	if err := w.store.SaveConnection(ctx, row); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	o := &opener{open: func(link string) error { return connectBrowser(b, link, "alice") }}
	if text, isErr := call(t, w.connectAs(t, w.signIn(t, "agent", "alice"), "", o), "gateway.whoami", map[string]any{}); isErr || text != `{"text":"sub=alice"}` {
		t.Errorf("alice after her grant was altered: %s", text)
	}
	if n := len(o.asked()); n != 1 {
		t.Errorf("alice's altered grant: asked %d times, want once", n)
	}
	if n := strings.Count(w.log.String(), "does not open"); n < 3 {
		t.Errorf("%d warnings of grants that do not open, want at least 3:\n%s", n, w.log.String())
	}
}
