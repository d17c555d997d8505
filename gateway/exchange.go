package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// RFC 8693's names.
const (
	grantTokenExchange  = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccess     = "urn:ietf:params:oauth:token-type:access_token"
	exchangeTimeout     = 30 * time.Second
	exchangeBodyLimit   = 1 << 20
	maxExpiryMargin     = time.Minute
	defaultExchangedTTL = time.Minute // an answer without expires_in
)

// credentialError ends a request made for a caller that has no credential
// of its own for the upstream: its FailureReason is one of mcpimport's
// credential reasons, so the call fails with it and nothing is sent. Its
// message is the gateway's, for the operator's logs; it never quotes a
// token.
type credentialError struct {
	reason execution.Reason
	msg    string
}

func (e *credentialError) Error() string                   { return e.msg }
func (e *credentialError) FailureReason() execution.Reason { return e.reason }
func refused(format string, args ...any) *credentialError {
	return credErr(mcpimport.ReasonCredentialRefused, format, args...)
}
func unavailableCred(format string, args ...any) *credentialError {
	return credErr(mcpimport.ReasonCredentialUnavailable, format, args...)
}
func credErr(r execution.Reason, format string, args ...any) *credentialError {
	return &credentialError{reason: r, msg: fmt.Sprintf(format, args...)}
}

// subjectTokens holds each token the gateway verified, under its id (a
// digest, mcpexpose.ExtraTokenID), until it expires: what a token exchange
// presents as the subject of the call whose request presented it. The
// verifier names the id on the token's facts, the gateway's identity
// mapper puts it on the principal (callerPrincipal), and the exchange
// finds the very token of the call's own request: not another token of
// the same person (another client, other scopes, one revoked meanwhile).
// The tokens live in memory only; they are never logged or sent anywhere
// but to the authorization server that issued them.
type subjectTokens struct {
	mu  sync.Mutex
	m   map[string]subjectToken
	max int
	now func() time.Time
}

type subjectToken struct {
	token  string
	expiry time.Time
}

// maxSubjects bounds the tokens held at once; past it, expired ones are
// dropped, then any one.
const maxSubjects = 1 << 16

func newSubjectTokens() *subjectTokens {
	return &subjectTokens{m: map[string]subjectToken{}, max: maxSubjects, now: time.Now}
}

// tokenID is the id a token is kept under: the first 128 bits of its
// SHA-256, in hex.
func tokenID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:16])
}

// keep returns v, which also keeps each token it accepts, and names its id
// on the facts it returns (mcpexpose.ExtraTokenID).
func (s *subjectTokens) keep(v auth.TokenVerifier) auth.TokenVerifier {
	return func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
		ti, err := v(ctx, token, r)
		if err != nil || ti == nil {
			return ti, err
		}
		id := tokenID(token)
		cp := *ti
		cp.Extra = maps.Clone(ti.Extra)
		if cp.Extra == nil {
			cp.Extra = map[string]any{}
		}
		cp.Extra[mcpexpose.ExtraTokenID] = id
		s.put(id, token, ti.Expiration)
		return &cp, nil
	}
}

func (s *subjectTokens) put(key, token string, expiry time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[key]; !ok && len(s.m) >= s.max {
		now := s.now()
		for k, t := range s.m {
			if !t.expiry.After(now) {
				delete(s.m, k)
			}
		}
		for k := range s.m {
			if len(s.m) < s.max {
				break
			}
			delete(s.m, k)
		}
	}
	s.m[key] = subjectToken{token, expiry}
}

// get returns the caller's token, unless it has expired.
func (s *subjectTokens) get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[key]
	if !ok || !t.expiry.After(s.now()) {
		return "", false
	}
	return t.token, true
}

// exchanger gets, for each caller, a token for one upstream by exchanging
// the caller's own (RFC 8693), and keeps it until shortly before it
// expires. Callers waiting for the same exchange share it.
type exchanger struct {
	upstream string
	cfg      *TokenExchange
	secret   string
	resource string
	client   *http.Client // to the authorization server
	subjects *subjectTokens
	logger   *slog.Logger
	now      func() time.Time

	mu    sync.Mutex
	cache map[string]*exchanged // by caller key and subject token digest
}

// exchanged is one exchange: done is closed once token (good until
// expiry) or err is set.
type exchanged struct {
	done   chan struct{}
	token  string
	expiry time.Time
	err    error
}

// maxExchanged bounds the exchanged tokens kept; past it, expired ones are
// dropped, then any one.
const maxExchanged = 1 << 16

func newExchanger(upstream string, h *HTTPUpstream, secret string, client *http.Client, subjects *subjectTokens, logger *slog.Logger) *exchanger {
	resource := h.TokenExchange.Resource
	if resource == "" {
		resource = h.URL
	}
	return &exchanger{
		upstream: upstream, cfg: h.TokenExchange, secret: secret, resource: resource,
		client: client, subjects: subjects, logger: logger, now: time.Now,
		cache: map[string]*exchanged{},
	}
}

// Authorize implements mcpimport.Authorizer: the caller's exchanged token,
// got now unless it is kept.
func (x *exchanger) Authorize(ctx context.Context, caller policy.Principal) error {
	_, err := x.token(ctx, caller)
	return err
}

// token returns the caller's token for the upstream.
func (x *exchanger) token(ctx context.Context, caller policy.Principal) (string, error) {
	if caller.IsAnonymous() {
		return "", refused("the upstream %s takes each caller's own token, and the caller is anonymous", x.upstream)
	}
	id, _ := caller.Attribute(tokenAttribute)
	subject, ok := x.subjects.get(id)
	if id == "" || !ok {
		return "", refused("the upstream %s takes each caller's own token, and the gateway holds no unexpired token of this call's request", x.upstream)
	}
	key := caller.Key() + "\x00" + id
	x.mu.Lock()
	e := x.cache[key]
	if e != nil {
		select {
		case <-e.done:
			if e.err == nil && x.now().Before(e.expiry) {
				x.mu.Unlock()
				return e.token, nil
			}
			e = nil // expired: exchange again
		default:
		}
	}
	if e != nil {
		x.mu.Unlock()
		select {
		case <-e.done:
			return e.token, e.err
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	e = &exchanged{done: make(chan struct{})}
	x.sweepLocked()
	x.cache[key] = e
	x.mu.Unlock()

	// The exchange outlives a caller who gives up: others may wait for it.
	xctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exchangeTimeout)
	e.token, e.expiry, e.err = x.exchange(xctx, subject)
	cancel()
	close(e.done)
	if e.err != nil {
		x.mu.Lock()
		if x.cache[key] == e {
			delete(x.cache, key) // the next call asks again
		}
		x.mu.Unlock()
	}
	return e.token, e.err
}

func (x *exchanger) sweepLocked() {
	if len(x.cache) < maxExchanged {
		return
	}
	now := x.now()
	for k, e := range x.cache {
		select {
		case <-e.done:
			if e.err != nil || !now.Before(e.expiry) {
				delete(x.cache, k)
			}
		default:
		}
	}
	for k := range x.cache {
		if len(x.cache) < maxExchanged {
			return
		}
		delete(x.cache, k)
	}
}

// tokenAnswer is a token endpoint's answer, success or error (RFC 6749
// §5.1, §5.2; RFC 8693 §2.2).
type tokenAnswer struct {
	AccessToken     string          `json:"access_token"`
	TokenType       string          `json:"token_type"`
	IssuedTokenType string          `json:"issued_token_type"`
	ExpiresIn       json.RawMessage `json:"expires_in"`
	Error           string          `json:"error"`
}

// exchange asks the authorization server for a token for the upstream
// with subject as the subject token. It returns the token and when to stop
// using it.
func (x *exchanger) exchange(ctx context.Context, subject string) (string, time.Time, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {tokenTypeAccess},
		"requested_token_type": {tokenTypeAccess},
		"resource":             {x.resource},
	}
	if len(x.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(x.cfg.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", time.Time{}, unavailableCred("token exchange for %s: %v", x.upstream, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	// RFC 6749 §2.3.1: the id and secret form-encoded, then Basic.
	req.SetBasicAuth(url.QueryEscape(x.cfg.ClientID), url.QueryEscape(x.secret))
	start := x.now()
	// A token endpoint answers; it does not redirect. A redirect followed
	// would carry the caller's token (and, for 307 and 308, the gateway's
	// credentials) to wherever it points, and take a token from there.
	c := *x.client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		x.logger.LogAttrs(ctx, slog.LevelWarn, "token exchange failed: the authorization server could not be reached",
			slog.String("upstream", x.upstream), slog.String("token_url", x.cfg.TokenURL))
		return "", time.Time{}, unavailableCred("token exchange for %s: the authorization server could not be reached", x.upstream)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, exchangeBodyLimit+1))
	var a tokenAnswer
	mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	if err != nil || len(body) > exchangeBodyLimit || mt != "application/json" || json.Unmarshal(body, &a) != nil {
		x.logger.LogAttrs(ctx, slog.LevelWarn, "token exchange failed: the authorization server's answer cannot be read",
			slog.String("upstream", x.upstream), slog.Int("status", res.StatusCode))
		return "", time.Time{}, unavailableCred("token exchange for %s: the authorization server's answer (status %d) cannot be read", x.upstream, res.StatusCode)
	}
	code := printableCode(a.Error)
	switch {
	case res.StatusCode == http.StatusOK && a.Error == "":
	case code == "invalid_client" || res.StatusCode >= 500 || res.StatusCode/100 == 3:
		// The gateway's own fault, or the server's (a 3xx is a redirect,
		// not followed): not the caller's.
		x.logger.LogAttrs(ctx, slog.LevelError, "token exchange failed: check token_exchange's client_id and secret, and that the authorization server is up",
			slog.String("upstream", x.upstream), slog.Int("status", res.StatusCode), slog.String("error", code))
		return "", time.Time{}, unavailableCred("token exchange for %s: the authorization server answered %d %s", x.upstream, res.StatusCode, code)
	default:
		x.logger.LogAttrs(ctx, slog.LevelWarn, "token exchange refused",
			slog.String("upstream", x.upstream), slog.Int("status", res.StatusCode), slog.String("error", code))
		return "", time.Time{}, refused("token exchange for %s: the authorization server refused it: %d %s", x.upstream, res.StatusCode, code)
	}
	// The token goes into an Authorization header: one with a space, a
	// control or a non-ASCII character (RFC 6750's b64token has none)
	// would break or split the header, and would be kept as the caller's.
	if !headerToken(a.AccessToken) || !strings.EqualFold(a.TokenType, "Bearer") || a.IssuedTokenType != "" && a.IssuedTokenType != tokenTypeAccess {
		x.logger.LogAttrs(ctx, slog.LevelWarn, "token exchange failed: the answer is not a bearer access token",
			slog.String("upstream", x.upstream), slog.String("token_type", printableCode(a.TokenType)))
		return "", time.Time{}, unavailableCred("token exchange for %s: the answer is not a bearer access token", x.upstream)
	}
	ttl := defaultExchangedTTL
	if len(a.ExpiresIn) > 0 {
		var n json.Number
		if err := json.Unmarshal(a.ExpiresIn, &n); err == nil {
			if s, err := n.Int64(); err == nil && s > 0 && s < 1<<31 {
				ttl = time.Duration(s) * time.Second
			}
		}
	}
	// Stop using it a little before it expires: a quarter of its life, at
	// most a minute.
	return a.AccessToken, start.Add(ttl - min(maxExpiryMargin, ttl/4)), nil
}

// headerToken reports whether tok can follow "Bearer " in a header: not
// empty, and visible ASCII only.
func headerToken(tok string) bool {
	for i := 0; i < len(tok); i++ {
		if tok[i] <= 0x20 || tok[i] > 0x7e {
			return false
		}
	}
	return tok != ""
}

// printableCode returns an OAuth error code (or token type) as it may be
// logged: its first 64 bytes of printable ASCII.
func printableCode(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}

// callerCredentials is an HTTP upstream's transport in a per-caller mode:
// a request made for a caller (the context carries its principal:
// policy.PrincipalFrom) carries the caller's own token (exchanged, or
// from the caller's grant) and goes by
// caller; one made for no caller goes by gateway, the gateway's own
// identity. A caller's request never falls back to the gateway's identity.
type callerCredentials struct {
	x       credentialSource
	caller  http.RoundTripper
	gateway http.RoundTripper
}

func (c *callerCredentials) RoundTrip(r *http.Request) (*http.Response, error) {
	p, ok := policy.PrincipalFrom(r.Context())
	if !ok {
		return c.gateway.RoundTrip(r)
	}
	tok, err := c.x.token(r.Context(), p)
	if err != nil {
		if r.Body != nil {
			r.Body.Close() // a RoundTripper closes the body, even on error
		}
		return nil, err
	}
	r2 := r.Clone(r.Context()) // a RoundTripper must not change the request
	r2.Header.Set("Authorization", "Bearer "+tok)
	return c.caller.RoundTrip(r2)
}

// credentialAudit is the gateway's audit sink: the sink the host gave,
// told whose credential each imported tool's call reached its upstream
// with.
type credentialAudit struct {
	sink  mcpexpose.AuditSink
	modes map[string]string // credentials by tool wire name
}

func (a credentialAudit) Record(ctx context.Context, r mcpexpose.AuditRecord) {
	if m, ok := a.modes[r.Tool]; ok {
		r.Credential = m
	}
	a.sink.Record(ctx, r)
}

// credentialModes returns each bound tool's upstream credentials, by the
// tool's wire name: "gateway" for stdio upstreams, which run with the
// gateway's own environment.
func (g *Gateway) credentialModes() map[string]string {
	m := map[string]string{}
	for _, u := range g.cfg.Upstreams {
		mode := CredentialsGateway
		if u.HTTP != nil && u.HTTP.Credentials != "" {
			mode = u.HTTP.Credentials
		}
		for _, t := range u.Tools {
			m[g.cfg.Name+"."+t.Name] = mode
		}
	}
	return m
}
