package inbox_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

// TestConnectionsPageShowsAndRevokesOnlyYourOwn: the connections page
// lists the signed-in person's grants and nobody else's; Revoke deletes
// theirs, for the gateway's next call; a POST naming another person's
// grant changes nothing, nor one without the page's token.
func TestConnectionsPageShowsAndRevokesOnlyYourOwn(t *testing.T) {
	s := store(t)
	ctx := context.Background()
	bob, carol := policy.NewPrincipal("bob", nil), policy.NewPrincipal("carol", nil)
	for _, c := range []approval.Connection{
		{Principal: bob, Upstream: "orders", ClientID: "agent", Scopes: []string{"orders.read"}, Sealed: []byte("bob's")},
		{Principal: carol, Upstream: "orders", ClientID: "agent", Scopes: []string{"orders.read"}, Sealed: []byte("carol's")},
		{Principal: carol, Upstream: "files", ClientID: "agent", Sealed: []byte("carol's files")},
	} {
		if err := s.SaveConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	base := devInbox(t, s, "bob")
	c := visitor(t)
	status, _, body := get(t, c, base+"/connections")
	if status != http.StatusOK || !strings.Contains(body, `data-upstream="orders"`) || strings.Contains(body, `data-upstream="files"`) {
		t.Fatalf("bob's connections page (%d):\n%s", status, body)
	}
	token := csrfField.FindStringSubmatch(body)
	if token == nil {
		t.Fatal("no csrf token on the page")
	}
	// Without the page's token: refused, nothing changes.
	if status, _, _ := post(t, c, base+"/connections/revoke", url.Values{"upstream": {"orders"}, "client": {"agent"}}, nil); status != http.StatusForbidden {
		t.Errorf("a revoke without the token: %d, want 403", status)
	}
	// Carol's grant named from bob's session: it is bob's grant that the
	// form names, and bob has none for files.
	post(t, c, base+"/connections/revoke", url.Values{"upstream": {"files"}, "client": {"agent"}, "csrf": {token[1]}}, nil)
	if _, err := s.LoadConnection(ctx, carol, "files", "agent"); err != nil {
		t.Errorf("bob's session revoked carol's grant: %v", err)
	}
	status, h, _ := post(t, c, base+"/connections/revoke", url.Values{"upstream": {"orders"}, "client": {"agent"}, "csrf": {token[1]}}, nil)
	if status != http.StatusSeeOther || h.Get("Location") != "/connections?done=revoked" {
		t.Fatalf("revoke: %d %s", status, h.Get("Location"))
	}
	if _, err := s.LoadConnection(ctx, bob, "orders", "agent"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("bob's grant after revoking it: %v", err)
	}
	if _, err := s.LoadConnection(ctx, carol, "orders", "agent"); err != nil {
		t.Errorf("carol's grant after bob revoked his: %v", err)
	}
	if _, _, body := get(t, c, base+"/connections?done=revoked"); !strings.Contains(body, `id="connections-empty"`) || !strings.Contains(body, "Revoked.") {
		t.Errorf("bob's page after revoking:\n%s", body)
	}
}
