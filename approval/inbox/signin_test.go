package inbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignInReturnsOnlyToThisSite is issue 28's open redirect: the path a
// sign-in returns to (login's next) must be a path on this site. Each
// value below is what the inbox receives (sent percent-encoded); every
// known way of leaving the site ends at "/", at the HTTP level: the
// Location the callback answers with.
func TestSignInReturnsOnlyToThisSite(t *testing.T) {
	issuer := startDevIssuer(t)
	_, base, _ := serveSignInInbox(t, store(t), issuer, "", false)
	tests := []struct {
		name, next, want string
	}{
		{"root", "/", "/"},
		{"a path and a query", "/requests/abc?x=1", "/requests/abc?x=1"},
		{"an approval", "/approvals/apv_123", "/approvals/apv_123"},
		{"a local path of 512 bytes", "/" + strings.Repeat("a", 511), "/" + strings.Repeat("a", 511)},
		{"a local path longer than the sign-in's cookie keeps", "/" + strings.Repeat("a", 600), "/"},
		{"a percent-encoded character", "/approvals/apv%5F123", "/approvals/apv%5F123"},
		{"empty", "", "/"},
		{"TAB after the slash (the issue's /%09/)", "/\t/evil.example/x", "/"},
		{"CR", "/\r/evil.example", "/"},
		{"LF", "/\n/evil.example", "/"},
		{"NUL", "/\x00/evil.example", "/"},
		{"C0 U+0001", "/\x01/evil.example", "/"},
		{"ESC", "/\x1b/evil.example", "/"},
		{"C0 U+001F", "/\x1f/evil.example", "/"},
		{"DEL", "/\x7f/evil.example", "/"},
		{"C1 NEL", "/\u0085/evil.example", "/"},
		{"trailing TAB", "/approvals/x\t", "/"},
		{"leading TAB", "\t//evil.example", "/"},
		{"//", "//evil.example/x", "/"},
		{"/\\", "/\\evil.example/x", "/"},
		{"\\\\", "\\\\evil.example/x", "/"},
		{"backslashes later", "/approvals\\..\\..\\\\evil.example", "/"},
		{"/%09/ percent-encoded once more", "/%09/evil.example/x", "/"},
		{"/%2F/", "/%2F/evil.example/x", "/"},
		{"/%2f/ in lower case", "/%2f/evil.example/x", "/"},
		{"%2F%2F", "%2F%2Fevil.example/x", "/"},
		{"/%5C", "/%5Cevil.example/x", "/"},
		{"/%00", "/%00/evil.example", "/"},
		{"an invalid escape", "/%zz", "/"},
		{"https:", "https://evil.example/x", "/"},
		{"https: without slashes", "https:evil.example", "/"},
		{"javascript:", "javascript:alert(document.domain)", "/"},
		{"a scheme in upper case", "HTTPS://evil.example", "/"},
		{"///", "///evil.example/x", "/"},
		{"leading space then //", " //evil.example/x", "/"},
		{"space inside", "/ /evil.example", "/"},
		{"/.//evil", "/.//evil.example/x", "/"},
		{"dot segment", "/./evil.example", "/"},
		{"dot-dot segment", "/../evil.example", "/"},
		{"user info", "//user@evil.example", "/"},
		{"U+2215 DIVISION SLASH", "/\u2215evil.example/x", "/"},
		{"U+FF0F FULLWIDTH SOLIDUS", "/\uff0fevil.example/x", "/"},
		{"U+2215 percent-encoded", "/%E2%88%95evil.example/x", "/"},
		{"U+FF0F percent-encoded", "/%EF%BC%8Fevil.example/x", "/"},
		{"relative", "evil.example/x", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := walkSignIn(t, newUser(t, ""), base, issuer, "?next="+url.QueryEscape(tt.next), "alice")
			if got.status != http.StatusSeeOther || got.header.Get("Location") != tt.want {
				t.Errorf("next %q: the callback answers %d, Location %q; want 303 to %q\n%s", tt.next, got.status, got.header.Get("Location"), tt.want, got.body)
			}
		})
	}
	t.Run("no next", func(t *testing.T) {
		if got, _ := walkSignIn(t, newUser(t, ""), base, issuer, "", "alice"); got.header.Get("Location") != "/" {
			t.Errorf("Location %q, want /", got.header.Get("Location"))
		}
	})
	// A page asked for without a session sends to /login with its path,
	// or with "/" when the path is not plainly local.
	for path, want := range map[string]string{
		"/approvals/apv_1":         "/login?next=/approvals/apv_1",
		"/approvals/apv%2F%2Fevil": "/login?next=/",
		"/approvals/apv%09":        "/login?next=/",
	} {
		if got := newUser(t, "").get(base + path); got.status != http.StatusSeeOther || got.header.Get("Location") != want {
			t.Errorf("GET %s signed out: %d to %q, want %q", path, got.status, got.header.Get("Location"), want)
		}
	}
}

// TestSignInCookieFlags: the sign-in's cookie (its state) is HttpOnly,
// SameSite=Lax, only for /callback, lives as long as a sign-in may take,
// and is cleared by the callback; the session cookie it then sets is
// HttpOnly, SameSite=Lax, for every page, lasts the session; logging out
// clears it and ends the session. Each is Secure exactly when
// SecureCookies says so.
func TestSignInCookieFlags(t *testing.T) {
	issuer := startDevIssuer(t)
	for _, secure := range []bool{false, true} {
		in, base, _ := serveSignInInbox(t, store(t), issuer, "", secure)
		alice := newUser(t, "")
		callback, login := walkSignIn(t, alice, base, issuer, "?next=/", "alice")
		check := func(what string, c *http.Cookie, path string, maxAge int) {
			t.Helper()
			if c == nil {
				t.Errorf("Secure %v: %s: no cookie", secure, what)
				return
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != path || c.Secure != secure || c.Domain != "" ||
				maxAge > 0 && c.MaxAge != maxAge || maxAge < 0 && c.MaxAge >= 0 {
				t.Errorf("Secure %v: %s: %s, want HttpOnly; SameSite=Lax; Path=%s; Max-Age %d; Secure %v", secure, what, c, path, maxAge, secure)
			}
		}
		check("the sign-in's cookie", login.cookies["agnara_inbox_login"], "/callback", 600)
		check("the callback clearing it", callback.cookies["agnara_inbox_login"], "/callback", -1)
		check("the session cookie", callback.cookies["agnara_inbox"], "/", 8*60*60)

		page := alice.get(base + "/")
		ended := alice.cookies["agnara_inbox"].Value
		out := alice.post(base+"/logout", url.Values{"csrf": {page.token(t)}}, nil)
		if out.status != http.StatusSeeOther || out.header.Get("Location") != "/signed-out" {
			t.Fatalf("logout: %d %v", out.status, out.header)
		}
		check("logging out", out.cookies["agnara_inbox"], "/", -1)
		if n := in.Sessions(); n != 0 {
			t.Errorf("%d sessions after logging out, want none", n)
		}
		again := newUser(t, "")
		again.cookies["agnara_inbox"] = &http.Cookie{Name: "agnara_inbox", Value: ended}
		if got := again.get(base + "/"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login?next=/" {
			t.Errorf("the ended session's cookie: %d to %q, want sign-in again", got.status, got.header.Get("Location"))
		}
	}
}
