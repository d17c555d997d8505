package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

var (
	testKeyOnce sync.Once
	testKey     *rsa.PrivateKey
)

// sharedKey generates one RSA key for all tests: 2048-bit generation is
// slow under the race detector.
func sharedKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	testKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

var testNow = time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)

// startIssuer serves an issuer on 127.0.0.1 and returns its URL.
func startIssuer(t *testing.T) string {
	t.Helper()
	return startIssuerWith(t, nil)
}

// startIssuerWith is startIssuer with the configuration changed by change,
// unless nil.
func startIssuerWith(t *testing.T, change func(*issuerConfig)) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	cfg := issuerConfig{
		Issuer:       base,
		ClientID:     "demo",
		ClientSecret: "demo-secret",
		Scopes:       []string{"users:read", "users:write", "users:admin"},
		Audience:     "http://127.0.0.1:8080/mcp",
		TTL:          15 * time.Minute,
		Key:          sharedKey(t),
		Now:          func() time.Time { return testNow },
	}
	if change != nil {
		change(&cfg)
	}
	is, err := newIssuer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = is
	srv.Start()
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("test server at %s, want 127.0.0.1", base)
	}
	return base
}

// postToken sends a token request. With basic, the credentials go in an
// Authorization header, form-encoded first as RFC 6749 section 2.3.1 says;
// otherwise in the body.
func postToken(t *testing.T, base string, basic bool, id, secret string, form url.Values) (int, http.Header, map[string]any) {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !basic {
		form.Set("client_id", id)
		form.Set("client_secret", secret)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, base+pathToken, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(id), url.QueryEscape(secret))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("token response is not JSON: %v\n%s", err, body)
	}
	return resp.StatusCode, resp.Header, m
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("GET %s: Content-Type %q", u, ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func TestDiscovery(t *testing.T) {
	base := startIssuer(t)
	for _, path := range []string{pathOIDCDiscovery, pathOAuthMetadata} {
		t.Run(path, func(t *testing.T) {
			var m metadata
			getJSON(t, base+path, &m)
			want := metadata{
				Issuer:                            base,
				AuthorizationEndpoint:             base + "/authorize",
				JWKSURI:                           base + "/jwks",
				TokenEndpoint:                     base + "/token",
				ResponseTypesSupported:            []string{"code"},
				ResponseModesSupported:            []string{"query"},
				SubjectTypesSupported:             []string{"public"},
				IDTokenSigningAlgValuesSupported:  []string{"RS256"},
				GrantTypesSupported:               []string{"authorization_code", "client_credentials"},
				TokenEndpointAuthMethodsSupported: []string{"client_secret_basic", "client_secret_post"},
				CodeChallengeMethodsSupported:     []string{"S256"},
				ScopesSupported:                   []string{"openid", "users:read", "users:write", "users:admin"},
				ClaimsSupported:                   []string{"iss", "sub", "aud", "iat", "exp", "auth_time", "nonce", "at_hash", "preferred_username", "scope"},
			}
			got, _ := json.Marshal(m)
			wantJSON, _ := json.Marshal(want)
			if !bytes.Equal(got, wantJSON) {
				t.Errorf("metadata\n got %s\nwant %s", got, wantJSON)
			}
		})
	}
}

func TestDiscoveryListsOpenIDOnce(t *testing.T) {
	base := startIssuerWith(t, func(c *issuerConfig) { c.Scopes = []string{"users:read", "openid"} })
	var m metadata
	getJSON(t, base+pathOIDCDiscovery, &m)
	if want := []string{"openid", "users:read"}; !slices.Equal(m.ScopesSupported, want) {
		t.Errorf("scopes_supported %q, want %q", m.ScopesSupported, want)
	}
}

func TestJWKSVerifiesToken(t *testing.T) {
	base := startIssuer(t)

	var set jose.JSONWebKeySet
	getJSON(t, base+pathJWKS, &set)
	if len(set.Keys) != 1 {
		t.Fatalf("JWKS has %d keys, want 1", len(set.Keys))
	}
	k := set.Keys[0]
	if k.KeyID == "" || k.Algorithm != "RS256" || k.Use != "sig" || !k.IsPublic() {
		t.Fatalf("JWK kid=%q alg=%q use=%q public=%v; want a kid, RS256, sig, public", k.KeyID, k.Algorithm, k.Use, k.IsPublic())
	}
	if _, ok := k.Key.(*rsa.PublicKey); !ok {
		t.Fatalf("JWK key is %T, want *rsa.PublicKey", k.Key)
	}

	status, hdr, body := postToken(t, base, true, "demo", "demo-secret", url.Values{"grant_type": {"client_credentials"}})
	if status != http.StatusOK {
		t.Fatalf("token: %d %v", status, body)
	}
	if cc := hdr.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	if body["token_type"] != "Bearer" || body["expires_in"] != float64(900) || body["scope"] != "users:read users:write users:admin" {
		t.Errorf("token response %v: want Bearer, 900 s, every allowed scope", body)
	}

	raw, _ := body["access_token"].(string)
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	if h := tok.Headers[0]; h.KeyID != k.KeyID || h.Algorithm != "RS256" {
		t.Errorf("token header kid=%q alg=%q, want kid %q, RS256", h.KeyID, h.Algorithm, k.KeyID)
	}
	keys := set.Key(tok.Headers[0].KeyID)
	if len(keys) != 1 {
		t.Fatalf("no JWK for kid %q", tok.Headers[0].KeyID)
	}
	var std jwt.Claims
	var extra accessClaims
	if err := tok.Claims(keys[0].Key, &std, &extra); err != nil {
		t.Fatalf("signature does not verify with the JWKS key: %v", err)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{
		Issuer:      base,
		Subject:     "demo",
		AnyAudience: jwt.Audience{"http://127.0.0.1:8080/mcp"},
		Time:        testNow.Add(time.Minute),
	}, 0); err != nil {
		t.Errorf("claims: %v", err)
	}
	if std.ID == "" || std.IssuedAt == nil || std.NotBefore == nil || std.Expiry == nil {
		t.Errorf("claims %+v: want jti, iat, nbf and exp", std)
	} else if got := std.Expiry.Time().Sub(std.IssuedAt.Time()); got != 15*time.Minute {
		t.Errorf("exp - iat = %v, want 15m", got)
	}
	if extra.ClientID != "demo" || extra.Scope != "users:read users:write users:admin" {
		t.Errorf("client_id %q, scope %q", extra.ClientID, extra.Scope)
	}

	// A token signed by another key must not verify.
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	if err := tok.Claims(&other.PublicKey, &std); err == nil {
		t.Error("token verified with an unrelated key")
	}
}

func TestClientAuthentication(t *testing.T) {
	base := startIssuer(t)
	grant := func() url.Values { return url.Values{"grant_type": {"client_credentials"}} }
	for _, tc := range []struct {
		name       string
		basic      bool
		id, secret string
		wantStatus int
		wantError  string
	}{
		{"basic", true, "demo", "demo-secret", http.StatusOK, ""},
		{"post", false, "demo", "demo-secret", http.StatusOK, ""},
		{"basic bad secret", true, "demo", "wrong", http.StatusUnauthorized, "invalid_client"},
		{"post bad secret", false, "demo", "wrong", http.StatusUnauthorized, "invalid_client"},
		{"unknown client", false, "mallory", "demo-secret", http.StatusUnauthorized, "invalid_client"},
		{"no credentials", false, "", "", http.StatusUnauthorized, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := postToken(t, base, tc.basic, tc.id, tc.secret, grant())
			if status != tc.wantStatus {
				t.Fatalf("status %d, want %d (%v)", status, tc.wantStatus, body)
			}
			if cc := hdr.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
			if tc.wantError == "" {
				if body["access_token"] == "" || body["access_token"] == nil {
					t.Errorf("no access_token in %v", body)
				}
				return
			}
			if body["error"] != tc.wantError {
				t.Errorf("error %v, want %s", body["error"], tc.wantError)
			}
			if body["access_token"] != nil {
				t.Error("an error response carries an access token")
			}
			if hdr.Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
}

func TestTokenRequestErrors(t *testing.T) {
	base := startIssuer(t)
	for _, tc := range []struct {
		name      string
		form      url.Values
		wantError string
	}{
		{"authorization_code without redirect_uri and code_verifier", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}, "invalid_request"},
		{"password grant", url.Values{"grant_type": {"password"}}, "unsupported_grant_type"},
		{"no grant", url.Values{}, "invalid_request"},
		{"repeated parameter", url.Values{"grant_type": {"client_credentials"}, "scope": {"users:read", "users:write"}}, "invalid_request"},
		{"disallowed scope", url.Values{"grant_type": {"client_credentials"}, "scope": {"users:read root"}}, "invalid_scope"},
		{"relative resource", url.Values{"grant_type": {"client_credentials"}, "resource": {"/mcp"}}, "invalid_target"},
		{"non-http resource", url.Values{"grant_type": {"client_credentials"}, "resource": {"urn:example:mcp"}}, "invalid_target"},
		{"resource with fragment", url.Values{"grant_type": {"client_credentials"}, "resource": {"http://127.0.0.1:8080/mcp#x"}}, "invalid_target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := postToken(t, base, true, "demo", "demo-secret", tc.form)
			if status != http.StatusBadRequest || body["error"] != tc.wantError {
				t.Fatalf("got %d %v, want 400 %s", status, body, tc.wantError)
			}
			if desc, _ := body["error_description"].(string); desc == "" {
				t.Error("no error_description")
			}
			if cc := hdr.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
		})
	}

	t.Run("GET", func(t *testing.T) {
		resp, err := http.Get(base + pathToken)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("GET /token: %s, want 405", resp.Status)
		}
	})
}

// claimsOf decodes a token's claims after checking its signature with the
// shared test key.
func claimsOf(t *testing.T, raw string) (jwt.Claims, accessClaims) {
	t.Helper()
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		t.Fatal(err)
	}
	var std jwt.Claims
	var extra accessClaims
	if err := tok.Claims(&sharedKey(t).PublicKey, &std, &extra); err != nil {
		t.Fatal(err)
	}
	return std, extra
}

func TestScopeAndResource(t *testing.T) {
	base := startIssuer(t)
	for _, tc := range []struct {
		name      string
		form      url.Values
		wantScope string
		wantAud   string
	}{
		{"defaults", url.Values{}, "users:read users:write users:admin", "http://127.0.0.1:8080/mcp"},
		{"one scope", url.Values{"scope": {"users:read"}}, "users:read", "http://127.0.0.1:8080/mcp"},
		{"scopes deduplicated in request order", url.Values{"scope": {"users:admin users:read users:admin"}}, "users:admin users:read", "http://127.0.0.1:8080/mcp"},
		{"resource becomes aud", url.Values{"resource": {"https://mcp.example.com/mcp"}}, "users:read users:write users:admin", "https://mcp.example.com/mcp"},
		{"scope and resource", url.Values{"scope": {"users:write"}, "resource": {"http://127.0.0.1:9999/other"}}, "users:write", "http://127.0.0.1:9999/other"},
	} {
		for _, basic := range []bool{true, false} {
			name := tc.name + map[bool]string{true: " basic", false: " post"}[basic]
			t.Run(name, func(t *testing.T) {
				form := url.Values{"grant_type": {"client_credentials"}}
				for k, v := range tc.form {
					form[k] = v
				}
				status, _, body := postToken(t, base, basic, "demo", "demo-secret", form)
				if status != http.StatusOK {
					t.Fatalf("status %d: %v", status, body)
				}
				if body["scope"] != tc.wantScope {
					t.Errorf("response scope %q, want %q", body["scope"], tc.wantScope)
				}
				std, extra := claimsOf(t, body["access_token"].(string))
				if !slices.Equal(std.Audience, jwt.Audience{tc.wantAud}) {
					t.Errorf("aud %v, want %s", std.Audience, tc.wantAud)
				}
				if extra.Scope != tc.wantScope {
					t.Errorf("scope claim %q, want %q", extra.Scope, tc.wantScope)
				}
				if std.Subject != "demo" || extra.ClientID != "demo" {
					t.Errorf("sub %q, client_id %q, want demo", std.Subject, extra.ClientID)
				}
			})
		}
	}
}

func TestSpecialCharactersInBasicCredentials(t *testing.T) {
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	is, err := newIssuer(issuerConfig{
		Issuer: base, ClientID: "my client", ClientSecret: "s3cr:t&+%",
		Scopes: []string{"a"}, Audience: "http://127.0.0.1:8080/mcp", TTL: time.Minute, Key: sharedKey(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = is
	srv.Start()
	defer srv.Close()
	for _, basic := range []bool{true, false} {
		status, _, body := postToken(t, base, basic, "my client", "s3cr:t&+%", url.Values{"grant_type": {"client_credentials"}})
		if status != http.StatusOK {
			t.Errorf("basic=%v: %d %v", basic, status, body)
		}
	}
}

func TestNewIssuerRejectsBadConfig(t *testing.T) {
	good := issuerConfig{
		Issuer: "http://127.0.0.1:9000", ClientID: "demo", ClientSecret: "demo-secret",
		Scopes: []string{"users:read"}, Audience: "http://127.0.0.1:8080/mcp", TTL: time.Minute, Key: sharedKey(t),
	}
	for _, tc := range []struct {
		name   string
		change func(*issuerConfig)
		want   string
	}{
		{"empty secret", func(c *issuerConfig) { c.ClientSecret = "" }, "-client-secret"},
		{"no scopes", func(c *issuerConfig) { c.Scopes = nil }, "-scopes"},
		{"bad scope", func(c *issuerConfig) { c.Scopes = []string{`a"b`} }, "-scopes"},
		{"relative audience", func(c *issuerConfig) { c.Audience = "/mcp" }, "-audience"},
		{"zero ttl", func(c *issuerConfig) { c.TTL = 0 }, "-ttl"},
		{"relative redirect URI", func(c *issuerConfig) { c.RedirectURIs = []string{"/callback"} }, "-redirect-uris"},
		{"redirect URI with a fragment", func(c *issuerConfig) { c.RedirectURIs = []string{"https://app.example/cb#x"} }, "-redirect-uris"},
		{"redirect URI with user info", func(c *issuerConfig) { c.RedirectURIs = []string{"https://me@app.example/cb"} }, "-redirect-uris"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.change(&cfg)
			_, err := newIssuer(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func TestLoopbackHost(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:9000": true,
		"127.0.0.2:9000": true,
		"[::1]:9000":     true,
		"localhost:9000": true,
		"0.0.0.0:9000":   false,
		":9000":          false,
		"[::]:9000":      false,
		"10.0.0.1:9000":  false,
		"example.com:80": false,
		"127.0.0.1":      false,
	} {
		_, err := loopbackHost(addr)
		if (err == nil) != ok {
			t.Errorf("loopbackHost(%q) error %v, want ok=%v", addr, err, ok)
		}
	}
}

func TestServePrintsIssuerFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, pw, nil, "127.0.0.1:0", issuerConfig{
			ClientID: "demo", ClientSecret: "demo-secret", Scopes: []string{"users:read"},
			Audience: "http://127.0.0.1:8080/mcp", TTL: time.Minute, Key: sharedKey(t),
		})
		pw.Close()
	}()
	line, err := readLine(pr)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(line, "http://127.0.0.1:") || strings.HasSuffix(line, ":0") {
		t.Fatalf("first line %q, want http://127.0.0.1:PORT", line)
	}
	var m metadata
	getJSON(t, line+pathOIDCDiscovery, &m)
	if m.Issuer != line {
		t.Errorf("issuer %q, printed %q", m.Issuer, line)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}

	if err := serve(context.Background(), io.Discard, nil, "0.0.0.0:0", issuerConfig{}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("serve on 0.0.0.0: %v, want a loopback error", err)
	}
}

func readLine(r io.Reader) (string, error) {
	var b []byte
	buf := make([]byte, 1)
	for {
		if _, err := r.Read(buf); err != nil {
			return string(b), err
		}
		if buf[0] == '\n' {
			return string(b), nil
		}
		b = append(b, buf[0])
	}
}
