package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"golang.org/x/oauth2"
)

// connectionStore is what the consent mode keeps in the approval store:
// each person's sealed grant per upstream and client.
type connectionStore interface {
	SaveConnection(ctx context.Context, c approval.Connection) error
	LoadConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (approval.Connection, error)
	ListConnections(ctx context.Context, p policy.Principal) ([]approval.Connection, error)
	DeleteConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (bool, error)
}

// The principal attributes the gateway's identity mapper sets
// (callerPrincipal): the OAuth client of the caller's token (consent is
// given per client), and the id of the token itself (a token exchange
// presents that very token).
const (
	clientAttribute = "client_id"
	tokenAttribute  = "token_id"
)

// callerPrincipal returns the gateway's identity mapper:
// mcpexpose.SubjectPrincipal, with the token's client as the attribute
// client_id, and with tokens its id as token_id.
func callerPrincipal(tokens bool) mcpexpose.IdentityMapper {
	return func(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
		p, err := mcpexpose.SubjectPrincipal(ctx, id)
		if err != nil {
			return p, err
		}
		attrs := map[string]string{}
		if id.ClientID != "" {
			attrs[clientAttribute] = id.ClientID
		}
		if tokens && id.TokenID != "" {
			attrs[tokenAttribute] = id.TokenID
		}
		if len(attrs) == 0 {
			return p, nil
		}
		return p.WithAttributes(attrs), nil
	}
}

// grant is what a sealed connection holds: the upstream authorization
// server's tokens for one person, as issued.
type grant struct {
	Access  string `json:"a"`
	Refresh string `json:"r,omitempty"`
	Expiry  int64  `json:"e,omitempty"` // unix seconds; 0: unknown
}

// errNoGrant is a caller without a usable grant for the upstream.
var errNoGrant = errors.New("no grant")

// consentClient is the gateway's client at one upstream's authorization
// server (credentials "consent"): it finds each caller's grant in the
// approval store, refreshes it when it expires, and asks the caller to
// connect when there is none.
type consentClient struct {
	conn     *connector
	upstream string
	url      string // the upstream's MCP URL
	cfg      *Consent
	secret   string
	resource string
	http     *http.Client // to the authorization server
	logger   *slog.Logger

	mu     sync.Mutex
	oauth  *oauth2.Config // once discovered
	issuer string
}

func newConsentClient(conn *connector, upstream string, h *HTTPUpstream, secret string, client *http.Client, logger *slog.Logger) *consentClient {
	resource := h.Consent.Resource
	if resource == "" {
		resource = h.URL
	}
	return &consentClient{conn: conn, upstream: upstream, url: h.URL, cfg: h.Consent, secret: secret, resource: resource, http: client, logger: logger}
}

// config returns the OAuth client, discovering the authorization server's
// endpoints the first time (again after a failure).
func (cc *consentClient) config(ctx context.Context) (*oauth2.Config, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.oauth != nil {
		return cc.oauth, nil
	}
	issuer := cc.cfg.AuthorizationServer
	if issuer == "" {
		var err error
		if issuer, err = protectedResourceIssuer(ctx, cc.http, cc.url); err != nil {
			return nil, err
		}
	}
	meta, err := authorizationServer(ctx, cc.http, issuer)
	if err != nil {
		return nil, err
	}
	cc.issuer = issuer
	cc.oauth = &oauth2.Config{
		ClientID: cc.cfg.ClientID, ClientSecret: cc.secret, Scopes: cc.cfg.Scopes,
		RedirectURL: cc.conn.base + callbackPath,
		Endpoint:    oauth2.Endpoint{AuthURL: meta.AuthorizationEndpoint, TokenURL: meta.TokenEndpoint},
	}
	if cc.secret == "" {
		cc.oauth.Endpoint.AuthStyle = oauth2.AuthStyleInParams // a public client names itself
	}
	return cc.oauth, nil
}

// grantAD binds a sealed grant to whose it is.
func grantAD(p policy.Principal, upstream, client string) string {
	return "grant\x00" + p.Key() + "\x00" + upstream + "\x00" + client
}

// token returns the caller's access token at the upstream: errNoGrant when
// the caller has none (or it can no longer be refreshed).
func (cc *consentClient) token(ctx context.Context, p policy.Principal) (string, error) {
	if p.IsAnonymous() {
		return "", refused("the upstream %s acts with each person's own grant, and the caller is anonymous", cc.upstream)
	}
	client, _ := p.Attribute(clientAttribute)
	c, err := cc.conn.store.LoadConnection(ctx, p, cc.upstream, client)
	if errors.Is(err, approval.ErrNotFound) {
		return "", errNoGrant
	}
	if err != nil {
		return "", unavailableCred("the grants of %s cannot be read: %v", cc.upstream, err)
	}
	ad := grantAD(p, cc.upstream, client)
	plain, ok := cc.conn.seal.open(ad, c.Sealed)
	var g grant
	if !ok || json.Unmarshal(plain, &g) != nil || g.Access == "" {
		// Sealed with another key, or for someone else: never used.
		cc.logger.LogAttrs(ctx, slog.LevelWarn, "a stored grant does not open with the connections key: it is ignored",
			slog.String("upstream", cc.upstream), slog.String("principal", p.ID()))
		return "", errNoGrant
	}
	if g.Expiry == 0 || time.Now().Add(30*time.Second).Before(time.Unix(g.Expiry, 0)) {
		return g.Access, nil
	}
	if g.Refresh == "" {
		return "", errNoGrant
	}
	cfg, err := cc.config(ctx)
	if err != nil {
		return "", unavailableCred("the authorization server of %s: %v", cc.upstream, err)
	}
	rctx := context.WithValue(ctx, oauth2.HTTPClient, cc.http)
	tok, err := cfg.TokenSource(rctx, &oauth2.Token{RefreshToken: g.Refresh, Expiry: time.Unix(1, 0)}).Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode != "" && re.ErrorCode != "invalid_client" && re.Response != nil && re.Response.StatusCode < 500:
		// The grant is gone at the authorization server (revoked,
		// expired): forget it, and ask again.
		cc.logger.LogAttrs(ctx, slog.LevelInfo, "a grant could not be refreshed: the person is asked to connect again",
			slog.String("upstream", cc.upstream), slog.String("principal", p.ID()), slog.String("error", printableCode(re.ErrorCode)))
		if _, err := cc.conn.store.DeleteConnection(context.WithoutCancel(ctx), p, cc.upstream, client); err != nil {
			return "", unavailableCred("the grants of %s cannot be written: %v", cc.upstream, err)
		}
		return "", errNoGrant
	case err != nil:
		cc.logger.LogAttrs(ctx, slog.LevelWarn, "a grant could not be refreshed", slog.String("upstream", cc.upstream))
		return "", unavailableCred("refreshing the grant for %s failed", cc.upstream)
	}
	if err := cc.save(context.WithoutCancel(ctx), p, client, tok, g.Refresh); err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// save seals tok as p's grant for the upstream through client (keeping
// refresh when the server issued no new refresh token).
func (cc *consentClient) save(ctx context.Context, p policy.Principal, client string, tok *oauth2.Token, refresh string) error {
	g := grant{Access: tok.AccessToken, Refresh: tok.RefreshToken}
	if g.Refresh == "" {
		g.Refresh = refresh
	}
	if !tok.Expiry.IsZero() {
		g.Expiry = tok.Expiry.Unix()
	}
	plain, _ := json.Marshal(g)
	scopes := cc.cfg.Scopes
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		scopes = strings.Fields(s)
	}
	err := cc.conn.store.SaveConnection(ctx, approval.Connection{
		Principal: policy.NewPrincipal(p.ID(), nil).WithIssuer(p.Issuer()), Upstream: cc.upstream, ClientID: client,
		Scopes: scopes, Sealed: cc.conn.seal.seal(grantAD(p, cc.upstream, client), plain),
	})
	if err != nil {
		return unavailableCred("the grants of %s cannot be written: %v", cc.upstream, err)
	}
	return nil
}

// connectKey is the key of the question that asks a caller to connect an
// upstream.
func connectKey(upstream string) string { return "agnara.connect." + upstream }

// Authorize implements mcpimport.Authorizer: the caller's grant, or, for a
// call, a question that sends the caller's user to connect the upstream
// (a URL elicitation), then a wait, within the call's time, for the grant
// to arrive.
func (cc *consentClient) Authorize(ctx context.Context, p policy.Principal) error {
	_, err := cc.token(ctx, p)
	if !errors.Is(err, errNoGrant) {
		return err
	}
	ec, ok := execution.FromContext(ctx)
	if !ok {
		return refused("the upstream %s acts with each person's own grant, and %s has not connected it: call one of its tools to connect", cc.upstream, p.ID())
	}
	client, _ := p.Attribute(clientAttribute)
	key := connectKey(cc.upstream)
	msg := fmt.Sprintf("Sign in to %s so that the gateway can act for you there (for this client only).", cc.upstream)
	if err := ec.AskURL(key, msg, cc.conn.startURL(cc.upstream, client)); err != nil {
		return err
	}
	// Accepted: the person is signing in. The grant appears in the store
	// once they are through, on whichever gateway instance served them.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
		_, err := cc.token(ctx, p)
		if errors.Is(err, errNoGrant) {
			continue
		}
		if err == nil {
			_ = ec.URLDone(key) // the caller learns it is done, where the revision can say so
		}
		return err
	}
}

// credentialSource is what a per-caller transport gets a caller's token
// from: an exchanger, or a consent client.
type credentialSource interface {
	token(ctx context.Context, p policy.Principal) (string, error)
	mcpimport.Authorizer
}

var (
	_ credentialSource = (*exchanger)(nil)
	_ credentialSource = (*consentClient)(nil)
)

// serverMetadata is what the gateway reads of an authorization server's
// metadata (RFC 8414, or OpenID Connect discovery).
type serverMetadata struct {
	Issuer                string `json:"issuer"`
	AuthorizationEndpoint string `json:"authorization_endpoint"`
	TokenEndpoint         string `json:"token_endpoint"`
}

// authorizationServer reads issuer's metadata: RFC 8414's well-known
// document first, then OpenID Connect's.
func authorizationServer(ctx context.Context, c *http.Client, issuer string) (*serverMetadata, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("authorization server %q is not a URL", issuer)
	}
	path := strings.TrimSuffix(u.Path, "/")
	for _, doc := range []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-authorization-server" + path,
		strings.TrimSuffix(issuer, "/") + "/.well-known/openid-configuration",
	} {
		var m serverMetadata
		if getJSON(ctx, c, doc, &m) != nil {
			continue
		}
		if strings.TrimSuffix(m.Issuer, "/") != strings.TrimSuffix(issuer, "/") || m.AuthorizationEndpoint == "" || m.TokenEndpoint == "" {
			return nil, fmt.Errorf("the metadata of %s names issuer %q, or lacks its endpoints", issuer, m.Issuer)
		}
		return &m, nil
	}
	return nil, fmt.Errorf("the metadata of the authorization server %s cannot be read", issuer)
}

// protectedResourceIssuer reads the upstream's protected resource metadata
// (RFC 9728) and returns the first authorization server it names.
func protectedResourceIssuer(ctx context.Context, c *http.Client, resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("upstream %q is not a URL", resource)
	}
	path := strings.TrimSuffix(u.Path, "/")
	for _, doc := range []string{
		u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource" + path,
		u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource",
	} {
		var m struct {
			AuthorizationServers []string `json:"authorization_servers"`
		}
		if getJSON(ctx, c, doc, &m) == nil && len(m.AuthorizationServers) > 0 {
			return m.AuthorizationServers[0], nil
		}
	}
	return "", fmt.Errorf("the upstream %s publishes no protected resource metadata naming its authorization server: set consent.authorization_server", resource)
}

// getJSON reads a small JSON document.
func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", u, res.StatusCode)
	}
	return json.NewDecoder(http.MaxBytesReader(nil, res.Body, 1<<20)).Decode(v)
}
