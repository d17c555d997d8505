package approval_test

import (
	"context"
	"testing"

	"github.com/agnara-go/agnara/approval"
)

func testClaimChecksTheCurrentBinding(t *testing.T, b backend) {
	ctx := context.Background()
	changes := map[string]func(*approval.Binding){
		"tool":       func(b *approval.Binding) { b.Tool = "gw.delete_document" },
		"binding id": func(b *approval.Binding) { b.ID = "document-service-2" },
		"binding revision": func(b *approval.Binding) {
			b.Revision = "sha256:2222222222222222222222222222222222222222222222222222222222222222"
		},
		"scope id":                  func(b *approval.Binding) { b.ScopeID = "prod-documents" },
		"scope revoked (revision)":  func(b *approval.Binding) { b.ScopeRevision = "scope-2" },
		"effect":                    func(b *approval.Binding) { b.Effect = approval.EffectDestructive },
		"binding gone (zero value)": func(b *approval.Binding) { *b = approval.Binding{} },
	}
	for name, change := range changes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := b.fresh(t, newClock())
			a, err := s.Prepare(ctx, testIntent(t, "k", `{"id":1}`))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Approve(ctx, a.ID, approver, ""); err != nil {
				t.Fatal(err)
			}
			current := testBinding()
			change(&current)
			_, err = s.Claim(ctx, a.ID, current)
			wantErr(t, err, approval.ErrBindingChanged)
			got := mustState(t, s, a.ID, approval.StateApproved)
			if !got.ClaimedAt.IsZero() {
				t.Fatalf("refused claim set ClaimedAt %v", got.ClaimedAt)
			}
			// Still claimable for the binding it was approved for: the
			// refusal did not consume it.
			if _, err := s.Claim(ctx, a.ID, testBinding()); err != nil {
				t.Fatalf("claim with the approved binding: %v", err)
			}
		})
	}
}
