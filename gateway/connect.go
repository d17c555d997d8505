package gateway

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// The connections pages, under Connections.URL.
const (
	connectionsPath = "/connections/"
	startPath       = "/connections/start"
	allowPath       = "/connections/allow"
	callbackPath    = "/connections/callback"
	signedInPath    = "/connections/signed-in"
	revokePath      = "/connections/revoke"
)

// How long a sign-in at the pages lasts, and a flow under way.
const (
	sessionTTL = 8 * time.Hour
	flowTTL    = 10 * time.Minute
	maxCookie  = 2048
)

// connector serves the connections pages and keeps what they need: where
// people sign in (auth.issuer, as Connections.SignIn), the sealing key, the
// approval store's connections, and a consent client per upstream whose
// credentials are "consent".
//
// Nothing of a flow under way is kept in the process: a person's sign-in,
// the sign-in at auth.issuer and the connection at an upstream each travel
// in a cookie of their own, sealed and bound to its purpose, so that any
// gateway instance sharing the key and the store serves any step.
type connector struct {
	name    string // the gateway's name, for the pages
	base    string // Connections.URL, without a trailing slash
	host    string // its host, the only Host the pages answer
	secure  bool   // https: Secure, __Host- cookies
	seal    *sealer
	store   connectionStore // set at Start
	clients map[string]*consentClient
	logger  *slog.Logger
	http    *http.Client

	issuer   string
	signIn   oauth2.Config // the gateway's client at auth.issuer; endpoints set at Start
	verifier *gooidc.IDTokenVerifier
}

func newConnector(cfg *Config, key []byte, signInSecret string, logger *slog.Logger) (*connector, error) {
	s, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(cfg.Connections.URL, "/")
	u, _ := url.Parse(base) // validated
	return &connector{
		name: cfg.Name, base: base, host: u.Host, secure: u.Scheme == "https", seal: s,
		clients: map[string]*consentClient{}, logger: logger,
		http:   &http.Client{Transport: LimitBodies(mcpimport.HTTPClient(nil).Transport, 1<<20), Timeout: 30 * time.Second},
		issuer: cfg.Auth.Issuer,
		signIn: oauth2.Config{
			ClientID: cfg.Connections.SignIn.ClientID, ClientSecret: signInSecret,
			RedirectURL: base + signedInPath, Scopes: []string{gooidc.ScopeOpenID},
		},
	}, nil
}

// start discovers auth.issuer for the sign-in, and takes the approval
// store's connections.
func (c *connector) start(ctx context.Context, store approval.Store) error {
	cs, ok := store.(connectionStore)
	if !ok {
		return errors.New("gateway: connections: the approval store keeps no connections (open it with approval.OpenSQLite or OpenPostgres)")
	}
	c.store = cs
	provider, err := gooidc.NewProvider(gooidc.ClientContext(ctx, c.http), c.issuer)
	if err != nil {
		return err
	}
	c.signIn.Endpoint = provider.Endpoint()
	c.verifier = provider.Verifier(&gooidc.Config{ClientID: c.signIn.ClientID})
	return nil
}

// startURL is the page that connects upstream for the person using
// client: the same for everyone (the pages connect whoever signs in).
func (c *connector) startURL(upstream, client string) string {
	q := url.Values{"upstream": {upstream}}
	if client != "" {
		q.Set("client", client)
	}
	return c.base + startPath + "?" + q.Encode()
}

// cookieName is name as the pages set it: __Host- over https, which binds
// it to this host and path /, with Secure.
func (c *connector) cookieName(name string) string {
	if c.secure {
		return "__Host-" + name
	}
	return name
}

func (c *connector) setCookie(w http.ResponseWriter, name, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(name), Value: value, Path: "/", HttpOnly: true, Secure: c.secure,
		SameSite: http.SameSiteLaxMode, MaxAge: int(ttl / time.Second)})
}

func (c *connector) clearCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: c.cookieName(name), Path: "/", MaxAge: -1, HttpOnly: true, Secure: c.secure, SameSite: http.SameSiteLaxMode})
}

// readSealed opens the cookie name, sealed for purpose, into v; false when
// it is missing, altered or expired (v's Expires, unix seconds).
func (c *connector) readSealed(r *http.Request, name, purpose string, v interface{ expires() int64 }) bool {
	ck, err := r.Cookie(c.cookieName(name))
	if err != nil {
		return false
	}
	plain, ok := c.seal.openText(purpose, ck.Value, maxCookie)
	return ok && json.Unmarshal(plain, v) == nil && time.Now().Unix() < v.expires()
}

func (c *connector) writeSealed(w http.ResponseWriter, name, purpose string, v any, ttl time.Duration) {
	b, _ := json.Marshal(v)
	c.setCookie(w, name, c.seal.sealText(purpose, b), ttl)
}

// person is who signed in at the pages.
type person struct {
	ID      string `json:"i"`
	Issuer  string `json:"s"`
	CSRF    string `json:"c"`
	Expires int64  `json:"e"`
}

func (p *person) expires() int64 { return p.Expires }

func (p *person) principal() policy.Principal {
	return policy.NewPrincipal(p.ID, nil).WithIssuer(p.Issuer)
}

// signingIn is a sign-in at auth.issuer under way.
type signingIn struct {
	State, Nonce, Verifier, Next string
	Expires                      int64
}

func (s *signingIn) expires() int64 { return s.Expires }

// connecting is a connection at an upstream under way: made only once the
// person agreed, bound to them and to this browser.
type connecting struct {
	State, Verifier, Upstream, Client, Person string
	Expires                                   int64
}

func (s *connecting) expires() int64 { return s.Expires }

func randomText() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// ServeHTTP serves the connections pages.
func (c *connector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Host != c.host {
		http.Error(w, "this page answers only "+c.host, http.StatusMisdirectedRequest)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "no-referrer")
	switch r.URL.Path {
	case signedInPath:
		c.signedIn(w, r)
		return
	}
	p := c.personOf(r)
	if p == nil {
		if r.Method != http.MethodGet {
			c.page(w, http.StatusForbidden, "Your sign-in has ended", "Sign in again, then repeat what you did.", nil)
			return
		}
		c.beginSignIn(w, r)
		return
	}
	switch {
	case r.URL.Path == startPath && r.Method == http.MethodGet:
		c.startPage(w, r, p)
	case r.URL.Path == allowPath && r.Method == http.MethodPost:
		c.allow(w, r, p)
	case r.URL.Path == callbackPath && r.Method == http.MethodGet:
		c.callback(w, r, p)
	case r.URL.Path == connectionsPath && r.Method == http.MethodGet:
		c.list(w, r, p)
	case r.URL.Path == revokePath && r.Method == http.MethodPost:
		c.revoke(w, r, p)
	default:
		c.page(w, http.StatusNotFound, "Not found", "There is no such page.", nil)
	}
}

// formActions are where the pages' forms may go: this host, and the
// authorization servers a connection redirects to after a POST.
func (c *connector) formActions() string {
	var out []string
	for _, cc := range c.clients {
		cc.mu.Lock()
		if cc.oauth != nil {
			if u, err := url.Parse(cc.oauth.Endpoint.AuthURL); err == nil {
				out = append(out, u.Scheme+"://"+u.Host)
			}
		}
		cc.mu.Unlock()
	}
	return strings.Join(out, " ")
}

func (c *connector) personOf(r *http.Request) *person {
	var p person
	if !c.readSealed(r, "agnara-connections", "session", &p) {
		return nil
	}
	return &p
}

// beginSignIn sends the browser to auth.issuer to sign in, then back to
// the page it asked for.
func (c *connector) beginSignIn(w http.ResponseWriter, r *http.Request) {
	if c.verifier == nil {
		c.page(w, http.StatusServiceUnavailable, "Not ready", "The gateway has not reached its issuer yet. Try again in a moment.", nil)
		return
	}
	s := signingIn{State: randomText(), Nonce: randomText(), Verifier: oauth2.GenerateVerifier(), Next: r.URL.RequestURI(), Expires: time.Now().Add(flowTTL).Unix()}
	if !strings.HasPrefix(s.Next, connectionsPath) || len(s.Next) > 512 {
		s.Next = connectionsPath
	}
	c.writeSealed(w, "agnara-signin", "signin", s, flowTTL)
	http.Redirect(w, r, c.signIn.AuthCodeURL(s.State, oauth2.S256ChallengeOption(s.Verifier), gooidc.Nonce(s.Nonce)), http.StatusSeeOther)
}

// signedIn is auth.issuer's redirect back: the person is who its ID token
// names, as the gateway's identity mapper names its callers.
func (c *connector) signedIn(w http.ResponseWriter, r *http.Request) {
	var s signingIn
	q := r.URL.Query()
	if !c.readSealed(r, "agnara-signin", "signin", &s) || !same(s.State, q.Get("state")) {
		c.page(w, http.StatusBadRequest, "Sign-in not recognised", "This sign-in did not start in this browser, or took too long. Open the link again.", nil)
		return
	}
	c.clearCookie(w, "agnara-signin")
	if q.Get("error") != "" {
		c.page(w, http.StatusForbidden, "Sign-in refused", "The sign-in was refused ("+printableCode(q.Get("error"))+").", nil)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), oauth2.HTTPClient, c.http), 30*time.Second)
	defer cancel()
	tok, err := c.signIn.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(s.Verifier))
	if err != nil {
		c.logger.LogAttrs(ctx, slog.LevelWarn, "connections: a sign-in's code was refused")
		c.page(w, http.StatusForbidden, "Sign-in failed", "The sign-in could not be completed. Open the link again.", nil)
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := c.verifier.Verify(ctx, raw)
	if err != nil || !same(idt.Nonce, s.Nonce) {
		c.logger.LogAttrs(ctx, slog.LevelWarn, "connections: a sign-in's ID token was refused")
		c.page(w, http.StatusForbidden, "Sign-in failed", "The sign-in could not be verified. Open the link again.", nil)
		return
	}
	// The same principal the MCP endpoint maps a token of this person to.
	pr, err := mcpexpose.SubjectPrincipal(ctx, mcpexpose.Identity{Subject: idt.Subject, Issuer: idt.Issuer})
	if err != nil || pr.IsAnonymous() {
		c.page(w, http.StatusForbidden, "Sign-in failed", "The issuer did not name you.", nil)
		return
	}
	c.writeSealed(w, "agnara-connections", "session", person{ID: pr.ID(), Issuer: pr.Issuer(), CSRF: randomText(), Expires: time.Now().Add(sessionTTL).Unix()}, sessionTTL)
	c.logger.LogAttrs(ctx, slog.LevelInfo, "connections: signed in", slog.String("principal", pr.ID()))
	http.Redirect(w, r, s.Next, http.StatusSeeOther)
}

// startPage asks the person whether the gateway may act for them at the
// upstream, through the client named.
func (c *connector) startPage(w http.ResponseWriter, r *http.Request, p *person) {
	upstream, client := r.URL.Query().Get("upstream"), r.URL.Query().Get("client")
	cc := c.clients[upstream]
	if cc == nil || len(client) > 256 {
		c.page(w, http.StatusNotFound, "No such server", "The gateway connects no server by that name.", nil)
		return
	}
	if !clientID(client) {
		c.page(w, http.StatusBadRequest, "No such client", "The link names a client that no sign-in can name.", nil)
		return
	}
	if _, err := cc.config(r.Context()); err != nil {
		c.logger.LogAttrs(r.Context(), slog.LevelWarn, "connections: the upstream's authorization server cannot be reached", slog.String("upstream", upstream), slog.String("error", err.Error()))
		c.page(w, http.StatusServiceUnavailable, "Not reachable", "The server's sign-in cannot be reached. Try again later.", nil)
		return
	}
	c.page(w, http.StatusOK, "Connect "+upstream, "", &consentView{
		Person: p.ID, Upstream: upstream, Client: client, Scopes: strings.Join(cc.cfg.Scopes, " "), Gateway: c.name, CSRF: p.CSRF,
	})
}

// allow is the person's consent: only now is a flow made, bound to them
// and to this browser, and the browser sent to the upstream's
// authorization server.
func (c *connector) allow(w http.ResponseWriter, r *http.Request, p *person) {
	if !same(r.PostFormValue("csrf"), p.CSRF) {
		c.page(w, http.StatusForbidden, "Refused", "This request did not come from the gateway's page.", nil)
		return
	}
	upstream, client := r.PostFormValue("upstream"), r.PostFormValue("client")
	cc := c.clients[upstream]
	if cc == nil || len(client) > 256 {
		c.page(w, http.StatusNotFound, "No such server", "The gateway connects no server by that name.", nil)
		return
	}
	if !clientID(client) {
		c.page(w, http.StatusBadRequest, "No such client", "The link names a client that no sign-in can name.", nil)
		return
	}
	cfg, err := cc.config(r.Context())
	if err != nil {
		c.logger.LogAttrs(r.Context(), slog.LevelWarn, "connections: the upstream's authorization server cannot be reached", slog.String("upstream", upstream), slog.String("error", err.Error()))
		c.page(w, http.StatusServiceUnavailable, "Not reachable", "The server's sign-in cannot be reached. Try again later.", nil)
		return
	}
	f := connecting{State: randomText(), Verifier: oauth2.GenerateVerifier(), Upstream: upstream, Client: client,
		Person: p.principal().Key(), Expires: time.Now().Add(flowTTL).Unix()}
	c.writeSealed(w, "agnara-connect", "connect", f, flowTTL)
	http.Redirect(w, r, cfg.AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oauth2.SetAuthURLParam("resource", cc.resource)), http.StatusSeeOther)
}

// callback is the upstream's authorization server's redirect back: the
// grant is kept for the person who agreed, in this browser, and no one
// else.
func (c *connector) callback(w http.ResponseWriter, r *http.Request, p *person) {
	var f connecting
	q := r.URL.Query()
	if !c.readSealed(r, "agnara-connect", "connect", &f) || !same(f.State, q.Get("state")) || !same(f.Person, p.principal().Key()) {
		c.page(w, http.StatusBadRequest, "Connection not recognised", "This connection did not start in this browser, for you, or took too long. Open the link again.", nil)
		return
	}
	c.clearCookie(w, "agnara-connect")
	cc := c.clients[f.Upstream]
	if cc == nil {
		c.page(w, http.StatusNotFound, "No such server", "The gateway connects no server by that name.", nil)
		return
	}
	if e := q.Get("error"); e != "" {
		c.page(w, http.StatusForbidden, "Not connected", "The server refused ("+printableCode(e)+"). Nothing was kept.", nil)
		return
	}
	cfg, err := cc.config(r.Context())
	if err != nil {
		c.page(w, http.StatusServiceUnavailable, "Not reachable", "The server's sign-in cannot be reached. Try again later.", nil)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithValue(r.Context(), oauth2.HTTPClient, cc.http), 30*time.Second)
	defer cancel()
	tok, err := cfg.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(f.Verifier), oauth2.SetAuthURLParam("resource", cc.resource))
	if err != nil {
		c.logger.LogAttrs(ctx, slog.LevelWarn, "connections: the upstream's authorization server refused the code", slog.String("upstream", f.Upstream))
		c.page(w, http.StatusForbidden, "Not connected", "The server did not complete the sign-in. Open the link again.", nil)
		return
	}
	pr := p.principal()
	if err := cc.save(ctx, pr, f.Client, tok, ""); err != nil {
		c.page(w, http.StatusServiceUnavailable, "Not connected", "The grant could not be kept. Try again later.", nil)
		return
	}
	c.logger.LogAttrs(ctx, slog.LevelInfo, "connections: connected", slog.String("principal", pr.ID()), slog.String("upstream", f.Upstream), slog.String("client", f.Client))
	c.page(w, http.StatusOK, "Connected", "The gateway now acts for you at "+f.Upstream+" when "+clientName(f.Client)+" calls its tools. You can close this page and return to your client.", nil)
}

// clientID reports whether client can be an OAuth client id: visible
// ASCII and spaces (RFC 6749, appendix A.1). The person is asked by the
// client's name; a name with controls, or with invisible or right-to-left
// characters ("\u202etnega" reads "agent"), would have them allow one
// client while reading another's name.
func clientID(client string) bool {
	for i := 0; i < len(client); i++ {
		if client[i] < 0x20 || client[i] > 0x7e {
			return false
		}
	}
	return true
}

func clientName(client string) string {
	if client == "" {
		return "your client"
	}
	return "the client " + client
}

// list shows the person's own grants.
func (c *connector) list(w http.ResponseWriter, r *http.Request, p *person) {
	conns, err := c.store.ListConnections(r.Context(), p.principal())
	if err != nil {
		c.page(w, http.StatusServiceUnavailable, "Not available", "Your connections cannot be read now. Try again later.", nil)
		return
	}
	c.page(w, http.StatusOK, "Your connections", "", &listView{Person: p.ID, CSRF: p.CSRF, Connections: conns})
}

// revoke forgets one of the person's grants: the next call through the
// gateway finds none, on every instance.
func (c *connector) revoke(w http.ResponseWriter, r *http.Request, p *person) {
	if !same(r.PostFormValue("csrf"), p.CSRF) {
		c.page(w, http.StatusForbidden, "Refused", "This request did not come from the gateway's page.", nil)
		return
	}
	upstream, client := r.PostFormValue("upstream"), r.PostFormValue("client")
	if _, err := c.store.DeleteConnection(r.Context(), p.principal(), upstream, client); err != nil {
		c.page(w, http.StatusServiceUnavailable, "Not revoked", "The connection could not be revoked now. Try again later.", nil)
		return
	}
	c.logger.LogAttrs(r.Context(), slog.LevelInfo, "connections: revoked", slog.String("principal", p.ID), slog.String("upstream", upstream), slog.String("client", client))
	http.Redirect(w, r, connectionsPath, http.StatusSeeOther)
}

type consentView struct{ Person, Upstream, Client, Scopes, Gateway, CSRF string }

type listView struct {
	Person, CSRF string
	Connections  []approval.Connection
}

func (c *connector) page(w http.ResponseWriter, status int, title, text string, view any) {
	// A form's POST may be answered with a redirect to an upstream's
	// authorization server: form-action must name it (Chromium applies it
	// to the redirect).
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' "+c.formActions())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pages.Execute(w, map[string]any{"Title": title, "Text": text, "Consent": asConsent(view), "List": asList(view)})
}

func asConsent(v any) *consentView { c, _ := v.(*consentView); return c }
func asList(v any) *listView       { l, _ := v.(*listView); return l }

var pages = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
button{font:inherit;padding:.5rem 1rem;margin-right:.5rem}table{border-collapse:collapse}td,th{padding:.25rem .75rem .25rem 0;text-align:left}</style>
</head><body>
<h1 id="title">{{.Title}}</h1>
{{with .Text}}<p id="text">{{.}}</p>{{end}}
{{with .Consent}}
<p>You are signed in as <strong id="person">{{.Person}}</strong>.</p>
<p id="ask">Allow the gateway <strong>{{.Gateway}}</strong> to act as you at <strong>{{.Upstream}}</strong>{{with .Scopes}} (scopes: <code>{{.}}</code>){{end}}
whenever {{if .Client}}the client <strong id="client">{{.Client}}</strong>{{else}}your client{{end}} calls its tools? You will sign in at {{.Upstream}}'s own sign-in next.
You can revoke it at any time on <a href="/connections/">your connections</a>.</p>
<form method="post" action="/connections/allow">
<input type="hidden" name="csrf" value="{{.CSRF}}"><input type="hidden" name="upstream" value="{{.Upstream}}"><input type="hidden" name="client" value="{{.Client}}">
<button type="submit" id="allow">Allow and sign in</button>
</form>
{{end}}
{{with .List}}
<p>Signed in as <strong id="person">{{.Person}}</strong>. The gateway acts for you at these servers, each for one client:</p>
{{if .Connections}}<table id="connections"><tr><th>Server</th><th>Client</th><th>Scopes</th><th>Since</th><th></th></tr>
{{range .Connections}}<tr><td>{{.Upstream}}</td><td>{{or .ClientID "any"}}</td><td><code>{{range .Scopes}}{{.}} {{end}}</code></td><td>{{.CreatedAt.UTC.Format "2006-01-02 15:04 UTC"}}</td>
<td><form method="post" action="/connections/revoke"><input type="hidden" name="csrf" value="{{$.List.CSRF}}"><input type="hidden" name="upstream" value="{{.Upstream}}"><input type="hidden" name="client" value="{{.ClientID}}"><button type="submit" class="revoke" id="revoke-{{.Upstream}}">Revoke</button></form></td></tr>
{{end}}</table>{{else}}<p id="none">None.</p>{{end}}
{{end}}
</body></html>
`))
