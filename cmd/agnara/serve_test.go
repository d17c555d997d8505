package main

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/proctest"
)

// TestApprovalsServe runs `agnara approvals serve -db PATH -dev-approver
// alice` on a database with one pending approval, as an operator would:
// the inbox lists it, a POST without the page's protection is refused with
// 403, and SIGTERM stops it.
func TestApprovalsServe(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approvals.db")
	s, err := approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Prepare(context.Background(), intent(t, "k1", "gw.update_document", "carol", `{"id":42,"title":"<Q3 plan>"}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	p := proctest.StartCmd(t, proctest.Build(t, "."), "approvals", "serve", "-db", db, "-dev-approver", "alice", "-addr", "127.0.0.1:0")
	base := strings.TrimSuffix(p.URL, "/")

	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(body), "/approvals/"+a.ID) || !strings.Contains(string(body), "Development mode.") {
		t.Fatalf("inbox: %d\n%s", res.StatusCode, body)
	}
	res, err = http.PostForm(base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a POST without the page's protection: %d, want 403", res.StatusCode)
	}

	p.Signal(syscall.SIGTERM)
	if err, ok := p.Wait(10 * time.Second); !ok || err != nil {
		t.Errorf("agnara approvals serve after SIGTERM: exited %v, %v\n%s", ok, err, p.Stderr)
	}
	s, err = approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _ := s.Get(context.Background(), a.ID); got.State != approval.StatePending {
		t.Errorf("the refused POST changed the approval: %s", got.State)
	}
}

func TestApprovalsServeRefusesDevOffLoopback(t *testing.T) {
	db := sqliteDB(t)
	s := db.open(t, nil)
	s.Close()
	code, _, errOut := agnara(now, "approvals", "serve", "-db", db.loc, "-dev-approver", "alice", "-addr", "0.0.0.0:0")
	if code != 1 || !strings.Contains(errOut, "listen on a loopback address") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	code, _, errOut = agnara(now, "approvals", "serve", "-db", db.loc, "-addr", "127.0.0.1:0")
	if code != 1 || !strings.Contains(errOut, "say who may decide") {
		t.Errorf("exit %d, %q", code, errOut)
	}
}

// TestApprovalsServeAnswersOnlyItsHost is issue 28's DNS rebinding
// reproduction against the command: with -dev-approver, a request for
// another name (a page whose name re-resolves to 127.0.0.1) is refused with
// 421, even carrying a session and its token, and decides nothing; loopback
// names are served. With -issuer, the inbox answers the -redirect-url's
// host alone, and an https -redirect-url marks the cookies Secure.
func TestApprovalsServeAnswersOnlyItsHost(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approvals.db")
	s, err := approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Prepare(context.Background(), intent(t, "k1", "gw.update_document", "carol", `{"id":42}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	bin := proctest.Build(t, ".")
	noRedirects := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(method, rawURL, host string, form url.Values, cookies []*http.Cookie) (*http.Response, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var body io.Reader
		if form != nil {
			body = strings.NewReader(form.Encode())
		}
		req, _ := http.NewRequestWithContext(ctx, method, rawURL, body)
		if form != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		req.Host = host
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := noRedirects.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	t.Run("development", func(t *testing.T) {
		p := proctest.StartCmd(t, bin, "approvals", "serve", "-db", db, "-dev-approver", "alice", "-addr", "127.0.0.1:0")
		base := strings.TrimSuffix(p.URL, "/")
		served := strings.TrimPrefix(base, "http://")
		port := served[strings.LastIndex(served, ":")+1:]
		rebound := "evil.example:" + port

		res, body := send("GET", base+"/approvals/"+a.ID, rebound, nil, nil)
		if res.StatusCode != http.StatusMisdirectedRequest || len(res.Cookies()) != 0 || strings.Contains(body, `name="csrf"`) {
			t.Errorf("GET as %s: %d, cookies %v:\n%s", rebound, res.StatusCode, res.Cookies(), body)
		}
		res, body = send("GET", base+"/approvals/"+a.ID, served, nil, nil)
		token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
		if res.StatusCode != http.StatusOK || token == nil {
			t.Fatalf("GET as %s: %d\n%s", served, res.StatusCode, body)
		}
		res, _ = send("POST", base+"/approvals/"+a.ID+"/decide", rebound, url.Values{"action": {"approve"}, "csrf": {token[1]}}, res.Cookies())
		if res.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("the rebound decision: %d (Location %q), want 421", res.StatusCode, res.Header.Get("Location"))
		}
		for _, host := range []string{"localhost:" + port, "[::1]:" + port} {
			if res, _ := send("GET", base+"/", host, nil, nil); res.StatusCode != http.StatusOK {
				t.Errorf("GET as %s: %d, want 200", host, res.StatusCode)
			}
		}
		if !strings.Contains(p.Stderr.String(), "answers_host=\"loopback names\"") {
			t.Errorf("the start-up log does not say which host names it answers:\n%s", p.Stderr)
		}
	})
	s, err = approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(context.Background(), a.ID); got.State != approval.StatePending {
		t.Errorf("a refused request changed the approval: %s by %q", got.State, got.DecidedBy)
	}
	s.Close()

	t.Run("sign-in", func(t *testing.T) {
		const public = "https://approvals.example.com/callback"
		issuer := proctest.Start(t, proctest.Build(t, "../../examples/devissuer"), "-addr", "127.0.0.1:0", "-client-id", "agnara-inbox",
			"-client-secret", "inbox-secret", "-scopes", "openid "+approval.DefaultApproverScope, "-redirect-uris", public)
		t.Setenv("AGNARA_INBOX_CLIENT_SECRET", "inbox-secret")
		for _, tc := range []struct {
			redirect, host string
			secure         bool
		}{
			{public, "approvals.example.com", true},
			{"", "", false}, // the default: http on the loopback address served
		} {
			args := []string{"approvals", "serve", "-db", db, "-addr", "127.0.0.1:0", "-issuer", issuer, "-client-id", "agnara-inbox"}
			if tc.redirect != "" {
				args = append(args, "-redirect-url", tc.redirect)
			}
			p := proctest.StartCmd(t, bin, args...)
			base := strings.TrimSuffix(p.URL, "/")
			served := strings.TrimPrefix(base, "http://")
			host := cmp.Or(tc.host, served)
			res, _ := send("GET", base+"/login?next=/", host, nil, nil)
			var login *http.Cookie
			for _, c := range res.Cookies() {
				if c.Name == "agnara_inbox_login" {
					login = c
				}
			}
			if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), issuer+"/authorize?") || login == nil {
				t.Fatalf("-redirect-url %q: GET /login as %s: %d to %q, cookies %v", tc.redirect, host, res.StatusCode, res.Header.Get("Location"), res.Cookies())
			}
			if login.Secure != tc.secure || !login.HttpOnly {
				t.Errorf("-redirect-url %q: the sign-in cookie %s, want HttpOnly and Secure %v", tc.redirect, login, tc.secure)
			}
			for _, other := range []string{"evil.example", "evil.example:" + served[strings.LastIndex(served, ":")+1:], "localhost:" + served[strings.LastIndex(served, ":")+1:]} {
				if other == host {
					continue
				}
				if res, _ := send("GET", base+"/login?next=/", other, nil, nil); res.StatusCode != http.StatusMisdirectedRequest || len(res.Cookies()) != 0 {
					t.Errorf("-redirect-url %q: GET /login as %s: %d, cookies %v; want 421", tc.redirect, other, res.StatusCode, res.Cookies())
				}
			}
			if tc.redirect != "" {
				if res, _ := send("GET", base+"/", served, nil, nil); res.StatusCode != http.StatusMisdirectedRequest {
					t.Errorf("-redirect-url %q: GET / as %s, the address served: %d, want 421 (not the public name)", tc.redirect, served, res.StatusCode)
				}
			}
		}
	})
}
