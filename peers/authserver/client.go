package main

import (
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// client is a registered client, as op.Client (and op.HasRedirectGlobs,
// which carries the loopback port wildcard).
type client struct {
	ClientConfig
}

var _ op.HasRedirectGlobs = (*client)(nil)

// GetID implements op.Client.
func (c *client) GetID() string { return c.ID }

// RedirectURIs implements op.Client: the registered URIs, matched exactly.
func (c *client) RedirectURIs() []string { return c.ClientConfig.RedirectURIs }

// RedirectURIGlobs implements op.HasRedirectGlobs: for each registered
// loopback URI without a port, a pattern matching the same URI with any
// port (RFC 8252 §7.3), so a test can register http://127.0.0.1/cb before
// it knows the port of its callback listener.
func (c *client) RedirectURIGlobs() []string {
	var globs []string
	for _, raw := range c.ClientConfig.RedirectURIs {
		if g, ok := loopbackGlob(raw); ok {
			globs = append(globs, g)
		}
	}
	return globs
}

// PostLogoutRedirectURIs implements op.Client.
func (c *client) PostLogoutRedirectURIs() []string { return nil }

// PostLogoutRedirectURIGlobs implements op.HasRedirectGlobs.
func (c *client) PostLogoutRedirectURIGlobs() []string { return nil }

// ApplicationType implements op.Client: web for confidential clients,
// native for public ones (which zitadel lets use loopback redirects on any
// port).
func (c *client) ApplicationType() op.ApplicationType {
	if c.Public {
		return op.ApplicationTypeNative
	}
	return op.ApplicationTypeWeb
}

// AuthMethod implements op.Client. A confidential client may send its
// secret by HTTP basic auth or in the form (both are accepted for the
// basic method).
func (c *client) AuthMethod() oidc.AuthMethod {
	if c.Public {
		return oidc.AuthMethodNone
	}
	return oidc.AuthMethodBasic
}

// ResponseTypes implements op.Client: only the code flow.
func (c *client) ResponseTypes() []oidc.ResponseType {
	return []oidc.ResponseType{oidc.ResponseTypeCode}
}

// GrantTypes implements op.Client.
func (c *client) GrantTypes() []oidc.GrantType {
	gs := make([]oidc.GrantType, len(c.ClientConfig.GrantTypes))
	for i, g := range c.ClientConfig.GrantTypes {
		gs[i] = oidc.GrantType(g)
	}
	return gs
}

// hasGrant reports whether the client is registered with grant g.
func (c *client) hasGrant(g oidc.GrantType) bool {
	return slices.Contains(c.ClientConfig.GrantTypes, string(g))
}

// LoginURL implements op.Client: our login page, relative to the issuer.
func (c *client) LoginURL(id string) string {
	return loginPath + "?" + url.Values{"authRequestID": {id}}.Encode()
}

// AccessTokenType implements op.Client: access tokens are JWTs.
func (c *client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// IDTokenLifetime implements op.Client.
func (c *client) IDTokenLifetime() time.Duration { return time.Hour }

// DevMode implements op.Client.
func (c *client) DevMode() bool { return false }

// RestrictAdditionalIdTokenScopes implements op.Client.
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// RestrictAdditionalAccessTokenScopes implements op.Client.
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// IsScopeAllowed implements op.Client; zitadel drops the scopes of an
// authorization request that it answers false for.
func (c *client) IsScopeAllowed(scope string) bool { return slices.Contains(c.Scopes, scope) }

// IDTokenUserinfoClaimsAssertion implements op.Client.
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }

// ClockSkew implements op.Client.
func (c *client) ClockSkew() time.Duration { return 0 }

// allowsAudience reports whether the client may ask for tokens for aud.
func (c *client) allowsAudience(aud string) bool { return slices.Contains(c.Audiences, aud) }

// loopbackGlob returns, for an http URI on a loopback host without a
// port, a doublestar pattern matching the same URI with a port of one to
// five digits (and nothing else: no user info, no other host).
func loopbackGlob(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Port() != "" || u.User != nil {
		return "", false
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", false
	}
	rest := strings.TrimPrefix(raw, "http://"+u.Host)
	digits := make([]string, 5)
	for i := range digits {
		digits[i] = strings.Repeat("[0-9]", i+1)
	}
	return globEscape("http://"+u.Host+":") + "{" + strings.Join(digits, ",") + "}" + globEscape(rest), true
}

// globEscape escapes the doublestar metacharacters of s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\,`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
