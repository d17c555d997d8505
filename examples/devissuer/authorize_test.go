package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"golang.org/x/oauth2"
)

// testRedirectURI is the relying party's callback in these tests. Nothing
// listens there: the tests read the redirects instead of following them.
const testRedirectURI = "http://127.0.0.1:8081/callback"

// startIssuerClock starts an issuer whose clock the test sets.
func startIssuerClock(t *testing.T) (string, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	return startIssuerWith(t, func(c *issuerConfig) { c.Now = clk.Now }), clk
}

// noRedirects is a client that returns redirects instead of following them,
// as a test of a redirect-based flow must.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// authQuery returns the parameters of a valid authorization request whose
// PKCE verifier is verifier.
func authQuery(verifier string) url.Values {
	return url.Values{
		"response_type":         {"code"},
		"client_id":             {"demo"},
		"redirect_uri":          {testRedirectURI},
		"state":                 {"st-123"},
		"scope":                 {"openid users:read users:write"},
		"nonce":                 {"n-456"},
		"code_challenge":        {oauth2.S256ChallengeFromVerifier(verifier)},
		"code_challenge_method": {"S256"},
	}
}

// getAuthorize sends an authorization request and returns the response,
// unfollowed, and its body.
func getAuthorize(t *testing.T, base string, q url.Values) (*http.Response, string) {
	t.Helper()
	resp, err := noRedirects.Get(base + pathAuthorize + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return resp, readBody(t, resp)
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var requestIDField = regexp.MustCompile(`<input type="hidden" name="request" value="([^"]+)">`)

// openSignIn sends a valid authorization request and returns the pending
// request's id from the sign-in page, and the page.
func openSignIn(t *testing.T, base string, q url.Values) (string, string) {
	t.Helper()
	resp, body := getAuthorize(t, base, q)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /authorize: %s\n%s", resp.Status, body)
	}
	m := requestIDField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no pending request id in the sign-in page:\n%s", body)
	}
	return m[1], body
}

// postSignIn posts the sign-in form as a browser on the issuer's page
// would, with Origin set to origin unless it is "".
func postSignIn(t *testing.T, base, origin string, form url.Values) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+pathAuthorize, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readBody(t, resp)
}

// redirectQuery checks that resp redirects to redirectURI with status and
// returns the query it adds.
func redirectQuery(t *testing.T, resp *http.Response, status int, redirectURI string) url.Values {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %s, want %d", resp.Status, status)
	}
	loc := resp.Header.Get("Location")
	prefix := redirectURI + "?"
	if strings.Contains(redirectURI, "?") {
		prefix = redirectURI + "&"
	}
	if !strings.HasPrefix(loc, prefix) {
		t.Fatalf("Location %q, want %s...", loc, prefix)
	}
	q, err := url.ParseQuery(strings.TrimPrefix(loc, prefix))
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// signIn runs an authorization request and a sign-in as user granting
// scopes, and returns the code.
func signIn(t *testing.T, base string, q url.Values, user, scopes string) string {
	t.Helper()
	id, _ := openSignIn(t, base, q)
	resp, body := postSignIn(t, base, base, url.Values{"request": {id}, "user": {user}, "scopes": {scopes}, "action": {"sign-in"}})
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %s\n%s", resp.Status, body)
	}
	got := redirectQuery(t, resp, http.StatusSeeOther, q.Get("redirect_uri"))
	if got.Get("state") != q.Get("state") || got.Get("code") == "" || got.Has("error") {
		t.Fatalf("redirect query %v: want the code and state %q", got, q.Get("state"))
	}
	return got.Get("code")
}

// redeem sends a token request for code with HTTP Basic authentication.
func redeem(t *testing.T, base, code, redirectURI, verifier string, extra url.Values) (int, map[string]any) {
	t.Helper()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}, "code_verifier": {verifier}}
	for k, v := range extra {
		form[k] = v
	}
	status, _, body := postToken(t, base, true, "demo", "demo-secret", form)
	return status, body
}

func TestAuthorizationCodeFlow(t *testing.T) {
	for _, style := range []struct {
		name string
		auth oauth2.AuthStyle
	}{
		{"client_secret_basic", oauth2.AuthStyleInHeader},
		{"client_secret_post", oauth2.AuthStyleInParams},
	} {
		t.Run(style.name, func(t *testing.T) {
			base, clk := startIssuerClock(t)
			ctx := context.Background()
			provider, err := oidc.NewProvider(ctx, base)
			if err != nil {
				t.Fatalf("go-oidc refuses the discovery document: %v", err)
			}
			endpoint := provider.Endpoint()
			endpoint.AuthStyle = style.auth
			conf := &oauth2.Config{
				ClientID:     "demo",
				ClientSecret: "demo-secret",
				Endpoint:     endpoint,
				RedirectURL:  testRedirectURI,
				Scopes:       []string{oidc.ScopeOpenID, "users:read", "users:write"},
			}
			verifier, state, nonce := oauth2.GenerateVerifier(), "st-"+t.Name(), "n-"+t.Name()
			authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oidc.Nonce(nonce))
			if !strings.HasPrefix(authURL, base+pathAuthorize+"?") {
				t.Fatalf("AuthCodeURL %s, want the discovered authorization endpoint", authURL)
			}

			resp, err := noRedirects.Get(authURL)
			if err != nil {
				t.Fatal(err)
			}
			page := readBody(t, resp)
			m := requestIDField.FindStringSubmatch(page)
			if resp.StatusCode != http.StatusOK || m == nil {
				t.Fatalf("GET %s: %s, want the sign-in page\n%s", authURL, resp.Status, page)
			}
			clk.Add(3 * time.Second) // the user types
			signInTime := clk.Now()
			// The user narrows the grant to users:read.
			resp, body := postSignIn(t, base, base, url.Values{"request": {m[1]}, "user": {"ada"}, "scopes": {"users:read"}, "action": {"sign-in"}})
			q := redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
			if q.Get("state") != state || q.Get("code") == "" {
				t.Fatalf("redirect query %v, want a code and state %q\n%s", q, state, body)
			}
			if n := len(q.Get("code")); n < 26 { // 26 base32 characters: 130 bits
				t.Errorf("code %q has %d characters, want at least 26", q.Get("code"), n)
			}

			clk.Add(2 * time.Second)
			tok, err := conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			if tok.TokenType != "Bearer" || tok.Extra("scope") != "openid users:read" || tok.Extra("expires_in") != float64(900) {
				t.Errorf("token type %q, scope %v, expires_in %v; want Bearer, openid users:read, 900", tok.TokenType, tok.Extra("scope"), tok.Extra("expires_in"))
			}

			rawID, _ := tok.Extra("id_token").(string)
			idt, err := provider.Verifier(&oidc.Config{ClientID: "demo", Now: clk.Now}).Verify(ctx, rawID)
			if err != nil {
				t.Fatalf("go-oidc refuses the ID token: %v", err)
			}
			if idt.Nonce != nonce {
				t.Errorf("nonce %q, want %q", idt.Nonce, nonce)
			}
			if idt.Issuer != base || idt.Subject != "ada" || !slices.Equal(idt.Audience, []string{"demo"}) {
				t.Errorf("iss %q sub %q aud %v; want %s, ada, [demo]", idt.Issuer, idt.Subject, idt.Audience, base)
			}
			if !idt.IssuedAt.Equal(clk.Now()) || !idt.Expiry.Equal(clk.Now().Add(15*time.Minute)) {
				t.Errorf("iat %v exp %v, want %v and 15m later", idt.IssuedAt, idt.Expiry, clk.Now())
			}
			if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
				t.Errorf("at_hash: %v", err)
			}
			var claims struct {
				AuthTime          int64  `json:"auth_time"`
				Scope             string `json:"scope"`
				PreferredUsername string `json:"preferred_username"`
			}
			if err := idt.Claims(&claims); err != nil {
				t.Fatal(err)
			}
			if claims.AuthTime != signInTime.Unix() || claims.Scope != "openid users:read" || claims.PreferredUsername != "ada" {
				t.Errorf("auth_time %d scope %q preferred_username %q; want %d, openid users:read, ada", claims.AuthTime, claims.Scope, claims.PreferredUsername, signInTime.Unix())
			}
			// Discovery's claims_supported are exactly the ID token's claims.
			var all map[string]any
			if err := idt.Claims(&all); err != nil {
				t.Fatal(err)
			}
			names := slices.Sorted(maps.Keys(all))
			if want := slices.Sorted(slices.Values(claimsSupported)); !slices.Equal(names, want) {
				t.Errorf("ID token claims %v, want claims_supported %v", names, want)
			}

			// The access token is today's kind, for the user; the ID token is
			// told apart by its typ.
			std, extra := claimsOf(t, tok.AccessToken)
			if std.Subject != "ada" || extra.ClientID != "demo" || extra.Scope != "openid users:read" || !slices.Equal(std.Audience, jwt.Audience{"http://127.0.0.1:8080/mcp"}) {
				t.Errorf("access token sub %q client_id %q scope %q aud %v", std.Subject, extra.ClientID, extra.Scope, std.Audience)
			}
			for raw, typ := range map[string]string{tok.AccessToken: "at+jwt", rawID: "JWT"} {
				parsed, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
				if err != nil {
					t.Fatal(err)
				}
				if got := parsed.Headers[0].ExtraHeaders["typ"]; got != typ {
					t.Errorf("typ %v, want %s", got, typ)
				}
			}

			// The code is spent.
			_, err = conf.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
			var re *oauth2.RetrieveError
			if !errors.As(err, &re) || re.ErrorCode != "invalid_grant" {
				t.Errorf("replayed code: %v, want invalid_grant", err)
			}
		})
	}
}

func TestAuthorizationCodeRefusals(t *testing.T) {
	verifier := oauth2.GenerateVerifier()
	for _, tc := range []struct {
		name       string
		query      func(url.Values) // changes the authorization request
		wait       time.Duration    // between sign-in and token request
		form       url.Values       // changes the token request
		wantStatus int
		wantError  string
	}{
		{name: "valid", wantStatus: http.StatusOK},
		{name: "redeemed after 59s", wait: 59 * time.Second, wantStatus: http.StatusOK},
		{name: "expired after 60s", wait: codeTTL, wantStatus: http.StatusBadRequest, wantError: "invalid_grant"},
		{name: "PKCE mismatch", form: url.Values{"code_verifier": {oauth2.GenerateVerifier()}}, wantStatus: http.StatusBadRequest, wantError: "invalid_grant"},
		{name: "wrong redirect_uri", form: url.Values{"redirect_uri": {"http://127.0.0.1:8081/other"}}, wantStatus: http.StatusBadRequest, wantError: "invalid_grant"},
		{name: "unknown code", form: url.Values{"code": {"AAAAAAAAAAAAAAAAAAAAAAAAAA"}}, wantStatus: http.StatusBadRequest, wantError: "invalid_grant"},
		{name: "no code", form: url.Values{"code": {""}}, wantStatus: http.StatusBadRequest, wantError: "invalid_request"},
		{name: "no redirect_uri", form: url.Values{"redirect_uri": {""}}, wantStatus: http.StatusBadRequest, wantError: "invalid_request"},
		{name: "no code_verifier", form: url.Values{"code_verifier": {""}}, wantStatus: http.StatusBadRequest, wantError: "invalid_request"},
		{name: "short code_verifier", form: url.Values{"code_verifier": {strings.Repeat("a", 42)}}, wantStatus: http.StatusBadRequest, wantError: "invalid_request"},
		{name: "code_verifier outside the unreserved set", form: url.Values{"code_verifier": {strings.Repeat("a", 42) + "+"}}, wantStatus: http.StatusBadRequest, wantError: "invalid_request"},
		{name: "resource other than authorized", query: func(q url.Values) { q.Set("resource", "http://127.0.0.1:9999/mcp") }, form: url.Values{"resource": {"http://127.0.0.1:8080/mcp"}}, wantStatus: http.StatusBadRequest, wantError: "invalid_target"},
		{name: "relative resource", form: url.Values{"resource": {"/mcp"}}, wantStatus: http.StatusBadRequest, wantError: "invalid_target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, clk := startIssuerClock(t)
			q := authQuery(verifier)
			if tc.query != nil {
				tc.query(q)
			}
			code := signIn(t, base, q, "ada", "users:read")
			clk.Add(tc.wait)
			form := url.Values{"code": {code}, "redirect_uri": {testRedirectURI}, "code_verifier": {verifier}}
			for k, v := range tc.form {
				form[k] = v
			}
			status, body := redeem(t, base, form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier"), url.Values{"resource": form["resource"]})
			if status != tc.wantStatus || (tc.wantError != "" && body["error"] != tc.wantError) {
				t.Fatalf("got %d %v, want %d %s", status, body, tc.wantStatus, tc.wantError)
			}
			if tc.wantError == "" {
				if body["id_token"] == nil || body["access_token"] == nil {
					t.Errorf("no tokens in %v", body)
				}
				return
			}
			if body["access_token"] != nil || body["id_token"] != nil {
				t.Errorf("an error response carries tokens: %v", body)
			}
			if desc, _ := body["error_description"].(string); desc == "" {
				t.Error("no error_description")
			}
		})
	}
}

func TestAuthorizationCodeIsSingleUse(t *testing.T) {
	base := startIssuer(t)
	verifier := oauth2.GenerateVerifier()

	t.Run("replay after success", func(t *testing.T) {
		code := signIn(t, base, authQuery(verifier), "ada", "users:read")
		if status, body := redeem(t, base, code, testRedirectURI, verifier, nil); status != http.StatusOK {
			t.Fatalf("first redemption: %d %v", status, body)
		}
		status, body := redeem(t, base, code, testRedirectURI, verifier, nil)
		if status != http.StatusBadRequest || body["error"] != "invalid_grant" || !strings.Contains(body["error_description"].(string), "already used") {
			t.Fatalf("replay: %d %v, want invalid_grant, already used", status, body)
		}
		// Nothing else was revoked: a new sign-in still works.
		code = signIn(t, base, authQuery(verifier), "ada", "users:read")
		if status, body := redeem(t, base, code, testRedirectURI, verifier, nil); status != http.StatusOK {
			t.Fatalf("a later code: %d %v", status, body)
		}
	})

	t.Run("a failed redemption spends the code", func(t *testing.T) {
		code := signIn(t, base, authQuery(verifier), "ada", "users:read")
		if status, body := redeem(t, base, code, testRedirectURI, oauth2.GenerateVerifier(), nil); body["error"] != "invalid_grant" {
			t.Fatalf("wrong verifier: %d %v, want invalid_grant", status, body)
		}
		if status, body := redeem(t, base, code, testRedirectURI, verifier, nil); body["error"] != "invalid_grant" {
			t.Fatalf("right verifier after a wrong one: %d %v, want invalid_grant", status, body)
		}
	})

	t.Run("concurrent redemptions", func(t *testing.T) {
		code := signIn(t, base, authQuery(verifier), "ada", "users:read")
		const n = 8
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				status, _ := redeem(t, base, code, testRedirectURI, verifier, nil)
				statuses <- status
			})
		}
		wg.Wait()
		close(statuses)
		ok := 0
		for s := range statuses {
			if s == http.StatusOK {
				ok++
			}
		}
		if ok != 1 {
			t.Errorf("%d of %d concurrent redemptions succeeded, want 1", ok, n)
		}
	})
}

func TestAuthorizationCodeAudience(t *testing.T) {
	verifier := oauth2.GenerateVerifier()
	for _, tc := range []struct {
		name                 string
		authorize, tokenResp string // resource parameters, "" for none
		wantAud              string
	}{
		{"none", "", "", "http://127.0.0.1:8080/mcp"},
		{"at the token endpoint", "", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp"},
		{"at the authorization endpoint", "http://127.0.0.1:9999/mcp", "", "http://127.0.0.1:9999/mcp"},
		{"at both, the same", "http://127.0.0.1:9999/mcp", "http://127.0.0.1:9999/mcp", "http://127.0.0.1:9999/mcp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := startIssuer(t)
			q := authQuery(verifier)
			if tc.authorize != "" {
				q.Set("resource", tc.authorize)
			}
			code := signIn(t, base, q, "ada", "users:read users:write")
			var extra url.Values
			if tc.tokenResp != "" {
				extra = url.Values{"resource": {tc.tokenResp}}
			}
			status, body := redeem(t, base, code, testRedirectURI, verifier, extra)
			if status != http.StatusOK {
				t.Fatalf("%d %v", status, body)
			}
			std, acc := claimsOf(t, body["access_token"].(string))
			if !slices.Equal(std.Audience, jwt.Audience{tc.wantAud}) || acc.Scope != "openid users:read users:write" {
				t.Errorf("aud %v scope %q, want %s and openid users:read users:write", std.Audience, acc.Scope, tc.wantAud)
			}
		})
	}
}

func TestAuthorizeRedirectsErrors(t *testing.T) {
	base := startIssuer(t)
	verifier := oauth2.GenerateVerifier()
	for _, tc := range []struct {
		name      string
		change    func(url.Values)
		wantError string
	}{
		{"response_type token", func(q url.Values) { q.Set("response_type", "token") }, "unsupported_response_type"},
		{"no response_type", func(q url.Values) { q.Del("response_type") }, "invalid_request"},
		{"no state", func(q url.Values) { q.Del("state") }, "invalid_request"},
		{"state too long", func(q url.Values) { q.Set("state", strings.Repeat("s", maxParamLen+1)) }, "invalid_request"},
		{"no PKCE", func(q url.Values) { q.Del("code_challenge"); q.Del("code_challenge_method") }, "invalid_request"},
		{"no code_challenge_method", func(q url.Values) { q.Del("code_challenge_method") }, "invalid_request"},
		{"plain PKCE", func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) }, "invalid_request"},
		{"short code_challenge", func(q url.Values) { q.Set("code_challenge", "abc") }, "invalid_request"},
		{"code_challenge not base64url", func(q url.Values) { q.Set("code_challenge", strings.Repeat("+", 43)) }, "invalid_request"},
		{"no scope", func(q url.Values) { q.Del("scope") }, "invalid_scope"},
		{"scope without openid", func(q url.Values) { q.Set("scope", "users:read") }, "invalid_scope"},
		{"scope not allowed", func(q url.Values) { q.Set("scope", "openid users:read root") }, "invalid_scope"},
		{"nonce too long", func(q url.Values) { q.Set("nonce", strings.Repeat("n", maxParamLen+1)) }, "invalid_request"},
		{"repeated parameter", func(q url.Values) { q["scope"] = []string{"openid", "openid users:read"} }, "invalid_request"},
		{"repeated resource", func(q url.Values) { q["resource"] = []string{"http://a.example/", "http://b.example/"} }, "invalid_target"},
		{"relative resource", func(q url.Values) { q.Set("resource", "/mcp") }, "invalid_target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := authQuery(verifier)
			tc.change(q)
			resp, _ := getAuthorize(t, base, q)
			got := redirectQuery(t, resp, http.StatusFound, testRedirectURI)
			if got.Get("error") != tc.wantError || got.Get("error_description") == "" || got.Has("code") {
				t.Errorf("redirect query %v, want error %s with a description and no code", got, tc.wantError)
			}
			if want := q.Get("state"); got.Get("state") != want {
				t.Errorf("state %q, want %q", got.Get("state"), want)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", cc)
			}
		})
	}
}

func TestAuthorizeShowsErrorPage(t *testing.T) {
	base := startIssuerWith(t, func(c *issuerConfig) { c.RedirectURIs = []string{"https://app.example/cb"} })
	verifier := oauth2.GenerateVerifier()
	for _, tc := range []struct {
		name   string
		change func(url.Values)
	}{
		{"non-loopback redirect_uri", func(q url.Values) { q.Set("redirect_uri", "http://evil.example/callback") }},
		{"a name starting like a loopback host", func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1.evil.example/callback") }},
		{"a name ending like one", func(q url.Values) { q.Set("redirect_uri", "http://evil.localhost.example/callback") }},
		{"all interfaces", func(q url.Values) { q.Set("redirect_uri", "http://0.0.0.0:8081/callback") }},
		{"https on loopback", func(q url.Values) { q.Set("redirect_uri", "https://127.0.0.1:8081/callback") }},
		{"user info", func(q url.Values) { q.Set("redirect_uri", "http://evil.example@127.0.0.1:8081/callback") }},
		{"backslash", func(q url.Values) { q.Set("redirect_uri", `http://127.0.0.1:8081\@evil.example/`) }},
		{"fragment", func(q url.Values) { q.Set("redirect_uri", testRedirectURI+"#x") }},
		{"relative", func(q url.Values) { q.Set("redirect_uri", "/callback") }},
		{"javascript", func(q url.Values) { q.Set("redirect_uri", "javascript:alert(1)") }},
		{"not the registered one", func(q url.Values) { q.Set("redirect_uri", "https://app.example/cb2") }},
		{"no redirect_uri", func(q url.Values) { q.Del("redirect_uri") }},
		{"repeated redirect_uri", func(q url.Values) { q.Add("redirect_uri", testRedirectURI) }},
		{"unknown client", func(q url.Values) { q.Set("client_id", "mallory") }},
		{"no client", func(q url.Values) { q.Del("client_id") }},
		// Other errors are the client's to handle, but not before the
		// redirect URI is known good.
		{"bad redirect_uri and bad scope", func(q url.Values) { q.Set("redirect_uri", "http://evil.example/"); q.Set("scope", "root") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := authQuery(verifier)
			tc.change(q)
			resp, body := getAuthorize(t, base, q)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
				t.Fatalf("%s, Location %q: want 400 and no redirect", resp.Status, resp.Header.Get("Location"))
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			checkPageHeaders(t, resp.Header)
			if !strings.Contains(body, `id="error"`) || !strings.Contains(body, "DEVELOPMENT ISSUER") || strings.Contains(body, "<form") {
				t.Errorf("want an error page with the warning and no form:\n%s", body)
			}
		})
	}
}

func TestAuthorizeAcceptsRedirectURIs(t *testing.T) {
	base := startIssuerWith(t, func(c *issuerConfig) { c.RedirectURIs = []string{"https://app.example/cb"} })
	verifier := oauth2.GenerateVerifier()
	for _, uri := range []string{
		"http://127.0.0.1/",
		"http://127.0.0.1:65535/a/b",
		"http://[::1]:8081/callback",
		"http://localhost:8081/callback",
		"http://LocalHost:8081/callback",
		"http://127.0.0.1:8081/callback?tenant=a",
		"https://app.example/cb",
	} {
		t.Run(uri, func(t *testing.T) {
			q := authQuery(verifier)
			q.Set("redirect_uri", uri)
			code := signIn(t, base, q, "ada", "users:read") // checks the redirect keeps the query
			if status, body := redeem(t, base, code, uri, verifier, nil); status != http.StatusOK {
				t.Fatalf("%d %v", status, body)
			}
		})
	}
}

// checkPageHeaders checks the headers every HTML page carries.
func checkPageHeaders(t *testing.T, h http.Header) {
	t.Helper()
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "style-src 'sha256-"} {
		if !strings.Contains(csp, want) {
			t.Errorf("Content-Security-Policy %q lacks %s", csp, want)
		}
	}
	for name, want := range map[string]string{
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-store",
		"X-Content-Type-Options": "nosniff",
		"Referrer-Policy":        "same-origin",
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
}

func TestSignInPage(t *testing.T) {
	base := startIssuer(t)
	q := authQuery(oauth2.GenerateVerifier())
	resp, page := getAuthorize(t, base, q)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s\n%s", resp.Status, page)
	}
	checkPageHeaders(t, resp.Header)
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "form-action 'self' http://127.0.0.1:8081;") {
		t.Errorf("Content-Security-Policy %q: want form-action 'self' and the client's origin, which the 303 goes to", csp)
	}

	// What the browser test relies on.
	for _, want := range []string{
		`<form method="post" action="/authorize">`,
		`<label for="user">User name</label>`,
		`<input type="text" id="user" name="user" value=""`,
		`<label for="scopes">Scopes</label>`,
		`<input type="text" id="scopes" name="scopes" value="users:read users:write"`,
		`<button type="submit" id="sign-in" name="action" value="sign-in">Sign in</button>`,
		`<button type="submit" id="deny" name="action" value="deny">Cancel</button>`,
		`DEVELOPMENT ISSUER — NOT FOR PRODUCTION`,
		`<dd id="requested-scopes">openid users:read users:write</dd>`,
		`<dd id="state">st-123</dd>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(page, `id="error"`) {
		t.Error("a fresh page shows an error")
	}
	// Nothing but the page itself: no scripts, no other resources.
	for _, banned := range []string{"<script", "<link", "<img", "<iframe", "src=", "url(", "@import", "style=\""} {
		if strings.Contains(strings.ToLower(page), banned) {
			t.Errorf("the page contains %q", banned)
		}
	}
	if handler := regexp.MustCompile(`(?i)\son[a-z]+=`).FindString(page); handler != "" {
		t.Errorf("the page has an event handler attribute: %s", handler)
	}
	// The inline style is the one the policy allows.
	m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no <style>")
	}
	sum := sha256.Sum256([]byte(m[1]))
	if src := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, src) {
		t.Errorf("Content-Security-Policy %q does not allow the page's style (%s)", csp, src)
	}
}

func TestSignInPageEscapes(t *testing.T) {
	base := startIssuer(t)
	const hostile = `"><script>alert(1)</script>&`
	const escaped = `&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;`

	t.Run("state", func(t *testing.T) {
		q := authQuery(oauth2.GenerateVerifier())
		q.Set("state", hostile)
		_, page := openSignIn(t, base, q)
		if strings.Contains(page, "<script") || !strings.Contains(page, `<dd id="state">`+escaped+`</dd>`) {
			t.Errorf("the state is not escaped:\n%s", page)
		}
		// It still goes back intact.
		code := signIn(t, base, q, "ada", "")
		if code == "" {
			t.Error("no code")
		}
	})

	t.Run("user", func(t *testing.T) {
		id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
		resp, page := postSignIn(t, base, base, url.Values{"request": {id}, "user": {hostile + " x"}, "scopes": {hostile}})
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%s, want 400 and the form again", resp.Status)
		}
		if strings.Contains(page, "<script") || !strings.Contains(page, `name="user" value="`+escaped+` x"`) || !strings.Contains(page, `name="scopes" value="`+escaped+`"`) {
			t.Errorf("the user or scopes are not escaped:\n%s", page)
		}
	})

	t.Run("unknown client", func(t *testing.T) {
		q := authQuery(oauth2.GenerateVerifier())
		q.Set("client_id", hostile)
		_, page := getAuthorize(t, base, q)
		if strings.Contains(page, "<script") || !strings.Contains(page, "&lt;script&gt;") {
			t.Errorf("the client_id is not escaped:\n%s", page)
		}
	})
}

func TestSignInForm(t *testing.T) {
	base := startIssuer(t)
	for _, tc := range []struct {
		name        string
		user        string
		scopes      string
		wantProblem string // "" for a code
		wantScope   string
	}{
		{"requested scopes", "ada", "users:read users:write", "", "openid users:read users:write"},
		{"fewer scopes", "ada", "users:write", "", "openid users:write"},
		{"no scopes", "ada", "", "", "openid"},
		{"openid and duplicates", "ada", "openid users:read users:read", "", "openid users:read"},
		{"a name of 64 characters", strings.Repeat("é", 64), "", "", "openid"},
		{"punctuation", "ada@example.com", "", "", "openid"},
		{"no user", "", "users:read", "user name", ""},
		{"a space", "ada lovelace", "users:read", "user name", ""},
		{"a tab", "ada\tl", "users:read", "user name", ""},
		{"a control character", "ada\x00", "users:read", "user name", ""},
		{"an invisible format character", "ada\u202e", "users:read", "user name", ""},
		{"65 characters", strings.Repeat("a", 65), "users:read", "user name", ""},
		{"invalid UTF-8", "ada\xff", "users:read", "user name", ""},
		{"a scope not allowed", "ada", "users:read root", "not allowed", ""},
		{"a scope not requested", "ada", "users:admin", "not requested", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			verifier := oauth2.GenerateVerifier()
			id, _ := openSignIn(t, base, authQuery(verifier))
			resp, page := postSignIn(t, base, base, url.Values{"request": {id}, "user": {tc.user}, "scopes": {tc.scopes}, "action": {"sign-in"}})
			if tc.wantProblem != "" {
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
					t.Fatalf("%s, Location %q: want 400, the form again", resp.Status, resp.Header.Get("Location"))
				}
				if !strings.Contains(page, `id="error"`) || !strings.Contains(page, tc.wantProblem) || !strings.Contains(page, `id="sign-in"`) {
					t.Errorf("want the form with a problem mentioning %q:\n%s", tc.wantProblem, page)
				}
				checkPageHeaders(t, resp.Header)
				// The request is still pending: the user can correct the form.
				resp, _ = postSignIn(t, base, base, url.Values{"request": {id}, "user": {"ada"}, "scopes": {"users:read"}})
				redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
				return
			}
			q := redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
			if q.Get("state") != "st-123" {
				t.Errorf("state %q", q.Get("state"))
			}
			status, body := redeem(t, base, q.Get("code"), testRedirectURI, verifier, nil)
			if status != http.StatusOK || body["scope"] != tc.wantScope {
				t.Fatalf("token: %d %v, want scope %q", status, body, tc.wantScope)
			}
			std, _ := claimsOf(t, body["access_token"].(string))
			if std.Subject != tc.user {
				t.Errorf("sub %q, want %q", std.Subject, tc.user)
			}
		})
	}
}

func TestSignInFormRefusals(t *testing.T) {
	base, clk := startIssuerClock(t)

	t.Run("cancel", func(t *testing.T) {
		id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
		resp, _ := postSignIn(t, base, base, url.Values{"request": {id}, "user": {""}, "action": {"deny"}})
		q := redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
		if q.Get("error") != "access_denied" || q.Get("state") != "st-123" || q.Has("code") {
			t.Errorf("redirect query %v, want access_denied and the state", q)
		}
		resp, page := postSignIn(t, base, base, url.Values{"request": {id}, "user": {"ada"}})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "already completed") {
			t.Errorf("signing in after cancelling: %s, want 400, already completed", resp.Status)
		}
	})

	t.Run("reposted form", func(t *testing.T) {
		id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
		form := url.Values{"request": {id}, "user": {"ada"}}
		resp, _ := postSignIn(t, base, base, form)
		redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
		resp, page := postSignIn(t, base, base, form)
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(page, "already completed") {
			t.Errorf("second post: %s, Location %q, want 400, already completed", resp.Status, resp.Header.Get("Location"))
		}
	})

	t.Run("unknown request", func(t *testing.T) {
		resp, page := postSignIn(t, base, base, url.Values{"request": {"nonsense"}, "user": {"ada"}})
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" || !strings.Contains(page, "unknown or expired") {
			t.Errorf("%s, Location %q, want 400, unknown or expired", resp.Status, resp.Header.Get("Location"))
		}
	})

	t.Run("expired request", func(t *testing.T) {
		id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
		clk.Add(pendingTTL)
		resp, page := postSignIn(t, base, base, url.Values{"request": {id}, "user": {"ada"}})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(page, "unknown or expired") {
			t.Errorf("%s, want 400, unknown or expired", resp.Status)
		}
	})

	t.Run("hidden fields cannot change the request", func(t *testing.T) {
		id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
		resp, _ := postSignIn(t, base, base, url.Values{"request": {id}, "user": {"ada"}, "redirect_uri": {"http://evil.example/"}, "state": {"forged"}})
		q := redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
		if q.Get("state") != "st-123" {
			t.Errorf("state %q, want the request's", q.Get("state"))
		}
	})

	t.Run("repeated field", func(t *testing.T) {
		id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
		resp, _ := postSignIn(t, base, base, url.Values{"request": {id}, "user": {"ada", "eve"}})
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("%s, want 400 and no redirect", resp.Status)
		}
	})
}

func TestSignInCrossOrigin(t *testing.T) {
	base := startIssuer(t)
	rebound := "rebound.example:" + strings.TrimPrefix(base, "http://127.0.0.1:")
	for _, tc := range []struct {
		name    string
		headers map[string]string
		host    string // the Host header, when not the issuer's
		allowed bool
	}{
		{"another site", map[string]string{"Origin": "http://evil.example"}, "", false},
		{"another port on loopback", map[string]string{"Origin": "http://127.0.0.1:8081"}, "", false},
		{"opaque origin", map[string]string{"Origin": "null"}, "", false},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, "", false},
		{"same-site fetch", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:8081"}, "", false},
		{"a DNS-rebound name", map[string]string{"Origin": "http://" + rebound}, rebound, false},
		{"the issuer's page", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}, "", true},
		{"not a browser", nil, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			id, _ := openSignIn(t, base, authQuery(oauth2.GenerateVerifier()))
			form := url.Values{"request": {id}, "user": {"ada"}}
			req, err := http.NewRequest(http.MethodPost, base+pathAuthorize, strings.NewReader(form.Encode()))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := noRedirects.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			page := readBody(t, resp)
			if tc.allowed {
				redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
				return
			}
			// A rebound name is refused before the form is looked at: its
			// Host is not a loopback name (TestAnswersOnlyLoopbackNames).
			status, says := http.StatusForbidden, "another site"
			if tc.host != "" {
				status, says = http.StatusMisdirectedRequest, "does not answer for that host name"
			}
			if resp.StatusCode != status || resp.Header.Get("Location") != "" || !strings.Contains(page, says) {
				t.Fatalf("%s, Location %q: want %d and no redirect\n%s", resp.Status, resp.Header.Get("Location"), status, page)
			}
			// The refused post did not spend the request.
			resp, _ = postSignIn(t, base, base, form)
			redirectQuery(t, resp, http.StatusSeeOther, testRedirectURI)
		})
	}
}

func TestWithQuery(t *testing.T) {
	p := url.Values{"code": {"c"}, "state": {"a b&c"}}
	for uri, want := range map[string]string{
		"http://127.0.0.1/cb":       "http://127.0.0.1/cb?code=c&state=a+b%26c",
		"http://127.0.0.1/cb?x=1":   "http://127.0.0.1/cb?x=1&code=c&state=a+b%26c",
		"http://127.0.0.1/cb?":      "http://127.0.0.1/cb?code=c&state=a+b%26c",
		"http://127.0.0.1/cb?x=1&":  "http://127.0.0.1/cb?x=1&code=c&state=a+b%26c",
		"http://127.0.0.1/cb?x=%20": "http://127.0.0.1/cb?x=%20&code=c&state=a+b%26c",
	} {
		if got := withQuery(uri, p); got != want {
			t.Errorf("withQuery(%q) = %q, want %q", uri, got, want)
		}
	}
}

func TestSplitList(t *testing.T) {
	for in, want := range map[string][]string{
		"":                         nil,
		"https://a.example/cb":     {"https://a.example/cb"},
		" https://a/cb , http://b": {"https://a/cb", "http://b"},
		",,https://a/cb,":          {"https://a/cb"},
	} {
		if got := splitList(in); !slices.Equal(got, want) {
			t.Errorf("splitList(%q) = %q, want %q", in, got, want)
		}
	}
}
