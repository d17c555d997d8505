package approval_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/policy"
)

type connections interface {
	SaveConnection(ctx context.Context, c approval.Connection) error
	LoadConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (approval.Connection, error)
	ListConnections(ctx context.Context, p policy.Principal) ([]approval.Connection, error)
	DeleteConnection(ctx context.Context, p policy.Principal, upstream, clientID string) (bool, error)
}

// testConnections: a gateway's grants are kept per principal (id and
// issuer) and upstream, replaced by a second save that keeps when the
// first was made, listed for their owner only, deleted for everyone, and
// refused for an anonymous principal, a bad upstream or an oversized
// grant.
func testConnections(t *testing.T, b backend) {
	ctx := context.Background()
	c := newClock()
	s := b.fresh(t, c).(connections)
	alice := policy.NewPrincipal("alice", nil).WithIssuer("https://idp.example")
	aliceElsewhere := policy.NewPrincipal("alice", nil).WithIssuer("https://other.example")
	if _, err := s.LoadConnection(ctx, alice, "orders", "agent"); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("before any: %v, want ErrNotFound", err)
	}
	first := approval.Connection{Principal: alice, Upstream: "orders", ClientID: "agent", Scopes: []string{"orders.read"}, Sealed: []byte("sealed-1")}
	if err := s.SaveConnection(ctx, first); err != nil {
		t.Fatal(err)
	}
	made := c.Now()
	c.Add(time.Minute)
	again := first
	again.Sealed = []byte("sealed-2")
	if err := s.SaveConnection(ctx, again); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveConnection(ctx, approval.Connection{Principal: alice, Upstream: "files", Sealed: []byte("f")}); err != nil {
		t.Fatal(err)
	}
	got, err := s.LoadConnection(ctx, alice, "orders", "agent")
	if err != nil || !bytes.Equal(got.Sealed, []byte("sealed-2")) || !slices.Equal(got.Scopes, []string{"orders.read"}) ||
		!got.CreatedAt.Equal(made) || !got.UpdatedAt.Equal(c.Now()) || got.Principal.Key() != alice.Key() {
		t.Fatalf("read back %+v (%v)", got, err)
	}
	if _, err := s.LoadConnection(ctx, aliceElsewhere, "orders", "agent"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("another issuer's alice reads alice's grant: %v", err)
	}
	if _, err := s.LoadConnection(ctx, alice, "orders", "other-client"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("another client of alice's reads the grant she gave one: %v", err)
	}
	list, err := s.ListConnections(ctx, alice)
	if err != nil || len(list) != 2 || list[0].Upstream != "files" || list[1].Upstream != "orders" {
		t.Fatalf("list %+v (%v)", list, err)
	}
	if list, err := s.ListConnections(ctx, aliceElsewhere); err != nil || len(list) != 0 {
		t.Errorf("another issuer's alice lists %+v (%v)", list, err)
	}
	if gone, err := s.DeleteConnection(ctx, alice, "orders", "agent"); !gone || err != nil {
		t.Fatalf("delete: %v %v", gone, err)
	}
	if gone, err := s.DeleteConnection(ctx, alice, "orders", "agent"); gone || err != nil {
		t.Errorf("delete again: %v %v, want false", gone, err)
	}
	if _, err := s.LoadConnection(ctx, alice, "orders", "agent"); !errors.Is(err, approval.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	for name, bad := range map[string]approval.Connection{
		"anonymous":      {Principal: policy.Anonymous(), Upstream: "orders", Sealed: []byte("x")},
		"no upstream":    {Principal: alice, Sealed: []byte("x")},
		"nothing sealed": {Principal: alice, Upstream: "orders"},
		"too large":      {Principal: alice, Upstream: "orders", Sealed: make([]byte, approval.MaxSealed+1)},
	} {
		if err := s.SaveConnection(ctx, bad); !errors.Is(err, approval.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}
