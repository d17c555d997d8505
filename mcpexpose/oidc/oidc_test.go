package oidc_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/go-jose/go-jose/v4"
)

// issuer is a real, local OpenID provider: discovery, a JWKS with keys that
// can rotate, and tokens signed with real keys.
type issuer struct {
	srv      *httptest.Server
	jwksHits atomic.Int32

	mu        sync.Mutex
	published []jose.JSONWebKey
	answer    func(w http.ResponseWriter) bool // when set and true, answers the JWKS request instead
	held      *heldFetch                       // when set, the next JWKS request is held
	now       func() time.Time                 // the clock fetches are recorded with
	fetches   []time.Time
}

// heldFetch is a JWKS request the issuer holds: it answers the set
// published as it arrived, once released.
type heldFetch struct {
	entered chan struct{} // closed as the request arrives
	release chan struct{} // closed by the test
}

// holdFetch holds the next JWKS request until release is called (by the
// test's cleanup at the latest); entered is closed when it has arrived.
func (is *issuer) holdFetch(t *testing.T) (entered <-chan struct{}, release func()) {
	h := &heldFetch{entered: make(chan struct{}), release: make(chan struct{})}
	is.mu.Lock()
	is.held = h
	is.mu.Unlock()
	release = sync.OnceFunc(func() { close(h.release) })
	t.Cleanup(release)
	return h.entered, release
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	is := &issuer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.srv.URL,
			"jwks_uri":                              is.srv.URL + "/jwks",
			"token_endpoint":                        is.srv.URL + "/token",
			"response_types_supported":              []string{"token"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		is.jwksHits.Add(1)
		is.mu.Lock()
		is.fetches = append(is.fetches, is.now())
		held := is.held
		is.held = nil
		set := jose.JSONWebKeySet{Keys: is.published} // read as the request arrives
		is.mu.Unlock()
		if held != nil {
			close(held.entered)
			select {
			case <-held.release:
			case <-r.Context().Done():
				return
			}
		}
		is.mu.Lock()
		answer := is.answer
		is.mu.Unlock()
		if answer != nil && answer(w) {
			return
		}
		json.NewEncoder(w).Encode(set)
	})
	is.now = time.Now
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

// fetchTimes returns when the JWKS was fetched, by is.now.
func (is *issuer) fetchTimes() []time.Time {
	is.mu.Lock()
	defer is.mu.Unlock()
	return slices.Clone(is.fetches)
}

// publish replaces the issuer's published public keys.
func (is *issuer) publish(keys ...signingKey) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.published = nil
	for _, k := range keys {
		is.published = append(is.published, jose.JSONWebKey{Key: k.public(), KeyID: k.kid, Algorithm: string(k.alg), Use: "sig"})
	}
}

type signingKey struct {
	kid string
	alg jose.SignatureAlgorithm
	key any // private key, or HMAC secret
}

func (k signingKey) public() any {
	switch p := k.key.(type) {
	case *rsa.PrivateKey:
		return &p.PublicKey
	case *ecdsa.PrivateKey:
		return &p.PublicKey
	}
	panic("no public key")
}

func rsaKey(t *testing.T, kid string) signingKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.RS256, key: k}
}

func ecKey(t *testing.T, kid string) signingKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, alg: jose.ES256, key: k}
}

func sign(t *testing.T, k signingKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.key, KeyID: k.kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// unsigned builds an "alg": "none" token.
func unsigned(claims map[string]any) string {
	enc := base64.RawURLEncoding
	h, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	p, _ := json.Marshal(claims)
	return enc.EncodeToString(h) + "." + enc.EncodeToString(p) + "."
}

const resource = "https://mcp.example.com/mcp"

// service is a users-like application with a read and an admin tool whose
// handler calls are counted.
func service(t *testing.T, calls *atomic.Int32) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("users", nil)
	read := app.Capability(func(context.Context) (string, error) { calls.Add(1); return "read", nil },
		&agnara.CapabilityOptions{Name: "list_users", Description: "List.", Scopes: []string{"users:read"}})
	admin := app.Capability(func(context.Context) (string, error) { calls.Add(1); return "deleted", nil },
		&agnara.CapabilityOptions{Name: "delete_user", Description: "Delete.", Scopes: []string{"users:admin", "users:read"}})
	exp := mcpexpose.New(app)
	exp.Tool(read, nil)
	exp.Tool(admin, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func TestTokenMatrix(t *testing.T) {
	is := newIssuer(t)
	k1, k2, ec := rsaKey(t, "k1"), rsaKey(t, "k2"), ecKey(t, "ec1")
	stranger := rsaKey(t, "k1") // same kid, different key: a forged signature
	unknown := rsaKey(t, "k9")  // a key the issuer never published
	is.publish(k1, ec)

	ctx := context.Background()
	clk := newClock()
	// Unknown key ids wait for the next fetch the interval allows; the
	// interval has its own tests (keyset_test.go), here it is negligible.
	v, err := oidc.NewVerifier(ctx, is.srv.URL, resource, &oidc.Options{Now: clk.Now, KeyRefetchInterval: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	h, err := mcpexpose.NewHandler(service(t, &calls), &mcpexpose.HandlerOptions{
		Tokens:   v.Verify,
		Resource: &mcpexpose.Resource{URL: resource, AuthorizationServers: []string{is.srv.URL}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Mount(mux, "/mcp")
	mcpSrv := httptest.NewServer(mux)
	defer mcpSrv.Close()

	now := clk.Now()
	claims := func(edit func(map[string]any)) map[string]any {
		c := map[string]any{
			"iss": is.srv.URL, "sub": "alice", "aud": []string{resource}, "client_id": "cli",
			"scope": "users:read", "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		}
		if edit != nil {
			edit(c)
		}
		return c
	}
	pub, _ := x509.MarshalPKIXPublicKey(k1.public())
	hmacWithPublicKey := signingKey{kid: "k1", alg: jose.HS256, key: pub}

	const meta = `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`
	invalid := `Bearer error="invalid_token", ` + meta
	tests := []struct {
		name       string
		token      string // "" sends no Authorization header
		tool       string
		before     func()
		wantStatus int
		wantAuth   string // WWW-Authenticate, exactly
		wantCall   bool
	}{
		{"no token", "", "users.list_users", nil, 401, "Bearer " + meta, false},
		{"malformed", "not.a.jwt", "users.list_users", nil, 401, invalid, false},
		{"bad signature", sign(t, stranger, claims(nil)), "users.list_users", nil, 401, invalid, false},
		{"unknown key id", sign(t, unknown, claims(nil)), "users.list_users", nil, 401, invalid, false},
		{"wrong issuer", sign(t, k1, claims(func(c map[string]any) { c["iss"] = "https://evil.example" })), "users.list_users", nil, 401, invalid, false},
		{"wrong audience", sign(t, k1, claims(func(c map[string]any) { c["aud"] = []string{"https://other.example/mcp"} })), "users.list_users", nil, 401, invalid, false},
		{"expired", sign(t, k1, claims(func(c map[string]any) { c["exp"] = now.Add(-time.Minute).Unix() })), "users.list_users", nil, 401, invalid, false},
		{"expired within leeway", sign(t, k1, claims(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() })), "users.list_users", nil, 200, "", true},
		{"not yet valid", sign(t, k1, claims(func(c map[string]any) { c["nbf"] = now.Add(time.Minute).Unix() })), "users.list_users", nil, 401, invalid, false},
		{"no exp", sign(t, k1, claims(func(c map[string]any) { delete(c, "exp") })), "users.list_users", nil, 401, invalid, false},
		{"alg none", unsigned(claims(nil)), "users.list_users", nil, 401, invalid, false},
		{"HS256 signed with the public key", sign(t, hmacWithPublicKey, claims(nil)), "users.list_users", nil, 401, invalid, false},
		{"insufficient scope", sign(t, k1, claims(nil)), "users.delete_user", nil, 403, `Bearer error="insufficient_scope", scope="users:admin users:read", ` + meta, false},
		{"scope as string", sign(t, k1, claims(func(c map[string]any) { c["scope"] = "users:admin users:read" })), "users.delete_user", nil, 200, "", true},
		{"scope as array", sign(t, k1, claims(func(c map[string]any) { delete(c, "scope"); c["scp"] = []string{"users:read", "users:admin"} })), "users.delete_user", nil, 200, "", true},
		{"ES256", sign(t, ec, claims(nil)), "users.list_users", nil, 200, "", true},
		{"rotated key", sign(t, k2, claims(nil)), "users.list_users", func() { is.publish(k2) }, 200, "", true},
		{"retired key", sign(t, k1, claims(nil)), "users.list_users", nil, 401, invalid, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			before := calls.Load()
			status, challenge, body := call(t, mcpSrv.URL+"/mcp", tt.token, tt.tool)
			if status != tt.wantStatus || challenge != tt.wantAuth {
				t.Errorf("status %d, WWW-Authenticate %q; want %d, %q\nbody: %s", status, challenge, tt.wantStatus, tt.wantAuth, body)
			}
			if got := calls.Load() - before; (got == 1) != tt.wantCall || got > 1 {
				t.Errorf("handler ran %d times, want call=%v", got, tt.wantCall)
			}
			if tt.token != "" && strings.Contains(body, tt.token) {
				t.Error("the response quotes the token")
			}
		})
	}

	// Protected-resource metadata, at both well-known paths.
	for _, path := range h.MetadataPaths() {
		resp, err := http.Get(mcpSrv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		want := fmt.Sprintf(`map[authorization_servers:[%s] bearer_methods_supported:[header] resource:%s scopes_supported:[users:read users:admin]]`, is.srv.URL, resource)
		if fmt.Sprint(doc) != want {
			t.Errorf("%s: %v\nwant %s", path, doc, want)
		}
	}
}

// TestUnknownKeyIDRefreshesOnce: a key published just after a fetch is
// accepted on its first token, which waits for the next fetch the interval
// allows; a known key id never fetches.
func TestUnknownKeyIDRefreshesOnce(t *testing.T) {
	is := newIssuer(t)
	k1, k2 := rsaKey(t, "k1"), rsaKey(t, "k2")
	is.publish(k1)
	clk := newClock()
	v := newVerifier(t, is, clk, nil)
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}
	hits := is.jwksHits.Load()
	if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}
	if is.jwksHits.Load() != hits {
		t.Error("a known key id fetched the JWKS again")
	}
	is.publish(k1, k2) // within the interval of the first token's fetch
	ti, err, waited := verifyWaiting(t, v, clk, sign(t, k2, c))
	if err != nil {
		t.Fatalf("rotated key refused: %v", err)
	}
	if !waited {
		t.Error("the rotated key was accepted without waiting for the refetch interval")
	}
	if is.jwksHits.Load() != hits+1 {
		t.Errorf("JWKS fetched %d times for an unknown key id, want once", is.jwksHits.Load()-hits)
	}
	if ti.UserID != "s" || ti.Extra[mcpexpose.ExtraResource] != resource || ti.Extra[mcpexpose.ExtraIssuer] != is.srv.URL {
		t.Errorf("token info = %+v", ti)
	}
}

func TestClientIDClaim(t *testing.T) {
	is := newIssuer(t)
	k := rsaKey(t, "k1")
	is.publish(k)
	base := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": time.Now().Add(time.Hour).Unix(), "azp": "from-azp", "client_id": "from-client-id"}
	for _, tc := range []struct {
		claims []string
		want   string
	}{{nil, "from-client-id"}, {[]string{"azp"}, "from-azp"}, {[]string{"cid"}, ""}} {
		v, err := oidc.NewVerifier(context.Background(), is.srv.URL, resource, &oidc.Options{ClientIDClaims: tc.claims})
		if err != nil {
			t.Fatal(err)
		}
		ti, err := v.Verify(context.Background(), sign(t, k, base), nil)
		if err != nil {
			t.Fatal(err)
		}
		if ti.Extra[mcpexpose.ExtraClientID] != tc.want {
			t.Errorf("claims %v: client id %v, want %q", tc.claims, ti.Extra[mcpexpose.ExtraClientID], tc.want)
		}
	}
}

func TestNewVerifierChecksItsConfiguration(t *testing.T) {
	is := newIssuer(t)
	is.publish(rsaKey(t, "k1"))
	ctx := context.Background()
	for _, tc := range []struct {
		name, issuer, resource string
		opts                   *oidc.Options
		want                   string
	}{
		{"relative resource", is.srv.URL, "/mcp", nil, "must be an absolute http(s) URI"},
		{"resource with fragment", is.srv.URL, resource + "#x", nil, "without query or fragment"},
		{"HMAC algorithm", is.srv.URL, resource, &oidc.Options{Algorithms: []string{"HS256"}}, "only asymmetric"},
		{"none algorithm", is.srv.URL, resource, &oidc.Options{Algorithms: []string{"none"}}, "only asymmetric"},
		{"huge leeway", is.srv.URL, resource, &oidc.Options{Leeway: time.Hour}, "leeway"},
		{"resource with query", is.srv.URL, resource + "?x=1", nil, "without query"},
		{"unreachable issuer", "http://127.0.0.1:1", resource, nil, "discovering issuer"},
		{"issuer mismatch", is.srv.URL + "/other", resource, nil, "discovering issuer"},
	} {
		if _, err := oidc.NewVerifier(ctx, tc.issuer, tc.resource, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// The key set is fetched from the discovery document's jwks_uri, which
	// must be there and absolute.
	for _, jwks := range []any{nil, "", "/jwks", "file:///etc/passwd", 7} {
		var srv *httptest.Server
		srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			doc := map[string]any{"issuer": srv.URL}
			if jwks != nil {
				doc["jwks_uri"] = jwks
			}
			json.NewEncoder(w).Encode(doc)
		}))
		_, err := oidc.NewVerifier(ctx, srv.URL, resource, nil)
		if err == nil || !strings.Contains(err.Error(), "jwks_uri") {
			t.Errorf("jwks_uri %#v: err = %v, want a start-up error naming jwks_uri", jwks, err)
		}
		srv.Close()
	}
}

// call sends a 2026-07-28 tools/call and returns the status, the
// WWW-Authenticate header and the body.
func call(t *testing.T, url, token, tool string) (int, string, string) {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": mcptest.Meta(nil)}
	resp, body, _ := mcptest.Do(t, mcptest.Request(t, url, "tools/call", params, token))
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(body)
}
