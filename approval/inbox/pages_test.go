package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/policy"
)

// TestCancel: Cancel withdraws a pending approval, and an approved one
// before it runs, under the store's rules, with the page's token like
// Approve and Reject; without the token, or from another site, nothing
// changes; a decided approval offers no Cancel and refuses one.
func TestCancel(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	pending := prepare(t, s, "bob", "Pending", `{}`)
	approved := prepare(t, s, "bob", "Approved", `{}`)
	if _, err := s.Approve(ctx, approved.ID, policy.NewPrincipal("dave", []string{approval.DefaultApproverScope}), ""); err != nil {
		t.Fatal(err)
	}
	rejected := prepare(t, s, "bob", "Rejected", `{}`)
	if _, err := s.Reject(ctx, rejected.ID, policy.NewPrincipal("dave", []string{approval.DefaultApproverScope}), ""); err != nil {
		t.Fatal(err)
	}
	other := prepare(t, s, "bob", "Other", `{}`) // a page with the session's token
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	alice := newUser(t, "")
	cancel := func(id string, form url.Values, header map[string]string) answer {
		return alice.post(base+"/approvals/"+id+"/decide", form, header)
	}

	page := alice.get(base + "/approvals/" + pending.ID)
	token := page.token(t)
	for _, tc := range []struct {
		name   string
		form   url.Values
		header map[string]string
	}{
		{"without the token", url.Values{"action": {"cancel"}}, nil},
		{"from another site", url.Values{"action": {"cancel"}, "csrf": {token}}, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}},
	} {
		if got := cancel(pending.ID, tc.form, tc.header); got.status != http.StatusForbidden {
			t.Errorf("cancel %s: %d, want 403", tc.name, got.status)
		}
		mustPending(t, s, pending.ID)
	}
	for _, a := range []approval.Approval{pending, approved} {
		page := alice.get(base + "/approvals/" + a.ID)
		if !strings.Contains(page.body, `id="cancel"`) {
			t.Fatalf("%s offers no Cancel:\n%s", a.Intent.Summary, page.body)
		}
		got := cancel(a.ID, url.Values{"action": {"cancel"}, "csrf": {page.token(t)}, "note": {"asked twice"}}, nil)
		if got.status != http.StatusSeeOther || got.header.Get("Location") != "/approvals/"+a.ID+"?done=canceled" {
			t.Fatalf("cancel %s: %d to %q\n%s", a.Intent.Summary, got.status, got.header.Get("Location"), got.body)
		}
		after, err := s.Get(ctx, a.ID)
		if err != nil || after.State != approval.StateCanceled || after.DecidedBy != "alice" || after.Note != "asked twice" {
			t.Fatalf("after cancel %s: %s by %q (%q), %v", a.Intent.Summary, after.State, after.DecidedBy, after.Note, err)
		}
		if flash := alice.get(base + got.header.Get("Location")); !strings.Contains(flash.body, "Canceled. It will not run") || !strings.Contains(flash.body, "<dt>Canceled by</dt>") {
			t.Errorf("after cancel the page says:\n%s", flash.body)
		}
	}
	if page := alice.get(base + "/approvals/" + rejected.ID); strings.Contains(page.body, `id="cancel"`) {
		t.Error("a rejected approval offers Cancel")
	}
	token = alice.get(base + "/approvals/" + other.ID).token(t)
	if got := cancel(rejected.ID, url.Values{"action": {"cancel"}, "csrf": {token}}, nil); got.status != http.StatusConflict {
		t.Errorf("cancel a rejected approval: %d, want 409", got.status)
	}
}

var listed = regexp.MustCompile(`data-id="(apv_[a-z0-9]+)"`)

// TestPagesPastTheNewest: with more approvals than a page holds, the inbox
// links to the next page, which starts after the last one shown; every
// approval is listed once; a cursor that names no approval is 404.
func TestPagesPastTheNewest(t *testing.T) {
	s := store(t)
	const n = 205
	want := map[string]bool{}
	for i := range n {
		a := prepare(t, s, "bob", fmt.Sprintf("Note %d", i), fmt.Sprintf(`{"n":%d}`, i))
		want[a.ID] = true
	}
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	alice := newUser(t, "")
	first := alice.get(base + "/")
	ids := listed.FindAllStringSubmatch(first.body, -1)
	older := regexp.MustCompile(`id="older" href="/\?before=(apv_[a-z0-9]+)"`).FindStringSubmatch(first.body)
	if len(ids) != 200 || older == nil || older[1] != ids[len(ids)-1][1] {
		t.Fatalf("the first page lists %d and links to %v, want 200 and the next page after the last", len(ids), older)
	}
	second := alice.get(base + "/?before=" + older[1])
	more := listed.FindAllStringSubmatch(second.body, -1)
	if second.status != http.StatusOK || len(more) != 5 || strings.Contains(second.body, `id="older"`) || !strings.Contains(second.body, "The newest approvals") {
		t.Fatalf("the second page: %d, %d listed, want 5 and no further page\n%s", second.status, len(more), second.body)
	}
	for _, m := range append(ids, more...) {
		if !want[m[1]] {
			t.Errorf("%s listed twice, or never prepared", m[1])
		}
		delete(want, m[1])
	}
	if len(want) != 0 {
		t.Errorf("%d approvals never listed", len(want))
	}
	if got := alice.get(base + "/?before=apv_nosuchapprovalxxxxx"); got.status != http.StatusNotFound {
		t.Errorf("a page after an unknown id: %d, want 404", got.status)
	}
}

// TestListsSummarizeArguments: each row of the lists says what its call
// is for, from its arguments, escaped; so that two calls of one tool read
// differently.
func TestListsSummarizeArguments(t *testing.T) {
	s := store(t)
	prepare(t, s, "bob", "Create notes", `{"name":"<script>alert(1)</script>","n":1}`)
	done := prepare(t, s, "bob", "Create notes again", `{"name":"Grace","n":2}`)
	if _, err := s.Reject(context.Background(), done.ID, policy.NewPrincipal("dave", []string{approval.DefaultApproverScope}), ""); err != nil {
		t.Fatal(err)
	}
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	body := newUser(t, "").get(base + "/").body
	for _, want := range []string{
		`<p class="args" title="Arguments">name=&#34;&lt;script&gt;alert(1)&lt;/scri…, n=1</p>`,
		`<p class="args" title="Arguments">name=&#34;Grace&#34;, n=2</p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the list lacks %s:\n%s", want, body)
		}
	}
}

// TestListsTellCallsApart: calls of one tool that differ only deep in
// their arguments read differently in the list, by the leaf that differs,
// escaped.
func TestListsTellCallsApart(t *testing.T) {
	s := store(t)
	for _, name := range []string{"Ada", "<b>Grace</b>"} {
		prepare(t, s, "bob", "Create notes for "+name, `{"entities":[{"entityType":"person","name":`+strconv.Quote(name)+`}]}`)
	}
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	body := newUser(t, "").get(base + "/").body
	for _, want := range []string{
		`title="What sets it apart from the other calls of this tool here">entities[0].name=&#34;Ada&#34;</p>`,
		`title="What sets it apart from the other calls of this tool here">entities[0].name=&#34;&lt;b&gt;Grace&lt;/b&gt;&#34;</p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the list lacks %s:\n%s", want, body)
		}
	}
}

// TestReceiptResultReadsLikeTheArguments: a committed write's result, an
// MCP result whose text block holds JSON, is shown indented on the
// approval's page, decoded and escaped, not as JSON inside JSON.
func TestReceiptResultReadsLikeTheArguments(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	a := prepare(t, s, "bob", "Create notes", `{"entities":[{"name":"Ada"}]}`)
	if _, err := s.Approve(ctx, a.ID, policy.NewPrincipal("dave", []string{approval.DefaultApproverScope}), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, a.ID, a.Intent.Binding); err != nil {
		t.Fatal(err)
	}
	text, _ := json.Marshal(`[{"name":"Ada","observations":["<script>alert(1)</script>"]}]`)
	result := `{"content":[{"type":"text","text":` + string(text) + `}],"structuredContent":{"created":1}}`
	if _, err := s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectCommitted, Result: json.RawMessage(result)}); err != nil {
		t.Fatal(err)
	}
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	body := newUser(t, "").get(base + "/approvals/" + a.ID).body
	m := regexp.MustCompile(`(?s)<dd id="result">(.*?)</dd>`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the page shows no result:\n%s", body)
	}
	want := `<p class="muted small">Text, JSON indented</p><pre class="arguments" tabindex="0">[
  {
    &#34;name&#34;: &#34;Ada&#34;,
    &#34;observations&#34;: [
      &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;
    ]
  }
]</pre><p class="muted small">Structured content</p><pre class="arguments" tabindex="0">{
  &#34;created&#34;: 1
}</pre>`
	if m[1] != want {
		t.Errorf("the result reads\n%s\nwant\n%s", m[1], want)
	}
}
