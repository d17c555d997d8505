package inbox

import (
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

// OIDC is how approvers sign in: the authorization code flow with PKCE at
// Issuer, as the registered client ClientID. The approver's id is the ID
// token's IDClaim, and their scopes its ScopeClaim.
type OIDC struct {
	// Issuer is the OpenID Connect issuer (the MCP server's).
	Issuer string
	// ClientID and ClientSecret are the inbox's client registration.
	ClientID, ClientSecret string
	// RedirectURL is the inbox's /callback URL as registered, e.g.
	// https://approvals.example.com/callback. Its host and port are the
	// inbox's public name, the only Host it answers: a proxy in front of
	// it must pass the Host on (nginx: proxy_set_header Host $host).
	RedirectURL string
	// Scopes are asked for besides "openid". Default: the approver scope.
	Scopes []string
	// IDClaim is the ID token claim naming the approver. Default "sub".
	IDClaim string
	// ScopeClaim is the ID token claim holding the approver's scopes: a
	// space-separated string or an array of strings. Default "scope".
	ScopeClaim string
	// HTTPClient, when set, is used to reach the issuer.
	HTTPClient *http.Client
}

// relyingParty is the inbox's side of the sign-in.
type relyingParty struct {
	cfg      OIDC
	oauth    oauth2.Config
	verifier *oidc.IDTokenVerifier
	scope    string // the approver scope
}

// login is a sign-in under way. It travels in the sign-in's own cookie
// (HttpOnly, for /callback only, 10 minutes), not in the process, so that
// the issuer's redirect back may reach any inbox instance (ADR 0052): the
// state is compared with the callback's, and the PKCE verifier and the
// nonce, which only this browser holds, bind the code and the ID token to
// it. A visitor who edits their own cookie can only spoil their own
// sign-in; the path to return to is checked again when it is used.
type login struct {
	State    string `json:"s"`
	Verifier string `json:"v"`
	Nonce    string `json:"n"`
	Next     string `json:"x"`
	Expires  int64  `json:"e"` // unix seconds
}

const (
	loginCookie = "agnara_inbox_login"
	loginTTL    = 10 * time.Minute
	// maxLoginCookie bounds the cookie a callback reads, and maxNext the
	// path to return to that a sign-in carries in it.
	maxLoginCookie = 1024
	maxNext        = 512
)

func (l login) encode() string {
	b, _ := json.Marshal(l) // strings and an int: never fails
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeLogin(v string) (login, bool) {
	var l login
	if len(v) > maxLoginCookie {
		return l, false
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || json.Unmarshal(b, &l) != nil || l.State == "" || l.Verifier == "" || l.Nonce == "" {
		return login{}, false
	}
	return l, true
}

func newRelyingParty(ctx context.Context, cfg OIDC, approverScope string) (*relyingParty, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("inbox: OIDC needs Issuer, ClientID and RedirectURL")
	}
	cfg.IDClaim = cmp.Or(cfg.IDClaim, "sub")
	cfg.ScopeClaim = cmp.Or(cfg.ScopeClaim, "scope")
	if len(cfg.Scopes) == 0 {
		cfg.Scopes = []string{approverScope}
	}
	if cfg.HTTPClient != nil {
		ctx = oidc.ClientContext(ctx, cfg.HTTPClient)
	}
	provider, err := oidc.NewProvider(ctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("inbox: discovering the issuer %s: %w", cfg.Issuer, err)
	}
	return &relyingParty{
		cfg: cfg,
		oauth: oauth2.Config{
			ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			Endpoint: provider.Endpoint(), Scopes: append([]string{oidc.ScopeOpenID}, cfg.Scopes...),
		},
		verifier: provider.Verifier(&oidc.Config{ClientID: cfg.ClientID}),
		scope:    approverScope,
	}, nil
}

// login starts a sign-in: a state, a PKCE verifier and a nonce in the
// sign-in's cookie, and a redirect to the issuer.
func (in *Inbox) login(w http.ResponseWriter, r *http.Request) {
	rp := in.oidc
	if rp == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	next := safeNext(r.URL.Query().Get("next"))
	if len(next) > maxNext {
		next = "/" // the cookie stays small; every page the inbox links to is shorter
	}
	l := login{State: randomID(), Verifier: oauth2.GenerateVerifier(), Nonce: randomID(), Next: next,
		Expires: in.opts.Now().Add(loginTTL).Unix()}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Value: l.encode(), Path: "/callback", HttpOnly: true, Secure: in.opts.SecureCookies,
		SameSite: http.SameSiteLaxMode, MaxAge: int(loginTTL / time.Second)})
	http.Redirect(w, r, rp.oauth.AuthCodeURL(l.State, oauth2.S256ChallengeOption(l.Verifier), oidc.Nonce(l.Nonce)), http.StatusSeeOther)
}

// callback finishes a sign-in: the state must be this browser's, the code
// is exchanged with the PKCE verifier, the ID token verified (issuer,
// audience, expiry, nonce), and the approver must hold the approver scope.
func (in *Inbox) callback(w http.ResponseWriter, r *http.Request) {
	rp := in.oidc
	if rp == nil {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	q := r.URL.Query()
	state := q.Get("state")
	c, err := r.Cookie(loginCookie)
	var l login
	ok := err == nil
	if ok {
		l, ok = decodeLogin(c.Value)
	}
	if !ok || state == "" || subtle.ConstantTimeCompare([]byte(l.State), []byte(state)) != 1 {
		in.fail(w, r, nil, http.StatusBadRequest, "This sign-in did not start in this browser. Sign in again.")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: loginCookie, Path: "/callback", MaxAge: -1, HttpOnly: true, Secure: in.opts.SecureCookies, SameSite: http.SameSiteLaxMode})
	if !in.opts.Now().Before(time.Unix(l.Expires, 0)) {
		in.fail(w, r, nil, http.StatusBadRequest, "This sign-in expired. Sign in again.")
		return
	}
	if e := q.Get("error"); e != "" {
		in.fail(w, r, nil, http.StatusForbidden, "The issuer refused the sign-in ("+shorten(e, 64)+").")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if rp.cfg.HTTPClient != nil {
		ctx = context.WithValue(ctx, oauth2.HTTPClient, rp.cfg.HTTPClient)
	}
	tok, err := rp.oauth.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(l.Verifier))
	if err != nil {
		in.opts.Logger.Warn("inbox: a sign-in's code exchange failed", slog.String("error", err.Error()))
		in.fail(w, r, nil, http.StatusForbidden, "The sign-in could not be completed. Sign in again.")
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	idt, err := rp.verifier.Verify(ctx, raw)
	if err != nil || subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(l.Nonce)) != 1 {
		in.opts.Logger.Warn("inbox: a sign-in's ID token was refused", slog.Any("error", err))
		in.fail(w, r, nil, http.StatusForbidden, "The sign-in could not be verified. Sign in again.")
		return
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		in.fail(w, r, nil, http.StatusForbidden, "The sign-in could not be verified. Sign in again.")
		return
	}
	id, _ := claims[rp.cfg.IDClaim].(string)
	if err := approval.CheckIdentity(id, idt.Issuer); err != nil || id == "" {
		in.fail(w, r, nil, http.StatusForbidden, "The issuer did not name you in a way approvals can record.")
		return
	}
	scopes := scopesOf(claims[rp.cfg.ScopeClaim])
	approver := policy.NewPrincipal(id, scopes).WithIssuer(idt.Issuer)
	if !approver.HasScope(rp.scope) {
		in.opts.Logger.Info("inbox: a sign-in without the approver scope was refused", slog.String("approver", id))
		in.fail(w, r, nil, http.StatusForbidden, "You are signed in as "+shorten(id, 64)+", who does not hold the approver scope ("+rp.scope+").")
		return
	}
	if _, err := in.startSession(r.Context(), w, approver); err != nil {
		in.unavailable(w, r, nil, err)
		return
	}
	in.opts.Logger.Info("inbox: signed in", slog.String("approver", id))
	http.Redirect(w, r, safeNext(l.Next), http.StatusSeeOther)
}

// scopesOf reads a scope claim: a space-separated string or an array.
func scopesOf(v any) []string {
	switch s := v.(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, e := range s {
			if str, ok := e.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// logout ends the session, on every inbox sharing the store.
func (in *Inbox) logout(w http.ResponseWriter, r *http.Request) {
	s := in.post(w, r)
	if s == nil {
		return
	}
	if err := in.store.EndSignIn(r.Context(), s.key); err != nil {
		in.unavailable(w, r, s, err)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, Secure: in.opts.SecureCookies, SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, "/signed-out", http.StatusSeeOther)
}
