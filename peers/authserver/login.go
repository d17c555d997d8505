package main

import (
	"html/template"
	"net/http"
	"net/url"
)

// loginPath is where op.Client.LoginURL sends the browser.
const loginPath = "/login"

// loginPage is the sign-in form. A headless browser in the tests fills
// the elements with ids username and password and clicks submit.
var loginPage = template.Must(template.New("login").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in</title></head>
<body>
<h1>Sign in</h1>
{{if .Error}}<p id="error" role="alert">{{.Error}}</p>{{end}}
<form id="login" method="post" action="` + loginPath + `">
<input type="hidden" name="authRequestID" value="{{.ID}}">
<p><label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" value="{{.Username}}" autofocus></p>
<p><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password"></p>
<p><button id="submit" type="submit">Sign in</button></p>
</form>
</body>
</html>
`))

// login serves the login page: GET shows the form for an authorization
// request, POST checks the password and, when it is right, completes the
// request and sends the browser back to zitadel's callback, which
// redirects to the client with the code.
type login struct {
	storage  *Storage
	callback string // the absolute URL of the authorize callback endpoint
}

// loginForm is what loginPage shows.
type loginForm struct {
	ID, Username, Error string
}

// ServeHTTP implements http.Handler.
func (l *login) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	id := r.Form.Get("authRequestID")
	if _, err := l.storage.AuthRequestByID(r.Context(), id); err != nil {
		http.Error(w, "unknown or expired authorization request", http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodGet:
		render(w, http.StatusOK, loginForm{ID: id})
	case http.MethodPost:
		username := r.PostForm.Get("username")
		subject, ok := l.storage.checkPassword(username, r.PostForm.Get("password"))
		if !ok {
			render(w, http.StatusUnauthorized, loginForm{ID: id, Username: username, Error: "Invalid username or password."})
			return
		}
		if err := l.storage.completeAuthRequest(id, subject); err != nil {
			http.Error(w, "unknown or expired authorization request", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, l.callback+"?"+url.Values{"id": {id}}.Encode(), http.StatusFound)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// render writes the login page.
func render(w http.ResponseWriter, status int, f loginForm) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = loginPage.Execute(w, f)
}
