package inbox_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval/inbox"
)

// TestInboxRefusesLookalikeSelfApproval: an approver whose id is a
// look-alike of the requester's (issue 28) is told on the page that the
// request is their own, and their approval is refused with 403 by the
// store's rule (approval.SamePerson), changing nothing.
func TestInboxRefusesLookalikeSelfApproval(t *testing.T) {
	for name, approver := range map[string]string{
		"Cyrillic е":          "d\u0435veloper",
		"Cyrillic о":          "devel\u043eper",
		"Greek ο":             "devel\u03bfper",
		"full-width ｄ":        "\uff44eveloper",
		"mathematical bold":   "\U0001d41d\U0001d41e\U0001d42f\U0001d41e\U0001d425\U0001d428\U0001d429\U0001d41e\U0001d42b",
		"combining accent":    "deve\u0301loper",
		"capital I for l":     "deveIoper",
		"upper case, as ever": "DEVELOPER",
	} {
		t.Run(name, func(t *testing.T) {
			s := store(t)
			a := prepare(t, s, "developer", "Their own request", `{}`)
			_, base := serveInbox(t, s, inbox.Options{DevApprover: approver})
			u := newUser(t, "")
			page := u.get(base + "/approvals/" + a.ID)
			if !strings.Contains(page.body, "another approver must decide it") {
				t.Errorf("the page does not tell %q the request is their own", approver)
			}
			got := u.post(base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {page.token(t)}}, nil)
			if got.status != http.StatusForbidden || !strings.Contains(got.body, "You asked for this write") {
				t.Errorf("approving as %q: %d, want 403 saying it is their own request:\n%s", approver, got.status, got.body)
			}
			mustPending(t, s, a.ID)
		})
	}
}
