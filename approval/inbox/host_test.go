package inbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval/inbox"
)

// TestDevInboxAnswersOnlyLoopbackNames is issue 28's DNS rebinding
// reproduction: a page on evil.example whose name re-resolves to 127.0.0.1
// reaches the development inbox with Host evil.example:PORT and an Origin
// that agrees with it, so the cross-origin check passes. The inbox refuses
// it with 421 before anything else: no session, no page, no token, and no
// decision even with a live session's cookie and token. Loopback names are
// answered.
func TestDevInboxAnswersOnlyLoopbackNames(t *testing.T) {
	s := store(t)
	a := prepare(t, s, "bob", "Create notes", `{}`)
	in, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	port := mustURL(t, base).Port()
	rebound := "evil.example:" + port

	for _, path := range []string{"/", "/approvals/" + a.ID, "/static/inbox.css", "/login", "/nowhere"} {
		got := newUser(t, rebound).get(base + path)
		if got.status != http.StatusMisdirectedRequest || got.cookies["agnara_inbox"] != nil || csrfField.MatchString(got.body) || strings.Contains(got.body, a.ID) {
			t.Errorf("GET %s as %s: %d, cookies %v:\n%s", path, rebound, got.status, got.header["Set-Cookie"], got.body)
		}
	}
	if n := in.Sessions(); n != 0 {
		t.Errorf("%d sessions made for a rebound name, want none", n)
	}

	// Even with a session and its token (the strongest case: the page had
	// them some other way), the decision is refused and nothing changes.
	alice := newUser(t, "")
	token := alice.get(base + "/approvals/" + a.ID).token(t)
	alice.host = rebound
	got := alice.post(base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token}},
		map[string]string{"Origin": "http://" + rebound, "Sec-Fetch-Site": "same-origin"})
	if got.status != http.StatusMisdirectedRequest || got.header.Get("Location") != "" {
		t.Errorf("the rebound decision: %d %v, want 421", got.status, got.header)
	}
	mustPending(t, s, a.ID)
	// Nor can it watch the store's changes (last: a stream answered by
	// mistake ends only at the request's deadline).
	if got := alice.get(base + "/events"); got.status != http.StatusMisdirectedRequest {
		t.Errorf("GET /events as %s: %d, want 421", rebound, got.status)
	}
	alice.host = ""

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "[::1]:" + port, "LOCALHOST:" + port} {
		got := newUser(t, host).get(base + "/")
		if got.status != http.StatusOK || got.cookies["agnara_inbox"] == nil {
			t.Errorf("Host %s: %d, cookies %v; want the inbox with a session", host, got.status, got.header["Set-Cookie"])
		}
	}
}

// TestSignInInboxAnswersOnlyItsPublicName: an inbox whose approvers sign
// in answers the host and port of its callback URL, its public name, and
// nothing else — not even the loopback address it is served on behind a
// proxy. Refused requests start no sign-in and finish none.
func TestSignInInboxAnswersOnlyItsPublicName(t *testing.T) {
	const public = "https://approvals.example.com"
	issuer := startDevIssuer(t, public+"/callback")
	_, base, _ := serveSignInInbox(t, store(t), issuer, public, true)
	served := mustURL(t, base).Host

	for _, host := range []string{"approvals.example.com", "approvals.example.com:443", "Approvals.Example.COM"} {
		if got := newUser(t, host).get(base + "/"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/login?next=/" {
			t.Errorf("Host %s: %d to %q, want the redirect to sign in", host, got.status, got.header.Get("Location"))
		}
	}
	for _, host := range []string{served, "localhost:" + mustURL(t, base).Port(), "evil.example", "approvals.example.com:8443", "approvals.example.com.", "evil.approvals.example.com"} {
		for _, path := range []string{"/", "/login?next=/", "/callback?code=x&state=y"} {
			got := newUser(t, host).get(base + path)
			if got.status != http.StatusMisdirectedRequest || len(got.cookies) != 0 || got.header.Get("Location") != "" {
				t.Errorf("GET %s as %s: %d to %q, cookies %v; want 421 and nothing else", path, host, got.status, got.header.Get("Location"), got.header["Set-Cookie"])
			}
		}
	}

	// The whole sign-in works under the public name.
	alice := newUser(t, "approvals.example.com")
	if got, _ := walkSignIn(t, alice, base, issuer, "?next=/", "alice"); got.status != http.StatusSeeOther || got.header.Get("Location") != "/" {
		t.Fatalf("callback: %d to %q\n%s", got.status, got.header.Get("Location"), got.body)
	}
	if got := alice.get(base + "/"); got.status != http.StatusOK || !strings.Contains(got.body, `id="approver">alice`) {
		t.Fatalf("signed in under the public name: %d\n%s", got.status, got.body)
	}
	// Its session, carried to another name, is refused there.
	alice.host = served
	if got := alice.get(base + "/"); got.status != http.StatusMisdirectedRequest {
		t.Errorf("the session under %s: %d, want 421", served, got.status)
	}
}
