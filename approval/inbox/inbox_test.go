package inbox_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/internal/canonjson"
	"github.com/agnara-go/agnara/policy"
)

// store is a real SQLite approval store in a temporary directory.
func store(t *testing.T) *approval.SQLiteStore {
	t.Helper()
	// A clock a second further on each reading: approvals made one after
	// the other are in order.
	var tick atomic.Int64
	start := time.Now()
	clock := func() time.Time { return start.Add(time.Duration(tick.Add(1)) * time.Second) }
	s, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), &approval.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// prepare records a pending approval requested by requester with args.
func prepare(t *testing.T, s approval.Store, requester, summary, args string) approval.Approval {
	t.Helper()
	digest, err := canonjson.Digest([]byte(args))
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Prepare(context.Background(), approval.Intent{
		Binding: approval.Binding{Tool: "gateway.notes_create", ID: "notes", Revision: "sha256:abc", ScopeID: "notes", ScopeRevision: "1",
			Effect: approval.EffectWrite},
		PrincipalID: requester, Arguments: json.RawMessage(args), ArgumentsDigest: digest,
		IdempotencyKey: "key-" + summary + requester, Summary: summary,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// visitor is a browser-like client with a cookie jar, not following
// redirects.
func visitor(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func get(t *testing.T, c *http.Client, u string) (int, http.Header, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func post(t *testing.T, c *http.Client, u string, form url.Values, header map[string]string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func devInbox(t *testing.T, s inbox.Store, approver string) string {
	t.Helper()
	h, err := inbox.New(context.Background(), s, inbox.Options{DevApprover: approver, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestInboxListsAndDecides(t *testing.T) {
	s := store(t)
	hostile := `{"name":"<script>alert(1)</script>","note":"\"quoted\" & <b>bold</b>"}`
	prepare(t, s, "carol", "Older request", `{"x":1}`)
	a := prepare(t, s, "bob", "Create notes", hostile)
	base := devInbox(t, s, "alice")
	c := visitor(t)

	status, h, body := get(t, c, base+"/")
	if status != 200 || !strings.Contains(body, `href="/approvals/`+a.ID+`"`) || !strings.Contains(body, "Create notes") {
		t.Fatalf("inbox: %d\n%s", status, body)
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if !strings.Contains(body, "Development mode.") || !strings.Contains(body, `id="dev-banner"`) {
		t.Error("the inbox does not say it runs in development mode")
	}
	if strings.Index(body, "Create notes") > strings.Index(body, "Older request") {
		t.Error("pending approvals are not newest first")
	}
	for _, c := range c.Jar.Cookies(mustURL(t, base)) {
		if c.Name == "agnara_inbox" && c.Value == "" {
			t.Error("empty session cookie")
		}
	}

	status, _, body = get(t, c, base+"/approvals/"+a.ID)
	if status != 200 {
		t.Fatalf("approval page: %d", status)
	}
	// The arguments are pretty-printed and escaped: untrusted text.
	if strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(body, "\n  &#34;name&#34;") {
		t.Errorf("arguments are not escaped and indented:\n%s", body)
	}
	for _, want := range []string{"gateway.notes_create", "sha256:abc", `id="requester">bob`, `<label for="note">`, `id="approve"`, `id="reject"`} {
		if !strings.Contains(body, want) {
			t.Errorf("approval page lacks %q", want)
		}
	}
	token := csrfField.FindStringSubmatch(body)
	if token == nil {
		t.Fatal("no token in the form")
	}

	// Without the page's token: 403, and nothing changes.
	status, _, _ = post(t, c, base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}}, nil)
	if status != http.StatusForbidden {
		t.Errorf("POST without the token: %d, want 403", status)
	}
	// From another site (as a browser marks it): 403.
	status, _, _ = post(t, c, base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token[1]}},
		map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"})
	if status != http.StatusForbidden {
		t.Errorf("cross-site POST: %d, want 403", status)
	}
	// A client without the session: 403.
	status, _, _ = post(t, visitor(t), base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token[1]}}, nil)
	if status != http.StatusForbidden {
		t.Errorf("POST without the session: %d, want 403", status)
	}
	if got, _ := s.Get(context.Background(), a.ID); got.State != approval.StatePending {
		t.Fatalf("a refused POST changed the approval: %s", got.State)
	}

	status, h, _ = post(t, c, base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "note": {"ok <3"}, "csrf": {token[1]}}, nil)
	if status != http.StatusSeeOther || h.Get("Location") != "/approvals/"+a.ID+"?done=approved" {
		t.Fatalf("approve: %d %v", status, h)
	}
	got, _ := s.Get(context.Background(), a.ID)
	if got.State != approval.StateApproved || got.DecidedBy != "alice" || got.Note != "ok <3" {
		t.Errorf("after approving: %+v", got)
	}
	_, _, body = get(t, c, base+"/approvals/"+a.ID+"?done=approved")
	if !strings.Contains(body, `id="flash"`) || !strings.Contains(body, `id="state">approved`) || strings.Contains(body, `id="approve"`) {
		t.Errorf("after approving, the page:\n%s", body)
	}
	// Deciding again: 409, with the reason.
	status, _, body = post(t, c, base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"reject"}, "csrf": {token[1]}}, nil)
	if status != http.StatusConflict || !strings.Contains(body, "decided already") {
		t.Errorf("deciding twice: %d", status)
	}
}

func TestInboxRefusesSelfApproval(t *testing.T) {
	s := store(t)
	a := prepare(t, s, "Alice", "Her own request", `{}`)
	base := devInbox(t, s, "alice")
	c := visitor(t)
	_, _, body := get(t, c, base+"/approvals/"+a.ID)
	if !strings.Contains(body, "another approver must decide it") {
		t.Error("the page does not warn the requester")
	}
	token := csrfField.FindStringSubmatch(body)
	status, _, body := post(t, c, base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token[1]}}, nil)
	if status != http.StatusForbidden || !strings.Contains(body, "You asked for this write") {
		t.Errorf("self-approval: %d", status)
	}
	if got, _ := s.Get(context.Background(), a.ID); got.State != approval.StatePending {
		t.Errorf("state %s", got.State)
	}
}

func TestInboxRecordsAnUnknownEffect(t *testing.T) {
	s := store(t)
	a := prepare(t, s, "bob", "Lost write", `{}`)
	ctx := context.Background()
	approver := approvalPrincipal("carol")
	if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, a.ID, a.Intent.Binding); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectUnknown, Reason: "mcp_timeout"}); err != nil {
		t.Fatal(err)
	}
	base := devInbox(t, s, "alice")
	c := visitor(t)
	_, _, body := get(t, c, base+"/approvals/"+a.ID)
	if !strings.Contains(body, `id="record"`) || !strings.Contains(body, "mcp_timeout") || !strings.Contains(body, `<label for="evidence">`) {
		t.Fatalf("the page offers no way to record the effect:\n%s", body)
	}
	token := csrfField.FindStringSubmatch(body)
	status, _, _ := post(t, c, base+"/approvals/"+a.ID+"/reconcile", url.Values{"effect": {"committed"}, "csrf": {token[1]}}, nil)
	if status != http.StatusBadRequest {
		t.Errorf("without evidence: %d, want 400", status)
	}
	status, _, _ = post(t, c, base+"/approvals/"+a.ID+"/reconcile", url.Values{"effect": {"committed"}, "evidence": {"read back note 7"}, "csrf": {token[1]}}, nil)
	if status != http.StatusSeeOther {
		t.Fatalf("record: %d", status)
	}
	got, _ := s.Get(ctx, a.ID)
	if got.Reconciliation == nil || got.Reconciliation.Effect != approval.EffectCommitted || got.Reconciliation.By != "alice" || got.Receipt.Effect != approval.EffectUnknown {
		t.Errorf("after recording: %+v %+v", got.Reconciliation, got.Receipt)
	}
}

func TestInboxStreamsChanges(t *testing.T) {
	s := store(t)
	base := devInbox(t, s, "alice")
	c := visitor(t)
	get(t, c, base+"/") // the session
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/events", nil)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: %d %s", res.StatusCode, ct)
	}
	buf := make([]byte, 256)
	res.Body.Read(buf) // the first beat
	prepare(t, s, "bob", "New", `{}`)
	var seen strings.Builder
	for !strings.Contains(seen.String(), "event: changed") {
		n, err := res.Body.Read(buf)
		if err != nil {
			t.Fatalf("no change event after a new approval: %v (%q)", err, seen.String())
		}
		seen.Write(buf[:n])
	}
}

func TestNewRefusesAmbiguousOptions(t *testing.T) {
	s := store(t)
	for _, opts := range []inbox.Options{{}, {DevApprover: "alice", OIDC: &inbox.OIDC{}}, {DevApprover: " alice"}} {
		if _, err := inbox.New(context.Background(), s, opts); err == nil {
			t.Errorf("New(%+v) succeeded", opts)
		}
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func approvalPrincipal(id string) policy.Principal {
	return policy.NewPrincipal(id, []string{approval.DefaultApproverScope})
}
