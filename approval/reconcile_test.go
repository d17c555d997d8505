package approval_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

func testReconcile(t *testing.T, b backend) {
	ctx := context.Background()
	// setup brings a fresh approval to a state and returns its id.
	type setup func(t *testing.T, s store) string
	at := func(steps ...string) setup {
		return func(t *testing.T, s store) string {
			a, err := s.Prepare(ctx, testIntent(t, "k", `{"id":1}`))
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range steps {
				switch step {
				case "approve":
					_, err = s.Approve(ctx, a.ID, approver, "")
				case "claim":
					_, err = s.Claim(ctx, a.ID, testBinding())
				case "unknown", "committed", "not_started":
					_, err = s.Complete(ctx, a.ID, approval.Receipt{Effect: approval.EffectState(step), Reason: "mcp_timeout"})
				case "reconcile":
					_, err = s.Reconcile(ctx, a.ID, carol, approval.EffectNotStarted, "server log shows no request")
				}
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
			}
			return a.ID
		}
	}
	tests := []struct {
		name     string
		setup    setup
		by       policy.Principal
		effect   approval.EffectState
		evidence string
		err      error
		state    approval.State
	}{
		{"completed unknown → committed", at("approve", "claim", "unknown"), carol, approval.EffectCommitted, "read back document 1: title updated", nil, approval.StateCompleted},
		{"claimed, never completed → not_started", at("approve", "claim"), carol, approval.EffectNotStarted, "server access log has no request", nil, approval.StateClaimed},
		{"the requester may reconcile if an approver", at("approve", "claim"), requester.WithScopes([]string{approval.DefaultApproverScope}), approval.EffectCommitted, "read back", nil, approval.StateClaimed},
		{"known committed effect", at("approve", "claim", "committed"), carol, approval.EffectNotStarted, "x", approval.ErrConflict, approval.StateCompleted},
		{"known not_started effect", at("approve", "claim", "not_started"), carol, approval.EffectCommitted, "x", approval.ErrConflict, approval.StateCompleted},
		{"already reconciled", at("approve", "claim", "unknown", "reconcile"), carol, approval.EffectCommitted, "x", approval.ErrConflict, approval.StateCompleted},
		{"pending", at(), carol, approval.EffectCommitted, "x", approval.ErrNotClaimed, approval.StatePending},
		{"approved, unclaimed", at("approve"), carol, approval.EffectCommitted, "x", approval.ErrNotClaimed, approval.StateApproved},
		{"no evidence", at("approve", "claim", "unknown"), carol, approval.EffectCommitted, "", approval.ErrEvidenceRequired, approval.StateCompleted},
		{"blank evidence", at("approve", "claim", "unknown"), carol, approval.EffectCommitted, " \n\t", approval.ErrEvidenceRequired, approval.StateCompleted},
		{"unknown is not a finding", at("approve", "claim", "unknown"), carol, approval.EffectUnknown, "x", approval.ErrInvalid, approval.StateCompleted},
		{"no approver scope", at("approve", "claim", "unknown"), requester, approval.EffectCommitted, "x", approval.ErrNotAuthorized, approval.StateCompleted},
		{"anonymous", at("approve", "claim", "unknown"), policy.NewPrincipal("", []string{approval.DefaultApproverScope}), approval.EffectCommitted, "x", approval.ErrNotAuthorized, approval.StateCompleted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := b.fresh(t, newClock())
			id := tc.setup(t, s)
			before := mustState(t, s, id, tc.state)
			a, err := s.Reconcile(ctx, id, tc.by, tc.effect, tc.evidence)
			wantErr(t, err, tc.err)
			after := mustState(t, s, id, tc.state)
			if !equalReceipt(before.Receipt, after.Receipt) {
				t.Fatalf("receipt changed: %+v → %+v", before.Receipt, after.Receipt)
			}
			if tc.err != nil {
				if !equalReconciliation(before.Reconciliation, after.Reconciliation) {
					t.Fatalf("refused reconcile changed %+v → %+v", before.Reconciliation, after.Reconciliation)
				}
				return
			}
			r := after.Reconciliation
			if r == nil || r.By != tc.by.ID() || r.Effect != tc.effect || r.Evidence != tc.evidence || r.At.IsZero() || !equalReconciliation(a.Reconciliation, r) {
				t.Fatalf("reconciliation = %+v", r)
			}
			if _, err := s.Claim(ctx, id, testBinding()); !errors.Is(err, approval.ErrAlreadyClaimed) {
				t.Fatalf("claim after reconcile: %v, want ErrAlreadyClaimed", err)
			}
		})
	}
}

func equalReconciliation(a, b *approval.Reconciliation) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.By == b.By && a.Effect == b.Effect && a.Evidence == b.Evidence && a.At.Equal(b.At)
}
