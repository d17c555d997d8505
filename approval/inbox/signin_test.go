package inbox_test

import (
	"net/http"
	"net/url"
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
