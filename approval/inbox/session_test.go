package inbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval/inbox"
)

// TestTokenIsTheSessions: a decision carries the token of the page the
// inbox rendered for the same session. Another session's token, a token
// one character off, an empty one and none at all are refused with 403,
// and nothing changes; the session's own token decides.
func TestTokenIsTheSessions(t *testing.T) {
	s := store(t)
	a := prepare(t, s, "bob", "Create notes", `{}`)
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	alice, other := newUser(t, ""), newUser(t, "")
	own := alice.get(base + "/approvals/" + a.ID).token(t)
	theirs := other.get(base + "/approvals/" + a.ID).token(t)
	if own == theirs || alice.cookies["agnara_inbox"].Value == other.cookies["agnara_inbox"].Value {
		t.Fatal("two visitors got one session or one token")
	}
	offByOne := []byte(own)
	offByOne[len(offByOne)-1] ^= 1
	decide := base + "/approvals/" + a.ID + "/decide"
	for _, tc := range []struct {
		name string
		form url.Values
	}{
		{"another session's token", url.Values{"action": {"approve"}, "csrf": {theirs}}},
		{"a token one character off", url.Values{"action": {"approve"}, "csrf": {string(offByOne)}}},
		{"an empty token", url.Values{"action": {"approve"}, "csrf": {""}}},
		{"no token", url.Values{"action": {"approve"}}},
		{"the token in the query instead", url.Values{"action": {"approve"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := decide
			if strings.Contains(tc.name, "query") {
				u += "?csrf=" + url.QueryEscape(own)
			}
			got := alice.post(u, tc.form, nil)
			if got.status != http.StatusForbidden || !strings.Contains(got.body, "did not come from an inbox page") {
				t.Errorf("%d, want 403 saying it did not come from an inbox page:\n%s", got.status, got.body)
			}
			mustPending(t, s, a.ID)
		})
	}
	// The other session's own token is its own, not alice's.
	if got := other.post(decide, url.Values{"action": {"approve"}, "csrf": {own}}, nil); got.status != http.StatusForbidden {
		t.Errorf("alice's token in the other session: %d, want 403", got.status)
	}
	mustPending(t, s, a.ID)
	if got := alice.post(decide, url.Values{"action": {"approve"}, "csrf": {own}}, nil); got.status != http.StatusSeeOther {
		t.Fatalf("the session's own token: %d, want 303:\n%s", got.status, got.body)
	}
}

// TestDevSessionsAreMadeByPageViews: in development mode a visit to a page
// (a GET) makes a session; a POST never does — neither one from this site
// without a session, nor one from another site — so that a POST always
// needs a page the inbox rendered first.
func TestDevSessionsAreMadeByPageViews(t *testing.T) {
	s := store(t)
	a := prepare(t, s, "bob", "Create notes", `{}`)
	in, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	for _, tc := range []struct {
		name   string
		path   string
		form   url.Values
		header map[string]string
	}{
		{"decide, from this site", "/approvals/" + a.ID + "/decide", url.Values{"action": {"approve"}, "csrf": {"guess"}}, nil},
		{"decide, same-origin as a browser marks it", "/approvals/" + a.ID + "/decide", url.Values{"action": {"approve"}, "csrf": {"guess"}},
			map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": base}},
		{"decide, from another site", "/approvals/" + a.ID + "/decide", url.Values{"action": {"approve"}, "csrf": {"guess"}},
			map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}},
		{"reconcile", "/approvals/" + a.ID + "/reconcile", url.Values{"effect": {"committed"}, "evidence": {"x"}}, nil},
		{"logout", "/logout", url.Values{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := newUser(t, "").post(base+tc.path, tc.form, tc.header)
			if got.status != http.StatusForbidden {
				t.Errorf("%d, want 403", got.status)
			}
			if c := got.cookies["agnara_inbox"]; c != nil {
				t.Errorf("a POST without a session was given one: %v", c)
			}
			if n := in.Sessions(); n != 0 {
				t.Errorf("%d sessions after a POST, want none", n)
			}
			mustPending(t, s, a.ID)
		})
	}
	v := newUser(t, "")
	if got := v.get(base + "/"); got.status != http.StatusOK || got.cookies["agnara_inbox"] == nil || in.Sessions() != 1 {
		t.Fatalf("a page view: %d, cookie %v, %d sessions; want 200, a session cookie, 1 session", got.status, got.cookies["agnara_inbox"], in.Sessions())
	}
	// The session a page view made is kept: the next view does not make
	// another.
	if got := v.get(base + "/"); got.cookies["agnara_inbox"] != nil || in.Sessions() != 1 {
		t.Errorf("a second view: cookie %v, %d sessions; want the first session kept", got.cookies["agnara_inbox"], in.Sessions())
	}
}

// TestSessionsExpire: a session lasts SessionTTL by the inbox's clock; at
// its end its token decides nothing, and a page view starts a new session
// with a new token.
func TestSessionsExpire(t *testing.T) {
	s := store(t)
	first := prepare(t, s, "bob", "First", `{}`)
	second := prepare(t, s, "bob", "Second", `{}`)
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := &testClock{now: start}
	in, base := serveInbox(t, s, inbox.Options{DevApprover: "alice", SessionTTL: time.Hour, Now: c.Now})
	alice := newUser(t, "")
	token := alice.get(base + "/approvals/" + first.ID).token(t)
	cookie := alice.cookies["agnara_inbox"].Value

	c.set(start.Add(time.Hour - time.Second))
	if got := alice.post(base+"/approvals/"+first.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token}}, nil); got.status != http.StatusSeeOther {
		t.Fatalf("a second before the end: %d, want 303 (the session is live):\n%s", got.status, got.body)
	}

	c.set(start.Add(time.Hour))
	got := alice.post(base+"/approvals/"+second.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token}}, nil)
	if got.status != http.StatusForbidden {
		t.Errorf("at the end: %d, want 403 (the session is over):\n%s", got.status, got.body)
	}
	mustPending(t, s, second.ID)
	if n := in.Sessions(); n != 0 {
		t.Errorf("%d sessions after the only one ended, want none", n)
	}
	page := alice.get(base + "/approvals/" + second.ID)
	if c := page.cookies["agnara_inbox"]; c == nil || c.Value == cookie {
		t.Fatalf("after the end a page view set %v, want a new session", c)
	}
	if page.token(t) == token {
		t.Error("the new session has the old token")
	}
}

// TestSessionCookieFlags: the session cookie is HttpOnly (no script reads
// it), SameSite=Lax (no other site's POST carries it), Path=/ (every page),
// lasts SessionTTL, and is Secure exactly when SecureCookies says so (the
// inbox is served over HTTPS).
func TestSessionCookieFlags(t *testing.T) {
	for _, secure := range []bool{false, true} {
		_, base := serveInbox(t, store(t), inbox.Options{DevApprover: "alice", SecureCookies: secure, SessionTTL: 90 * time.Minute})
		got := newUser(t, "").get(base + "/")
		c := got.cookies["agnara_inbox"]
		if c == nil {
			t.Fatalf("no session cookie: %v", got.header["Set-Cookie"])
		}
		if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/" || c.Secure != secure || c.MaxAge != 5400 || c.Domain != "" || len(c.Value) < 43 {
			t.Errorf("SecureCookies %v: %q, want HttpOnly; SameSite=Lax; Path=/; Max-Age=5400; Secure %v; no Domain; 256 random bits", secure, got.header.Get("Set-Cookie"), secure)
		}
	}
}
