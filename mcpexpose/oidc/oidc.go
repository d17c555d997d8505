// Package oidc verifies OAuth 2.1 access tokens (JWTs) for an MCP resource
// server, with github.com/coreos/go-oidc: the issuer's signing keys come
// from its OpenID Connect discovery document and JWKS, and are refreshed
// when a token names a key id the cached set does not have (key rotation).
//
// A token is accepted only when it is signed with an allowed asymmetric
// algorithm (RS256 or ES256 by default; "none" and HMAC are never accepted),
// was issued by the configured issuer, names the server's canonical resource
// URI in its audience (RFC 8707), and is within its validity period (exp,
// and nbf when present, with a small leeway). Its scopes come from "scope"
// (space separated) or "scp" (an array or a string).
//
// The issuer's keys are cached. A token whose key id the cache lacks (a
// rotation) waits for the key set to be fetched again and is then judged
// against it, so a key the issuer publishes before signing with it is
// accepted on its first token. Fetches are at most one per
// Options.KeyRefetchInterval, shared by every token waiting, so that a flood
// of tokens with unknown key ids costs the issuer one request per interval
// and each such request a wait of about one interval before its refusal. A
// token whose key id the cache has but whose signature fails is refused at
// once.
//
// [Verifier.Verify] is an auth.TokenVerifier for mcpexpose.HandlerOptions.
// It returns only credential-free facts (subject, client, issuer, resource,
// scopes, expiry); the token itself is never stored, forwarded or logged.
package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// defaultLeeway is the clock skew tolerated on exp and nbf when
// [Options.Leeway] is zero.
const defaultLeeway = 30 * time.Second

// Options configures a [Verifier]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// ClientIDClaims are the claims read, in order, for the OAuth client id.
	// Default: "client_id", then "azp".
	ClientIDClaims []string
	// Algorithms are the accepted signing algorithms. Default: RS256 and
	// ES256. Only asymmetric algorithms (RS*, PS*, ES*, EdDSA) may be
	// listed.
	Algorithms []string
	// Leeway is the clock skew tolerated on exp and nbf, at most 5
	// minutes. Zero means 30 seconds; a negative value means none.
	Leeway time.Duration
	// HTTPClient fetches the discovery document and the JWKS. Default:
	// http.DefaultClient. A JWKS fetch is cut after 30 seconds whatever
	// the client's own Timeout, since tokens wait for it.
	HTTPClient *http.Client
	// KeyRefetchInterval is the least time between the end of one fetch of
	// the issuer's key set (JWKS) and the start of the next, at most 5
	// minutes. The key set is fetched on the first token, and again for a
	// token whose kid the cached set lacks (or that has no kid and no cached
	// key verifies): such a token waits for the next fetch the interval
	// allows, and for no longer than its request's context, and is then
	// judged against the fetched set, which replaces the cache. Every token
	// waiting shares one fetch. A token whose kid the cache has is judged at
	// once, and a bad signature under it causes no fetch. Zero means 5
	// seconds; negative values are an error.
	KeyRefetchInterval time.Duration
	// Now returns the current time, for token validity (exp and nbf).
	// Default: time.Now. The key refetch interval is measured on the
	// monotonic clock, not with Now, so that a wait for a fetch ends
	// whatever Now returns.
	Now func() time.Time
}

// Verifier verifies access tokens for one resource. It is safe for
// concurrent use.
type Verifier struct {
	resource  string // the canonical resource URI, reported in ExtraResource
	keys      *keySet
	verifier  *gooidc.IDTokenVerifier
	clientIDs []string
	leeway    time.Duration
	now       func() time.Time
}

var asymmetric = []string{
	gooidc.RS256, gooidc.RS384, gooidc.RS512, gooidc.PS256, gooidc.PS384, gooidc.PS512,
	gooidc.ES256, gooidc.ES384, gooidc.ES512, gooidc.EdDSA,
}

// NewVerifier discovers issuer (fetching its OpenID Connect discovery
// document now, so that a misconfiguration fails at start-up) and returns a
// verifier of tokens for resource, the server's canonical resource URI (such
// as "https://api.example.com/mcp"), which every accepted token's audience
// must contain.
func NewVerifier(ctx context.Context, issuer, resource string, opts *Options) (*Verifier, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	u, err := url.Parse(resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("oidc: resource %q must be an absolute http(s) URI without query or fragment", resource)
	}
	if len(o.ClientIDClaims) == 0 {
		o.ClientIDClaims = []string{"client_id", "azp"}
	}
	if len(o.Algorithms) == 0 {
		o.Algorithms = []string{gooidc.RS256, gooidc.ES256}
	}
	for _, alg := range o.Algorithms {
		if !slices.Contains(asymmetric, alg) {
			return nil, fmt.Errorf("oidc: algorithm %q is not accepted: only asymmetric signatures are (never none or HMAC)", alg)
		}
	}
	switch {
	case o.Leeway == 0:
		o.Leeway = defaultLeeway
	case o.Leeway < 0:
		o.Leeway = 0
	case o.Leeway > 5*time.Minute:
		return nil, fmt.Errorf("oidc: leeway %s is more than 5m", o.Leeway)
	}
	switch {
	case o.KeyRefetchInterval == 0:
		o.KeyRefetchInterval = defaultKeyRefetchInterval
	case o.KeyRefetchInterval < 0:
		return nil, fmt.Errorf("oidc: negative key refetch interval %s", o.KeyRefetchInterval)
	case o.KeyRefetchInterval > 5*time.Minute:
		return nil, fmt.Errorf("oidc: key refetch interval %s is more than 5m", o.KeyRefetchInterval)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTPClient != nil {
		ctx = gooidc.ClientContext(ctx, o.HTTPClient)
	}
	provider, err := gooidc.NewProvider(ctx, issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc: discovering issuer %s: %w", issuer, err)
	}
	var meta struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err := provider.Claims(&meta); err != nil {
		return nil, fmt.Errorf("oidc: discovering issuer %s: %w", issuer, err)
	}
	if j, err := url.Parse(meta.JWKSURI); err != nil || (j.Scheme != "https" && j.Scheme != "http") || j.Host == "" {
		return nil, fmt.Errorf("oidc: discovering issuer %s: jwks_uri %q is not an absolute http(s) URL", issuer, meta.JWKSURI)
	}
	keys := newKeySet(ctx, meta.JWKSURI, o.HTTPClient, o.Algorithms, o.KeyRefetchInterval)
	v := &Verifier{
		resource:  resource,
		keys:      keys,
		clientIDs: o.ClientIDClaims,
		leeway:    o.Leeway,
		now:       o.Now,
		// NewProvider checked that the document names issuer.
		verifier: gooidc.NewVerifier(issuer, keys, &gooidc.Config{
			ClientID:             resource, // the audience must contain the resource
			SupportedSigningAlgs: o.Algorithms,
			SkipExpiryCheck:      true, // checked below, with our leeway
			Now:                  o.Now,
		}),
	}
	return v, nil
}

// claims are the access-token claims read besides the standard ones.
type claims struct {
	Scope     json.RawMessage `json:"scope"`
	Scp       json.RawMessage `json:"scp"`
	Exp       *json.Number    `json:"exp"`
	NotBefore *json.Number    `json:"nbf"`
}

// Verify implements auth.TokenVerifier. Every refusal unwraps to
// auth.ErrInvalidToken and says why without quoting the token.
func (v *Verifier) Verify(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	idt, err := v.verifier.Verify(ctx, token)
	if err != nil {
		return nil, invalid("%s", reason(err))
	}
	var c claims
	var all map[string]any
	if err := idt.Claims(&c); err != nil {
		return nil, invalid("malformed claims")
	}
	if err := idt.Claims(&all); err != nil {
		return nil, invalid("malformed claims")
	}
	now := v.now()
	exp, ok := unix(c.Exp)
	if !ok {
		return nil, invalid("no valid exp claim")
	}
	if now.After(exp.Add(v.leeway)) {
		return nil, invalid("token expired")
	}
	if c.NotBefore != nil {
		nbf, ok := unix(c.NotBefore)
		if !ok {
			return nil, invalid("invalid nbf claim")
		}
		if now.Add(v.leeway).Before(nbf) {
			return nil, invalid("token not valid yet")
		}
	}
	scopes, err := parseScopes(c.Scope, c.Scp)
	if err != nil {
		return nil, invalid("%v", err)
	}
	var clientID string
	for _, name := range v.clientIDs {
		if s, ok := all[name].(string); ok && s != "" {
			clientID = s
			break
		}
	}
	return &auth.TokenInfo{
		UserID:     idt.Subject,
		Scopes:     scopes,
		Expiration: exp,
		Extra: map[string]any{
			mcpexpose.ExtraClientID: clientID,
			mcpexpose.ExtraIssuer:   idt.Issuer,
			mcpexpose.ExtraResource: v.resource,
		},
	}, nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", auth.ErrInvalidToken, fmt.Sprintf(format, args...))
}

// reason turns a go-oidc error into a short cause that never quotes the
// token.
func reason(err error) string {
	msg := err.Error()
	for _, r := range []struct{ match, reason string }{
		{unknownKeyID, "unknown key id"},
		{badSignature, "bad signature"},
		{noKeyVerifies, "bad signature"},
		{keysUnavailable, "signing keys unavailable"},
		{waitEnded, "request ended while waiting for the signing keys"},
		{"issued by a different provider", "wrong issuer"},
		{"expected audience", "wrong audience"},
		{"signature algorithm", "signing algorithm not accepted"},
		{"failed to verify signature", "bad signature"},
		{"not signed", "token not signed"},
		{"malformed", "malformed token"},
	} {
		if strings.Contains(msg, r.match) {
			return r.reason
		}
	}
	return "token rejected"
}

func unix(n *json.Number) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || f <= 0 {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

// parseScopes reads "scope" (a space-separated string) or, without it,
// "scp" (an array of strings, or a string).
func parseScopes(scope, scp json.RawMessage) ([]string, error) {
	if len(scope) > 0 && string(scope) != "null" {
		var s string
		if err := json.Unmarshal(scope, &s); err != nil {
			return nil, errors.New("scope claim is not a string")
		}
		return strings.Fields(s), nil
	}
	if len(scp) > 0 && string(scp) != "null" {
		var arr []string
		if err := json.Unmarshal(scp, &arr); err == nil {
			return arr, nil
		}
		var s string
		if err := json.Unmarshal(scp, &s); err != nil {
			return nil, errors.New("scp claim is neither a string array nor a string")
		}
		return strings.Fields(s), nil
	}
	return nil, nil
}
