package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"strconv"
	"strings"
)

// pageStyle is the pages' only styling, inline so that a page needs no
// other request, and allowed by its hash in the Content-Security-Policy.
const pageStyle = `body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:1.5em auto;padding:0 1em;color:#111}
.dev{background:#b00020;color:#fff;padding:.8em 1em;font-weight:bold;border-radius:4px}
.error{border-left:4px solid #b00020;padding:.3em .8em;background:#fdecee}
label{display:block;font-weight:bold;margin-top:1em}
input[type=text]{width:100%;box-sizing:border-box;font:inherit;padding:.3em}
button{font:inherit;padding:.3em 1.2em;margin:1em .5em 0 0}
dl{font-size:.9em;color:#444}dt{font-weight:bold}dd{margin:0 0 .5em 0;word-break:break-all}
code{word-break:break-all}`

// pageStyleSource is pageStyle's CSP source expression.
var pageStyleSource = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// pages are the sign-in page and the error page. html/template escapes
// every value for where it lands; the style goes in as template.CSS, byte
// for byte, so that its hash holds.
var pages = template.Must(template.New("").Parse(`
{{- define "top"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · devissuer (development only)</title>
<style>{{.Style}}</style>
</head>
<body>
<p class="dev" id="dev-warning">DEVELOPMENT ISSUER — NOT FOR PRODUCTION. Anyone can sign in here as any user name, without a password.</p>
{{end}}

{{- define "signin"}}{{template "top" .}}<main>
<h1>Sign in</h1>
<p>The application <code>{{.ClientID}}</code> asks you to sign in. You will be sent back to <code>{{.RedirectURI}}</code>.</p>
{{if .Problem}}<p class="error" id="error" role="alert">{{.Problem}}</p>
{{end -}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="request" value="{{.RequestID}}">
<label for="user">User name</label>
<input type="text" id="user" name="user" value="{{.User}}" autocomplete="username" autocapitalize="none" spellcheck="false" autofocus>
<label for="scopes">Scopes</label>
<input type="text" id="scopes" name="scopes" value="{{.Scopes}}" autocapitalize="none" spellcheck="false">
<p>Space-separated. Grant any of the requested scopes; openid is always granted.</p>
<button type="submit" id="sign-in" name="action" value="sign-in">Sign in</button>
<button type="submit" id="deny" name="action" value="deny">Cancel</button>
</form>
<h2>The request</h2>
<dl id="request">
<dt>Client</dt><dd>{{.ClientID}}</dd>
<dt>Redirect URI</dt><dd>{{.RedirectURI}}</dd>
<dt>Requested scopes</dt><dd id="requested-scopes">openid{{range .Requested}} {{.}}{{end}}</dd>
{{if .Resource}}<dt>Resource</dt><dd>{{.Resource}}</dd>
{{end}}<dt>State</dt><dd id="state">{{.State}}</dd>
</dl>
</main>
</body>
</html>
{{end}}

{{- define "error"}}{{template "top" .}}<main>
<h1>Sign-in request refused</h1>
<p class="error" id="error" role="alert">{{.Problem}}</p>
<p>Nothing was sent back to the application.</p>
</main>
</body>
</html>
{{end}}`))

// signInForm holds the form's editable fields.
type signInForm struct {
	User, Scopes string
}

// pageData is what the templates show.
type pageData struct {
	Title, Problem string
	Style          template.CSS

	// The sign-in page only.
	Action, RequestID               string
	ClientID, RedirectURI, Resource string
	State                           string
	Requested                       []string
	signInForm
}

// renderSignIn writes the sign-in page for the pending request id, with the
// form's fields and, when not "", the problem with what was submitted.
func (is *issuer) renderSignIn(w http.ResponseWriter, status int, id string, req *authRequest, form signInForm, problem string) {
	// Browsers apply form-action to the redirects that follow a form
	// submission too, so the client's origin must be allowed for the 303
	// back to it (checkRedirectURISyntax keeps the origin CSP-safe).
	formAction := "'self'"
	if o, err := originOf(req.redirectURI); err == nil {
		formAction += " " + o
	}
	is.renderPage(w, status, "signin", formAction, pageData{
		Title:       "Sign in",
		Problem:     problem,
		Action:      pathAuthorize,
		RequestID:   id,
		ClientID:    req.clientID,
		RedirectURI: req.redirectURI,
		Resource:    req.resource,
		State:       req.state,
		Requested:   req.requested,
		signInForm:  form,
	})
}

// renderError writes the error page: for what must not, or cannot, go back
// to the client.
func (is *issuer) renderError(w http.ResponseWriter, status int, problem string) {
	is.renderPage(w, status, "error", "'none'", pageData{Title: "Sign-in refused", Problem: problem})
}

func (is *issuer) renderPage(w http.ResponseWriter, status int, name, formAction string, data pageData) {
	data.Style = template.CSS(pageStyle)
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		is.logf("rendering the %s page: %v", name, err)
		http.Error(w, "devissuer: could not render the page", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	h.Set("Content-Security-Policy", strings.Join([]string{
		"default-src 'none'",
		"style-src " + pageStyleSource,
		"form-action " + formAction,
		"frame-ancestors 'none'",
		"base-uri 'none'",
	}, "; "))
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin") // browsers then send Origin on the form's own POST; "no-referrer" makes it "null"
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}
