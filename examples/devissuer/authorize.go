package main

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// scopeOpenID is the scope every authorization request must carry: the
// authorization endpoint exists to sign users in with OpenID Connect.
const scopeOpenID = "openid"

// Bounds on what an authorization request may make the issuer remember.
const (
	maxParamLen   = 1024 // state and nonce, in bytes
	maxUserLength = 64   // user names, in characters
)

// authRequest is a validated authorization request. It is kept server-side
// under a random id while the user signs in, so that the sign-in form can
// change neither the client, nor the redirect URI, nor the code challenge.
type authRequest struct {
	clientID    string
	redirectURI string
	state       string
	challenge   string   // BASE64URL(SHA256(code_verifier)), 43 characters
	requested   []string // scopes besides openid, deduplicated, in request order
	nonce       string   // "" when none
	resource    string   // RFC 8707; "" when none
}

// grant is what an authorization code stands for: the request, who signed
// in and when, and the scopes they granted.
type grant struct {
	request  authRequest
	user     string
	granted  []string // openid first, then the user's choice
	authTime int64    // Unix seconds
}

// authError is a refused authorization request. While redirectURI is empty
// the client or its redirect URI is not known good, so the user sees the
// error on a page; afterwards it goes back to the client (RFC 6749 section
// 4.1.2.1).
type authError struct {
	redirectURI, state string
	code, description  string
}

// authorize serves GET /authorize: it validates the authorization request,
// keeps it, and shows the sign-in page.
func (is *issuer) authorize(w http.ResponseWriter, r *http.Request) {
	req, aerr := is.parseAuthRequest(r.URL.Query())
	if aerr != nil {
		is.refuse(w, r, aerr)
		return
	}
	id, err := is.pending.add(*req)
	if err != nil {
		is.refuse(w, r, &authError{req.redirectURI, req.state, "temporarily_unavailable", "too many sign-ins in progress: try again in a few minutes"})
		return
	}
	is.renderSignIn(w, http.StatusOK, id, req, signInForm{Scopes: strings.Join(req.requested, " ")}, "")
}

// parseAuthRequest validates an authorization request (RFC 6749 section
// 4.1.1, RFC 7636 section 4.3, OpenID Connect Core section 3.1.2.1).
func (is *issuer) parseAuthRequest(q url.Values) (*authRequest, *authError) {
	// Until the redirect URI is validated, errors are shown, never sent.
	shown := func(format string, args ...any) *authError {
		return &authError{code: "invalid_request", description: fmt.Sprintf(format, args...)}
	}
	if len(q["client_id"]) != 1 || q.Get("client_id") == "" {
		return nil, shown("The request has no client_id, or more than one.")
	}
	if id := q.Get("client_id"); id != is.cfg.ClientID {
		return nil, shown("Unknown client_id %q: this issuer knows one client, %q (-client-id).", id, is.cfg.ClientID)
	}
	if len(q["redirect_uri"]) != 1 || q.Get("redirect_uri") == "" {
		return nil, shown("The request has no redirect_uri, or more than one: this issuer needs the client's callback URL in every request.")
	}
	redirectURI := q.Get("redirect_uri")
	if err := is.checkRedirectURI(redirectURI); err != nil {
		return nil, shown("%v.", err)
	}

	var state string
	if len(q["state"]) == 1 {
		state = q.Get("state")
	}
	sent := func(code, description string) *authError {
		return &authError{redirectURI: redirectURI, state: state, code: code, description: description}
	}
	for name, values := range q {
		if len(values) > 1 {
			if name == "resource" {
				return nil, sent("invalid_target", "this issuer accepts one resource per request")
			}
			return nil, sent("invalid_request", "a parameter is repeated: "+name)
		}
	}
	switch q.Get("response_type") {
	case "code":
	case "":
		return nil, sent("invalid_request", "response_type is missing: send response_type=code")
	default:
		return nil, sent("unsupported_response_type", "only response_type=code is supported")
	}
	if state == "" {
		return nil, sent("invalid_request", "state is missing: this issuer requires it, against cross-site request forgery")
	}
	if len(state) > maxParamLen {
		return nil, sent("invalid_request", fmt.Sprintf("state is longer than %d bytes", maxParamLen))
	}
	switch q.Get("code_challenge_method") {
	case "S256":
	case "":
		return nil, sent("invalid_request", "PKCE is required: send code_challenge and code_challenge_method=S256")
	default: // RFC 7636 section 4.4.1
		return nil, sent("invalid_request", "code_challenge_method must be S256: plain is not supported")
	}
	challenge := q.Get("code_challenge")
	if b, err := base64.RawURLEncoding.Strict().DecodeString(challenge); err != nil || len(b) != sha256.Size || len(challenge) != 43 {
		return nil, sent("invalid_request", "code_challenge must be BASE64URL(SHA256(code_verifier)), 43 characters")
	}

	scopes := strings.Fields(q.Get("scope"))
	if !slices.Contains(scopes, scopeOpenID) {
		return nil, sent("invalid_scope", "scope must include openid: this endpoint signs users in with OpenID Connect")
	}
	var requested []string
	for _, s := range scopes {
		if !validScopeToken(s) {
			return nil, sent("invalid_scope", "a scope is not a valid scope token (RFC 6749 section 3.3)")
		}
		if s == scopeOpenID || slices.Contains(requested, s) {
			continue
		}
		if !slices.Contains(is.cfg.Scopes, s) {
			return nil, sent("invalid_scope", "scope "+s+" is not allowed; allowed: openid "+strings.Join(is.cfg.Scopes, " "))
		}
		requested = append(requested, s)
	}

	nonce := q.Get("nonce")
	if len(nonce) > maxParamLen {
		return nil, sent("invalid_request", fmt.Sprintf("nonce is longer than %d bytes", maxParamLen))
	}
	resource := q.Get("resource")
	if q.Has("resource") {
		if err := checkHTTPURL("resource", resource); err != nil {
			return nil, sent("invalid_target", "resource must be an absolute http or https URL without a fragment")
		}
	}
	return &authRequest{
		clientID:    is.cfg.ClientID,
		redirectURI: redirectURI,
		state:       state,
		challenge:   challenge,
		requested:   requested,
		nonce:       nonce,
		resource:    resource,
	}, nil
}

// signIn serves POST /authorize, the sign-in form: it issues an
// authorization code for the pending request and sends the browser back to
// the client with it.
func (is *issuer) signIn(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(strings.ToLower(ct), "application/x-www-form-urlencoded") {
		is.renderError(w, http.StatusUnsupportedMediaType, "The sign-in form must be posted as application/x-www-form-urlencoded.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestLen)
	if err := r.ParseForm(); err != nil {
		is.renderError(w, http.StatusBadRequest, "The sign-in form is not a valid form.")
		return
	}
	form := r.PostForm
	for _, values := range form {
		if len(values) > 1 {
			is.renderError(w, http.StatusBadRequest, "The sign-in form repeats a field.")
			return
		}
	}
	id := form.Get("request")
	req, st := is.pending.get(id)
	if st != found {
		is.renderError(w, http.StatusBadRequest, lookupMessage(st))
		return
	}

	switch form.Get("action") {
	case "", "sign-in":
	case "deny":
		if _, st := is.pending.take(id); st != found {
			is.renderError(w, http.StatusBadRequest, lookupMessage(st))
			return
		}
		is.refuse(w, r, &authError{req.redirectURI, req.state, "access_denied", "the user cancelled the sign-in"})
		return
	default:
		is.renderError(w, http.StatusBadRequest, "The sign-in form has an unknown action.")
		return
	}

	submitted := signInForm{User: form.Get("user"), Scopes: form.Get("scopes")}
	if problem := checkUser(submitted.User); problem != "" {
		is.renderSignIn(w, http.StatusBadRequest, id, &req, submitted, problem)
		return
	}
	granted, problem := is.grantedScopes(req.requested, submitted.Scopes)
	if problem != "" {
		is.renderSignIn(w, http.StatusBadRequest, id, &req, submitted, problem)
		return
	}
	// Taking the request, not just reading it, makes two posts of one form
	// (a double click, a reload) yield one code.
	if _, st := is.pending.take(id); st != found {
		is.renderError(w, http.StatusBadRequest, lookupMessage(st))
		return
	}
	code, err := is.codes.add(grant{request: req, user: submitted.User, granted: granted, authTime: is.cfg.Now().Unix()})
	if err != nil {
		is.refuse(w, r, &authError{req.redirectURI, req.state, "temporarily_unavailable", "too many authorization codes outstanding: try again in a minute"})
		return
	}
	is.logf("signed in: user %q, scope %q; code sent to %s", submitted.User, strings.Join(granted, " "), req.redirectURI)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "same-origin") // browsers then send Origin on the form's own POST; "no-referrer" makes it "null"
	http.Redirect(w, r, withQuery(req.redirectURI, url.Values{"code": {code}, "state": {req.state}}), http.StatusSeeOther)
}

// refuse answers a refused authorization request: on an error page, or by
// redirecting to the client with error, error_description and state.
func (is *issuer) refuse(w http.ResponseWriter, r *http.Request, e *authError) {
	is.logf("authorization refused: %s: %s", e.code, e.description)
	if e.redirectURI == "" {
		is.renderError(w, http.StatusBadRequest, e.description)
		return
	}
	params := url.Values{"error": {e.code}, "error_description": {errorDescription(e.description)}}
	if e.state != "" {
		params.Set("state", e.state)
	}
	status := http.StatusFound
	if r.Method == http.MethodPost {
		status = http.StatusSeeOther
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "same-origin") // browsers then send Origin on the form's own POST; "no-referrer" makes it "null"
	http.Redirect(w, r, withQuery(e.redirectURI, params), status)
}

// lookupMessage explains to the user why their sign-in form is not
// accepted.
func lookupMessage(st lookup) string {
	if st == used {
		return "This sign-in was already completed. Go back to the application and sign in again."
	}
	return fmt.Sprintf("This sign-in request is unknown or expired (a sign-in page lasts %v). Go back to the application and sign in again.", pendingTTL)
}

// checkUser returns what is wrong with a user name, or "".
func checkUser(user string) string {
	n := utf8.RuneCountInString(user)
	ok := utf8.ValidString(user) && n >= 1 && n <= maxUserLength
	for _, c := range user {
		ok = ok && unicode.IsPrint(c) && !unicode.IsSpace(c)
	}
	if !ok {
		return fmt.Sprintf("Enter a user name of 1 to %d printable characters, without spaces.", maxUserLength)
	}
	return ""
}

// grantedScopes returns the scopes the user granted: openid, then those of
// the submitted field, each of which must have been requested (and so be
// allowed). Or it returns what is wrong with the field.
func (is *issuer) grantedScopes(requested []string, field string) ([]string, string) {
	granted := []string{scopeOpenID}
	for _, s := range strings.Fields(field) {
		switch {
		case slices.Contains(granted, s):
		case !slices.Contains(is.cfg.Scopes, s):
			return nil, fmt.Sprintf("Scope %q is not allowed by this issuer; allowed: %s.", s, strings.Join(is.cfg.Scopes, " "))
		case !slices.Contains(requested, s):
			return nil, fmt.Sprintf("Scope %q was not requested by the application; requested: %s.", s, strings.Join(requested, " "))
		default:
			granted = append(granted, s)
		}
	}
	return granted, ""
}

// crossOriginProtection refuses cross-origin browser posts to next, against
// a page elsewhere signing the user in without their knowing. The standard
// http.CrossOriginProtection judges Sec-Fetch-Site, else Origin against
// Host; on top, an Origin must be the issuer's own, which agreeing with Host
// does not prove (a DNS-rebound name makes them agree).
func (is *issuer) crossOriginProtection(next http.Handler) http.Handler {
	deny := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.logf("sign-in refused: cross-origin post (Origin %q, Sec-Fetch-Site %q)", r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site"))
		is.renderError(w, http.StatusForbidden, "This sign-in form was submitted from another site. Start again from the application: the sign-in page must be opened at "+is.cfg.Issuer+".")
	})
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(deny)
	return cop.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && o != is.origin {
			deny.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// checkRedirectURI accepts an http URL on a loopback host with any port and
// path (RFC 8252 section 7.3: local apps pick their port when they start),
// or exactly one of the -redirect-uris.
func (is *issuer) checkRedirectURI(s string) error {
	if slices.Contains(is.cfg.RedirectURIs, s) {
		return nil
	}
	if err := checkRedirectURISyntax("redirect_uri", s); err != nil {
		return err
	}
	u, _ := url.Parse(s) // checked above
	h := u.Hostname()
	if u.Scheme != "http" || !(h == "127.0.0.1" || h == "::1" || strings.EqualFold(h, "localhost")) {
		return fmt.Errorf("redirect_uri %q is not an http URL on 127.0.0.1, [::1] or localhost: this development issuer sends codes to loopback addresses only, or to the exact URIs given with -redirect-uris", s)
	}
	return nil
}

// checkRedirectURISyntax checks that s is an absolute http(s) URL with a
// host of letters, digits, dots, hyphens (or a bracketed IPv6 address), no
// user information and no fragment (RFC 6749 section 3.1.2), written in
// printable ASCII without backslashes: so that the browser reads the
// Location it is sent as this issuer did, and the origin can go in a
// Content-Security-Policy as it is.
func checkRedirectURISyntax(what, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return fmt.Errorf("%s %q must be written in printable ASCII without spaces or backslashes", what, s)
		}
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%s %q must be an absolute http URL, such as http://127.0.0.1:8080/callback", what, s)
	}
	if u.User != nil {
		return fmt.Errorf("%s %q must not have user information", what, s)
	}
	if strings.Contains(s, "#") {
		return fmt.Errorf("%s %q must not have a fragment", what, s)
	}
	h := u.Hostname()
	if strings.HasPrefix(u.Host, "[") {
		h = strings.ReplaceAll(h, ":", "")
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return fmt.Errorf("%s %q: the host must be a DNS name or an IP address", what, s)
		}
	}
	return nil
}

// originOf returns the origin of an http(s) URL as browsers send it in
// Origin (RFC 6454 section 6.2): scheme://host[:port], lower case, without
// a default port.
func originOf(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q has no origin", rawURL)
	}
	host := strings.ToLower(u.Host)
	if p := u.Port(); (u.Scheme == "http" && p == "80") || (u.Scheme == "https" && p == "443") {
		host = strings.TrimSuffix(host, ":"+p)
	}
	return strings.ToLower(u.Scheme) + "://" + host, nil
}

// withQuery appends params to uri, keeping the query it has (RFC 6749
// section 3.1.2).
func withQuery(uri string, params url.Values) string {
	sep := "?"
	switch {
	case strings.HasSuffix(uri, "?") || strings.HasSuffix(uri, "&"):
		sep = ""
	case strings.Contains(uri, "?"):
		sep = "&"
	}
	return uri + sep + params.Encode()
}

// errorDescription keeps the characters error_description may hold (RFC
// 6749 section 4.1.2.1: printable ASCII without '"' and '\'), replacing
// the others.
func errorDescription(s string) string {
	return strings.Map(func(c rune) rune {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return '?'
		}
		return c
	}, s)
}
