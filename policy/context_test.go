package policy_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

func TestPrincipalFromAbsent(t *testing.T) {
	p, ok := policy.PrincipalFrom(context.Background())
	if ok {
		t.Fatal("PrincipalFrom(empty context) reported a principal")
	}
	if !reflect.DeepEqual(p, policy.Anonymous()) || !p.IsAnonymous() {
		t.Fatalf("PrincipalFrom(empty context) = %#v, want the anonymous principal", p)
	}
}

func TestWithPrincipalRoundTrip(t *testing.T) {
	alice := policy.NewPrincipal("alice", []string{"a"}).WithIssuer("iss").WithAttributes(map[string]string{"k": "v"})
	bob := policy.NewPrincipal("bob", []string{"b"})
	tests := []struct {
		name string
		ctx  context.Context
		want policy.Principal
	}{
		{"alice", policy.WithPrincipal(context.Background(), alice), alice},
		{"inner wins", policy.WithPrincipal(policy.WithPrincipal(context.Background(), alice), bob), bob},
		{"survives derived contexts", context.WithValue(policy.WithPrincipal(context.Background(), bob), ctxKey{}, 1), bob},
		// Carrying the anonymous principal explicitly is still "carried".
		{"explicit anonymous", policy.WithPrincipal(context.Background(), policy.Anonymous()), policy.Anonymous()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := policy.PrincipalFrom(tt.ctx)
			if !ok {
				t.Fatal("PrincipalFrom reported no principal")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("PrincipalFrom = %#v, want %#v", got, tt.want)
			}
		})
	}
	// The parent context is unaffected.
	parent := context.Background()
	_ = policy.WithPrincipal(parent, alice)
	if _, ok := policy.PrincipalFrom(parent); ok {
		t.Fatal("WithPrincipal modified its parent context")
	}
}

func TestPrincipalFromIgnoresOtherKeys(t *testing.T) {
	// A value stored under an unrelated key, even of type Principal, is not
	// the carried principal.
	ctx := context.WithValue(context.Background(), ctxKey{}, policy.NewPrincipal("mallory", nil))
	if p, ok := policy.PrincipalFrom(ctx); ok || p.ID() != "" {
		t.Fatalf("PrincipalFrom = %q, %v; want anonymous, false", p.ID(), ok)
	}
}
