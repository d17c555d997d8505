package astest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Token is a token endpoint's successful answer.
type Token struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int    `json:"expires_in"`
	RefreshToken    string `json:"refresh_token,omitempty"`
	Scope           string `json:"scope,omitempty"`
	IDToken         string `json:"id_token,omitempty"`
	IssuedTokenType string `json:"issued_token_type,omitempty"`
}

// Error is an OAuth error answer (RFC 6749 §5.2), from the token endpoint
// or in a redirect from the authorization endpoint.
type Error struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
	Status      int    `json:"-"` // the HTTP status; 0 for a redirect
}

// Error implements error.
func (e *Error) Error() string {
	if e.Description == "" {
		return "oauth: " + e.Code
	}
	return "oauth: " + e.Code + ": " + e.Description
}

// SignInRequest describes an authorization-code flow.
type SignInRequest struct {
	ClientID     string
	ClientSecret string // empty for a public client
	Username     string
	Password     string
	Scopes       []string // "openid" when empty
	Resource     string   // RFC 8707, sent to both endpoints when set
	// RedirectURI is the client's callback; it is never called. The
	// client's first registered one when empty.
	RedirectURI string
}

// SignIn runs the authorization-code flow with PKCE (S256) as a browser
// and a client would, failing the test on any error: see TrySignIn.
func (s *Server) SignIn(t testing.TB, req SignInRequest) Token {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tok, err := s.TrySignIn(ctx, req)
	if err != nil {
		t.Fatalf("astest: sign-in of %q with %q: %v", req.Username, req.ClientID, err)
	}
	return tok
}

// TrySignIn runs the authorization-code flow with PKCE (S256): it opens
// the authorization endpoint, fills in and posts the login form, follows
// the redirects up to (not into) the redirect URI, checks the state, and
// redeems the code at the token endpoint. An OAuth error, from the
// redirect or the token endpoint, is an *Error; a refused password is an
// error saying so.
func (s *Server) TrySignIn(ctx context.Context, req SignInRequest) (Token, error) {
	redirect := req.RedirectURI
	if redirect == "" {
		redirect = s.firstRedirect(req.ClientID)
	}
	target, err := url.Parse(redirect)
	if err != nil || redirect == "" {
		return Token{}, fmt.Errorf("no usable redirect URI %q", redirect)
	}
	verifier := randomString()
	challenge := sha256.Sum256([]byte(verifier))
	state := randomString()
	scopes := req.Scopes
	if len(scopes) == 0 {
		scopes = []string{"openid"}
	}
	q := url.Values{
		"response_type":         {"code"},
		"client_id":             {req.ClientID},
		"redirect_uri":          {redirect},
		"scope":                 {strings.Join(scopes, " ")},
		"state":                 {state},
		"code_challenge":        {base64.RawURLEncoding.EncodeToString(challenge[:])},
		"code_challenge_method": {"S256"},
	}
	if req.Resource != "" {
		q.Set("resource", req.Resource)
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{
		Jar:     jar,
		Timeout: 30 * time.Second,
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if sameEndpoint(r.URL, target) {
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}
	page, final, err := browse(ctx, browser, http.MethodGet, s.meta.AuthorizationEndpoint+"?"+q.Encode(), nil)
	if err != nil {
		return Token{}, err
	}
	if final == nil { // not redirected to the client: the login page
		form, err := parseLoginForm(page.body, page.url)
		if err != nil {
			return Token{}, fmt.Errorf("authorization endpoint: %v (%d: %.200s)", err, page.status, page.body)
		}
		form.values.Set("username", req.Username)
		form.values.Set("password", req.Password)
		page, final, err = browse(ctx, browser, http.MethodPost, form.action, form.values)
		if err != nil {
			return Token{}, err
		}
		if final == nil {
			return Token{}, fmt.Errorf("sign-in refused: the login page answered %d", page.status)
		}
	}

	back := final.Query()
	if code := back.Get("error"); code != "" {
		return Token{}, &Error{Code: code, Description: back.Get("error_description")}
	}
	if back.Get("state") != state {
		return Token{}, errors.New("the redirect's state is not the request's")
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {back.Get("code")},
		"redirect_uri":  {redirect},
		"code_verifier": {verifier},
	}
	if req.Resource != "" {
		form.Set("resource", req.Resource)
	}
	return s.TokenRequest(ctx, req.ClientID, req.ClientSecret, form)
}

// firstRedirect returns the first redirect URI registered for clientID.
func (s *Server) firstRedirect(clientID string) string {
	for _, c := range s.cfg.Clients {
		if c.ID == clientID && len(c.RedirectURIs) > 0 {
			return c.RedirectURIs[0]
		}
	}
	return ""
}

// sameEndpoint reports whether u is the redirect URI target (any query).
func sameEndpoint(u, target *url.URL) bool {
	if target.Port() == "" && u.Hostname() == target.Hostname() {
		// A loopback redirect URI registered without a port matches any.
		return u.Scheme == target.Scheme && u.Path == target.Path
	}
	return u.Scheme == target.Scheme && u.Host == target.Host && u.Path == target.Path
}

// page is an answer the browser stopped at.
type page struct {
	status int
	url    *url.URL
	body   string
}

// browse makes a browser request, following redirects; it returns the
// final page, or the redirect URI reached (the location of the last
// redirect) with a nil page.
func browse(ctx context.Context, c *http.Client, method, target string, form url.Values) (*page, *url.URL, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		loc, err := resp.Location()
		if err != nil {
			return nil, nil, err
		}
		return nil, loc, nil
	}
	return &page{status: resp.StatusCode, url: resp.Request.URL, body: string(data)}, nil, nil
}

// loginForm is the login page's form.
type loginForm struct {
	action string
	values url.Values
}

var (
	formTag  = regexp.MustCompile(`(?is)<form\b[^>]*>`)
	inputTag = regexp.MustCompile(`(?is)<input\b[^>]*>`)
	attr     = regexp.MustCompile(`(?is)\b([a-z-]+)\s*=\s*"([^"]*)"`)
)

// parseLoginForm finds the form of the login page and its hidden inputs.
func parseLoginForm(body string, base *url.URL) (*loginForm, error) {
	tag := formTag.FindString(body)
	if tag == "" {
		return nil, errors.New("no login form")
	}
	action, err := base.Parse(attrs(tag)["action"])
	if err != nil {
		return nil, err
	}
	f := &loginForm{action: action.String(), values: url.Values{}}
	for _, in := range inputTag.FindAllString(body, -1) {
		a := attrs(in)
		if a["type"] == "hidden" && a["name"] != "" {
			f.values.Set(a["name"], a["value"])
		}
	}
	return f, nil
}

// attrs returns the double-quoted attributes of an HTML tag.
func attrs(tag string) map[string]string {
	m := map[string]string{}
	for _, a := range attr.FindAllStringSubmatch(tag, -1) {
		m[strings.ToLower(a[1])] = html.UnescapeString(a[2])
	}
	return m
}

// ClientCredentials runs the client_credentials grant for resource (none
// when empty) and scopes, failing the test on an error.
func (s *Server) ClientCredentials(t testing.TB, clientID, secret, resource string, scopes ...string) Token {
	t.Helper()
	form := url.Values{"grant_type": {GrantClientCredentials}}
	if resource != "" {
		form.Set("resource", resource)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	tok, err := s.TokenRequest(context.Background(), clientID, secret, form)
	if err != nil {
		t.Fatalf("astest: client_credentials for %q: %v", clientID, err)
	}
	return tok
}

// Refresh runs the refresh_token grant, failing the test on an error.
func (s *Server) Refresh(t testing.TB, clientID, secret, refreshToken string) Token {
	t.Helper()
	form := url.Values{"grant_type": {GrantRefreshToken}, "refresh_token": {refreshToken}}
	tok, err := s.TokenRequest(context.Background(), clientID, secret, form)
	if err != nil {
		t.Fatalf("astest: refresh for %q: %v", clientID, err)
	}
	return tok
}

// Exchange makes a raw RFC 8693 token exchange of subjectToken (an access
// token) for resource (none when empty) and scopes, as clientID with
// client_secret_basic. An OAuth error is an *Error.
func (s *Server) Exchange(ctx context.Context, clientID, secret, subjectToken, resource string, scopes ...string) (Token, error) {
	form := url.Values{
		"grant_type":         {GrantTokenExchange},
		"subject_token":      {subjectToken},
		"subject_token_type": {AccessTokenType},
	}
	if resource != "" {
		form.Set("resource", resource)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	return s.TokenRequest(ctx, clientID, secret, form)
}

// TokenRequest posts form to the token endpoint. A non-empty clientID
// authenticates with client_secret_basic, or as a public client (client_id
// in the form) when secret is empty; with an empty clientID the form
// carries whatever authentication it has (client_secret_post). An OAuth
// error is an *Error.
func (s *Server) TokenRequest(ctx context.Context, clientID, secret string, form url.Values) (Token, error) {
	var tok Token
	err := s.post(ctx, s.meta.TokenEndpoint, clientID, secret, form, &tok)
	return tok, err
}

// Revoke revokes token (an access or refresh token, RFC 7009) as
// clientID, failing the test on an error.
func (s *Server) Revoke(t testing.TB, clientID, secret, token string) {
	t.Helper()
	if err := s.post(context.Background(), s.meta.RevocationEndpoint, clientID, secret, url.Values{"token": {token}}, nil); err != nil {
		t.Fatalf("astest: revoking a token as %q: %v", clientID, err)
	}
}

// post posts form to endpoint and decodes a 200 answer into v (if not
// nil), or returns the *Error of any other.
func (s *Server) post(ctx context.Context, endpoint, clientID, secret string, form url.Values, v any) error {
	form = cloneValues(form)
	if clientID != "" && secret == "" {
		form.Set("client_id", clientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if clientID != "" && secret != "" {
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret))
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(body, e) != nil || e.Code == "" {
			return fmt.Errorf("%s: %s: %.200s", endpoint, resp.Status, body)
		}
		return e
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(body, v)
}

// cloneValues copies form, so that adding to it leaves the caller's alone.
func cloneValues(form url.Values) url.Values {
	c := make(url.Values, len(form))
	for k, v := range form {
		c[k] = append([]string(nil), v...)
	}
	return c
}

// Claims decodes, without verifying it, the payload of a JWT, for
// assertions; the test fails when jwt is not one.
func Claims(t testing.TB, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("astest: not a JWT (%d parts)", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("astest: JWT payload: %v", err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatalf("astest: JWT payload: %v", err)
	}
	return claims
}

// randomString returns 32 random bytes, base64url: a PKCE verifier or a
// state.
func randomString() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
