package astest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

const (
	mcpA = "http://127.0.0.1:9/mcp"
	mcpB = "http://127.0.0.1:9/other"
)

// config is the tests' server configuration: a confidential gateway with
// every grant, a public app, and a client without token exchange.
func config() Config {
	return Config{
		Clients: []Client{
			{
				ID: "gateway", Secret: "s3cret",
				RedirectURIs: []string{"http://127.0.0.1/cb"},
				GrantTypes:   []string{GrantAuthorizationCode, GrantRefreshToken, GrantClientCredentials, GrantTokenExchange},
				Audiences:    []string{mcpA, mcpB},
				Scopes:       []string{"openid", "orders.read", "orders.write", "offline_access"},
			},
			{
				ID: "app", Public: true,
				RedirectURIs: []string{"http://127.0.0.1:4321/callback"},
				Audiences:    []string{mcpA},
				Scopes:       []string{"openid", "orders.read"},
			},
			{
				ID: "plain", Secret: "plain-secret",
				GrantTypes: []string{GrantClientCredentials},
				Audiences:  []string{mcpA},
				Scopes:     []string{"orders.read"},
			},
		},
		Users: []User{
			{Subject: "alice", Username: "alice", Password: "alice-pw"},
			{Subject: "bob", Username: "bob", Password: "bob-pw"},
		},
		AccessTokenLifetime: "5m",
	}
}

// signInAlice signs alice in with the gateway for mcpA.
func signInAlice(t *testing.T, s *Server, scopes ...string) Token {
	t.Helper()
	return s.SignIn(t, SignInRequest{
		ClientID: "gateway", ClientSecret: "s3cret",
		Username: "alice", Password: "alice-pw",
		Scopes: scopes, Resource: mcpA,
		RedirectURI: "http://127.0.0.1:38123/cb", // any port: registered without one
	})
}

// audience returns a JWT's aud claim as a list.
func audience(claims map[string]any) []string {
	switch aud := claims["aud"].(type) {
	case string:
		return []string{aud}
	case []any:
		var out []string
		for _, a := range aud {
			s, _ := a.(string)
			out = append(out, s)
		}
		return out
	}
	return nil
}

// wantOAuthError checks that err is an OAuth error with code.
func wantOAuthError(t *testing.T, err error, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("got error %v, want OAuth error %q", err, code)
	}
}

func TestCodeFlowAndRefresh(t *testing.T) {
	t.Parallel()
	s := Start(t, config())
	tok := signInAlice(t, s, "openid", "orders.read", "offline_access")
	if tok.TokenType != "Bearer" || tok.ExpiresIn <= 0 || tok.RefreshToken == "" {
		t.Fatalf("token response %+v: want a Bearer token with expires_in and a refresh token", tok)
	}
	c := Claims(t, tok.AccessToken)
	if !slices.Contains(audience(c), mcpA) || c["sub"] != "alice" || c["client_id"] != "gateway" ||
		c["scope"] != "openid orders.read offline_access" || c["iss"] != s.Issuer() {
		t.Fatalf("access token claims %v", c)
	}

	// The signature, against the JWKS found by discovery.
	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, s.Issuer())
	if err != nil {
		t.Fatal(err)
	}
	verified, err := provider.Verifier(&oidc.Config{ClientID: mcpA}).Verify(ctx, tok.AccessToken)
	if err != nil {
		t.Fatalf("verifying the access token: %v", err)
	}
	if verified.Subject != "alice" {
		t.Fatalf("verified subject %q", verified.Subject)
	}
	var meta struct {
		Grants []string `json:"grant_types_supported"`
		PKCE   []string `json:"code_challenge_methods_supported"`
		Revoke string   `json:"revocation_endpoint"`
	}
	if err := provider.Claims(&meta); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(meta.Grants, GrantTokenExchange) || !slices.Equal(meta.PKCE, []string{"S256"}) || meta.Revoke != s.RevokeURL() {
		t.Fatalf("discovery %+v", meta)
	}

	// Refresh keeps the subject and the audience, and rotates the refresh
	// token.
	again := s.Refresh(t, "gateway", "s3cret", tok.RefreshToken)
	c2 := Claims(t, again.AccessToken)
	if !slices.Equal(audience(c2), audience(c)) || c2["sub"] != "alice" || again.RefreshToken == "" || again.RefreshToken == tok.RefreshToken {
		t.Fatalf("refreshed: claims %v, refresh token rotated: %v", c2, again.RefreshToken != tok.RefreshToken)
	}
	_, err = s.TokenRequest(ctx, "gateway", "s3cret", url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {tok.RefreshToken}})
	wantOAuthError(t, err, "invalid_grant")

	// Revoking the refresh token ends it, and the access tokens issued with
	// it.
	s.Revoke(t, "gateway", "s3cret", again.RefreshToken)
	_, err = s.TokenRequest(ctx, "gateway", "s3cret", url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {again.RefreshToken}})
	wantOAuthError(t, err, "invalid_grant")
	_, err = s.Exchange(ctx, "gateway", "s3cret", again.AccessToken, mcpB)
	wantOAuthError(t, err, "invalid_grant")
}

func TestSignInRefusals(t *testing.T) {
	t.Parallel()
	s := Start(t, config())
	ctx := context.Background()
	req := SignInRequest{ClientID: "gateway", ClientSecret: "s3cret", Username: "alice", Password: "wrong", Resource: mcpA}
	if _, err := s.TrySignIn(ctx, req); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("wrong password: got %v, want the login page's 401", err)
	}
	req.Password = "alice-pw"
	req.Resource = "http://127.0.0.1:9/unknown"
	_, err := s.TrySignIn(ctx, req)
	wantOAuthError(t, err, "invalid_target")
	req.Resource = mcpA
	req.RedirectURI = "http://127.0.0.1:38123/elsewhere"
	if _, err := s.TrySignIn(ctx, req); err == nil {
		t.Fatal("an unregistered redirect URI was accepted")
	}
	req.RedirectURI = "http://localhost:38123/cb"
	if _, err := s.TrySignIn(ctx, req); err == nil {
		t.Fatal("a redirect URI on another host was accepted")
	}
}

func TestPublicClient(t *testing.T) {
	t.Parallel()
	s := Start(t, config())
	tok := s.SignIn(t, SignInRequest{
		ClientID: "app", Username: "bob", Password: "bob-pw",
		Scopes: []string{"openid", "orders.read", "orders.write"}, Resource: mcpA,
	})
	c := Claims(t, tok.AccessToken)
	// orders.write is not the app's: zitadel drops it.
	if c["sub"] != "bob" || c["client_id"] != "app" || c["scope"] != "openid orders.read" || !slices.Contains(audience(c), mcpA) {
		t.Fatalf("claims %v", c)
	}
}

func TestExchange(t *testing.T) {
	t.Parallel()
	s := Start(t, config())
	ctx := context.Background()
	user := signInAlice(t, s, "openid", "orders.read", "orders.write")

	got, err := s.Exchange(ctx, "gateway", "s3cret", user.AccessToken, mcpB, "orders.read", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if got.IssuedTokenType != AccessTokenType || got.TokenType != "Bearer" || got.ExpiresIn <= 0 || got.Scope != "orders.read" {
		t.Fatalf("exchange response %+v", got)
	}
	c := Claims(t, got.AccessToken)
	act, _ := c["act"].(map[string]any)
	if !slices.Equal(audience(c), []string{mcpB}) || c["sub"] != "alice" || c["scope"] != "orders.read" ||
		c["client_id"] != "gateway" || act["sub"] != "gateway" {
		t.Fatalf("exchanged token claims %v", c)
	}

	// Without scopes: the subject token's; with the audience parameter and
	// client_secret_post.
	all, err := s.TokenRequest(ctx, "", "", url.Values{
		"grant_type": {GrantTokenExchange}, "client_id": {"gateway"}, "client_secret": {"s3cret"},
		"subject_token": {user.AccessToken}, "subject_token_type": {AccessTokenType}, "audience": {mcpB},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := Claims(t, all.AccessToken); c["scope"] != "openid orders.read orders.write" || !slices.Equal(audience(c), []string{mcpB}) {
		t.Fatalf("exchanged token claims %v", c)
	}

	// An exchanged token can be exchanged again; act nests.
	twice, err := s.Exchange(ctx, "gateway", "s3cret", got.AccessToken, mcpA)
	if err != nil {
		t.Fatal(err)
	}
	act2, _ := Claims(t, twice.AccessToken)["act"].(map[string]any)
	if inner, _ := act2["act"].(map[string]any); act2["sub"] != "gateway" || inner["sub"] != "gateway" {
		t.Fatalf("act of a twice-exchanged token: %v", act2)
	}
}

func TestExchangeRefusals(t *testing.T) {
	t.Parallel()
	s := Start(t, config())
	ctx := context.Background()
	user := signInAlice(t, s, "orders.read")
	revoked := signInAlice(t, s, "orders.read")
	s.Revoke(t, "gateway", "s3cret", revoked.AccessToken)

	for _, tc := range []struct {
		name, client, secret, token, resource, want string
	}{
		{"resource not the client's", "gateway", "s3cret", user.AccessToken, "http://127.0.0.1:9/unknown", "invalid_target"},
		{"garbage subject token", "gateway", "s3cret", "not-a-token", mcpB, "invalid_grant"},
		{"forged subject token", "gateway", "s3cret", forge(t, user.AccessToken), mcpB, "invalid_grant"},
		{"revoked subject token", "gateway", "s3cret", revoked.AccessToken, mcpB, "invalid_grant"},
		{"client without the grant", "plain", "plain-secret", user.AccessToken, mcpA, "unauthorized_client"},
		{"wrong secret", "gateway", "wrong", user.AccessToken, mcpB, "invalid_client"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Exchange(ctx, tc.client, tc.secret, tc.token, tc.resource)
			wantOAuthError(t, err, tc.want)
		})
	}
	// The refusals left the subject token usable.
	if _, err := s.Exchange(ctx, "gateway", "s3cret", user.AccessToken, mcpB); err != nil {
		t.Fatal(err)
	}
}

// forge returns jwt with its subject changed to mallory, and so with a
// signature that does not match.
func forge(t *testing.T, jwt string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	claims := Claims(t, jwt)
	claims["sub"] = "mallory"
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0] + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + parts[2]
}

func TestExchangeExpiredToken(t *testing.T) {
	t.Parallel()
	cfg := config()
	cfg.AccessTokenLifetime = "1s"
	s := Start(t, cfg)
	tok := s.ClientCredentials(t, "gateway", "s3cret", mcpA, "orders.read")
	time.Sleep(2100 * time.Millisecond)
	_, err := s.Exchange(context.Background(), "gateway", "s3cret", tok.AccessToken, mcpB)
	wantOAuthError(t, err, "invalid_grant")
}

func TestClientCredentials(t *testing.T) {
	t.Parallel()
	s := Start(t, config())
	tok := s.ClientCredentials(t, "gateway", "s3cret", mcpA, "orders.read")
	c := Claims(t, tok.AccessToken)
	if c["sub"] != "gateway" || c["client_id"] != "gateway" || c["scope"] != "orders.read" || !slices.Equal(audience(c), []string{mcpA}) {
		t.Fatalf("claims %v", c)
	}
	if c := Claims(t, s.ClientCredentials(t, "plain", "plain-secret", "").AccessToken); !slices.Equal(audience(c), []string{"plain"}) {
		t.Fatalf("without a resource, the audience is the client: %v", c)
	}
	ctx := context.Background()
	_, err := s.TokenRequest(ctx, "plain", "plain-secret", url.Values{"grant_type": {GrantClientCredentials}, "resource": {mcpB}})
	wantOAuthError(t, err, "invalid_target")
	_, err = s.TokenRequest(ctx, "plain", "plain-secret", url.Values{"grant_type": {GrantClientCredentials}, "scope": {"orders.write"}})
	wantOAuthError(t, err, "invalid_scope")
	_, err = s.TokenRequest(ctx, "plain", "nope", url.Values{"grant_type": {GrantClientCredentials}})
	wantOAuthError(t, err, "invalid_client")
}
