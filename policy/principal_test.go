package policy_test

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

func TestNewPrincipalNormalizesScopes(t *testing.T) {
	tests := []struct {
		name   string
		scopes []string
		want   []string
	}{
		{"nil", nil, nil},
		{"empty", []string{}, nil},
		{"only empty strings", []string{"", ""}, nil},
		{"already sorted", []string{"a", "b"}, []string{"a", "b"}},
		{"unsorted", []string{"users:write", "admin", "users:read"}, []string{"admin", "users:read", "users:write"}},
		{"duplicates dropped", []string{"b", "a", "b", "a", "b"}, []string{"a", "b"}},
		{"empty dropped among others", []string{"", "x", "", "x"}, []string{"x"}},
		{"case kept distinct", []string{"Users", "users"}, []string{"Users", "users"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := policy.NewPrincipal("alice", tt.scopes)
			got := p.Scopes()
			if len(got) != len(tt.want) || (len(got) > 0 && !slices.Equal(got, tt.want)) {
				t.Fatalf("Scopes() = %q, want %q", got, tt.want)
			}
			for _, s := range tt.want {
				if !p.HasScope(s) {
					t.Errorf("HasScope(%q) = false, want true", s)
				}
			}
			if p.HasScope("") {
				t.Error(`HasScope("") = true, want false: empty scopes are dropped`)
			}
		})
	}
}

func TestNewPrincipalIdentity(t *testing.T) {
	tests := []struct {
		id        string
		anonymous bool
	}{
		{"alice", false},
		{"", true},
		{" ", false},
	}
	for _, tt := range tests {
		p := policy.NewPrincipal(tt.id, []string{"s"})
		if p.ID() != tt.id {
			t.Errorf("NewPrincipal(%q).ID() = %q", tt.id, p.ID())
		}
		if p.IsAnonymous() != tt.anonymous {
			t.Errorf("NewPrincipal(%q).IsAnonymous() = %v, want %v", tt.id, p.IsAnonymous(), tt.anonymous)
		}
		// An anonymous principal built by NewPrincipal still holds its scopes.
		if !p.HasScope("s") {
			t.Errorf("NewPrincipal(%q).HasScope(\"s\") = false", tt.id)
		}
		if p.Issuer() != "" {
			t.Errorf("NewPrincipal(%q).Issuer() = %q, want empty", tt.id, p.Issuer())
		}
	}
}

func TestAnonymousIsZeroValue(t *testing.T) {
	a := policy.Anonymous()
	if !reflect.DeepEqual(a, policy.Principal{}) {
		t.Fatalf("Anonymous() = %#v, want the zero Principal", a)
	}
	if !a.IsAnonymous() {
		t.Error("Anonymous().IsAnonymous() = false")
	}
	if !(policy.Principal{}).IsAnonymous() {
		t.Error("Principal{}.IsAnonymous() = false")
	}
	if a.ID() != "" || a.Issuer() != "" {
		t.Errorf("Anonymous() has ID %q, issuer %q; want both empty", a.ID(), a.Issuer())
	}
	if s := a.Scopes(); len(s) != 0 {
		t.Errorf("Anonymous().Scopes() = %q, want none", s)
	}
	if a.HasScope("anything") {
		t.Error("Anonymous().HasScope returned true")
	}
	if m := a.Attributes(); len(m) != 0 {
		t.Errorf("Anonymous().Attributes() = %v, want none", m)
	}
	if v, ok := a.Attribute("k"); ok || v != "" {
		t.Errorf("Anonymous().Attribute(\"k\") = %q, %v; want \"\", false", v, ok)
	}
	if (policy.Scopes{}).Allows(a, []string{"x"}) {
		t.Error("the anonymous principal is allowed a scope it does not hold")
	}
}

func TestHasScopeIsExact(t *testing.T) {
	p := policy.NewPrincipal("alice", []string{"users:read", "admin"})
	tests := []struct {
		scope string
		want  bool
	}{
		{"users:read", true},
		{"admin", true},
		{"users:write", false},
		{"Users:read", false},
		{"ADMIN", false},
		{"users", false},            // no implication in HasScope
		{"users:read:email", false}, // no implication in HasScope
		{"users:rea", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := p.HasScope(tt.scope); got != tt.want {
			t.Errorf("HasScope(%q) = %v, want %v", tt.scope, got, tt.want)
		}
	}
}

func TestNewPrincipalCopiesScopes(t *testing.T) {
	in := []string{"b", "a"}
	p := policy.NewPrincipal("alice", in)
	in[0], in[1] = "x", "y"
	if got := p.Scopes(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after mutating the input slice, Scopes() = %q, want [a b]", got)
	}
	if p.HasScope("x") || !p.HasScope("b") {
		t.Fatal("mutating the slice passed to NewPrincipal changed the principal")
	}
}

func TestScopesReturnsCopy(t *testing.T) {
	p := policy.NewPrincipal("alice", []string{"a", "b"})
	got := p.Scopes()
	got[0] = "zzz"
	_ = append(got[:1], "injected")
	if again := p.Scopes(); !slices.Equal(again, []string{"a", "b"}) {
		t.Fatalf("after mutating a returned slice, Scopes() = %q, want [a b]", again)
	}
	if p.HasScope("zzz") || p.HasScope("injected") || !p.HasScope("a") {
		t.Fatal("mutating the slice returned by Scopes changed the principal")
	}
}

func TestAttributes(t *testing.T) {
	base := policy.NewPrincipal("alice", nil)
	if m := base.Attributes(); len(m) != 0 {
		t.Fatalf("new principal has attributes %v", m)
	}

	in := map[string]string{"tenant": "acme", "role": "dev"}
	p := base.WithAttributes(in)
	want := map[string]string{"tenant": "acme", "role": "dev"}
	if got := p.Attributes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Attributes() = %v, want %v", got, want)
	}
	for k, v := range want {
		if got, ok := p.Attribute(k); !ok || got != v {
			t.Errorf("Attribute(%q) = %q, %v; want %q, true", k, got, ok, v)
		}
	}
	if v, ok := p.Attribute("missing"); ok || v != "" {
		t.Errorf("Attribute(\"missing\") = %q, %v; want \"\", false", v, ok)
	}

	// Merging: later values win, earlier keys are kept.
	q := p.WithAttributes(map[string]string{"role": "admin", "region": "eu"})
	wantQ := map[string]string{"tenant": "acme", "role": "admin", "region": "eu"}
	if got := q.Attributes(); !reflect.DeepEqual(got, wantQ) {
		t.Fatalf("merged Attributes() = %v, want %v", got, wantQ)
	}
	// The principal merged from is unchanged.
	if got := p.Attributes(); !reflect.DeepEqual(got, want) {
		t.Fatalf("WithAttributes changed the original: %v, want %v", got, want)
	}
	if got := base.Attributes(); len(got) != 0 {
		t.Fatalf("WithAttributes changed the base principal: %v", got)
	}
	// Merging nil keeps what is there.
	if got := q.WithAttributes(nil).Attributes(); !reflect.DeepEqual(got, wantQ) {
		t.Fatalf("WithAttributes(nil).Attributes() = %v, want %v", got, wantQ)
	}
	// Other fields survive.
	if q.ID() != "alice" {
		t.Errorf("WithAttributes lost the ID: %q", q.ID())
	}
}

func TestAttributesImmutable(t *testing.T) {
	in := map[string]string{"tenant": "acme"}
	p := policy.NewPrincipal("alice", nil).WithAttributes(in)

	// Mutating the map passed to WithAttributes changes nothing.
	in["tenant"] = "evil"
	in["extra"] = "x"
	if v, _ := p.Attribute("tenant"); v != "acme" {
		t.Fatalf("mutating the input map changed the principal: tenant=%q", v)
	}
	if _, ok := p.Attribute("extra"); ok {
		t.Fatal("mutating the input map added an attribute to the principal")
	}

	// Mutating the map returned by Attributes changes nothing.
	out := p.Attributes()
	out["tenant"] = "evil"
	out["extra"] = "x"
	if v, _ := p.Attribute("tenant"); v != "acme" {
		t.Fatalf("mutating the returned map changed the principal: tenant=%q", v)
	}
	if _, ok := p.Attribute("extra"); ok {
		t.Fatal("mutating the returned map added an attribute to the principal")
	}

	// Two principals derived from the same one do not share storage.
	a := p.WithAttributes(map[string]string{"k": "a"})
	b := p.WithAttributes(map[string]string{"k": "b"})
	if v, _ := a.Attribute("k"); v != "a" {
		t.Fatalf("sibling derivation leaked into a: k=%q", v)
	}
	if v, _ := b.Attribute("k"); v != "b" {
		t.Fatalf("b: k=%q, want b", v)
	}
	if _, ok := p.Attribute("k"); ok {
		t.Fatal("derivation leaked into the parent principal")
	}
}

func TestWithIssuer(t *testing.T) {
	p := policy.NewPrincipal("alice", []string{"s"}).WithAttributes(map[string]string{"k": "v"})
	q := p.WithIssuer("https://issuer.example")
	if q.Issuer() != "https://issuer.example" {
		t.Fatalf("Issuer() = %q", q.Issuer())
	}
	if p.Issuer() != "" {
		t.Fatalf("WithIssuer changed the original: issuer %q", p.Issuer())
	}
	if q.ID() != "alice" || !q.HasScope("s") {
		t.Errorf("WithIssuer lost ID or scopes: id %q scopes %q", q.ID(), q.Scopes())
	}
	if v, ok := q.Attribute("k"); !ok || v != "v" {
		t.Errorf("WithIssuer lost attributes: %v", q.Attributes())
	}
	if r := q.WithIssuer(""); r.Issuer() != "" || q.Issuer() != "https://issuer.example" {
		t.Errorf("WithIssuer(\"\") = %q (original now %q)", r.Issuer(), q.Issuer())
	}
}

func TestWithScopes(t *testing.T) {
	p := policy.NewPrincipal("alice", []string{"a"}).WithIssuer("iss")
	in := []string{"c", "b", "c", ""}
	q := p.WithScopes(in)
	in[0] = "mutated"
	if got := q.Scopes(); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("WithScopes: Scopes() = %q, want [b c]", got)
	}
	if q.HasScope("a") {
		t.Error("WithScopes must replace, not add: still holds a")
	}
	if got := p.Scopes(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("WithScopes changed the original: %q", got)
	}
	if q.ID() != "alice" || q.Issuer() != "iss" {
		t.Errorf("WithScopes lost ID or issuer: %q %q", q.ID(), q.Issuer())
	}
	if got := q.WithScopes(nil).Scopes(); len(got) != 0 {
		t.Errorf("WithScopes(nil).Scopes() = %q, want none", got)
	}
}

// TestPrincipalConcurrentUse is meaningful under -race: a shared principal is
// read and derived from concurrently.
func TestPrincipalConcurrentUse(t *testing.T) {
	p := policy.NewPrincipal("alice", []string{"a", "b"}).WithAttributes(map[string]string{"k": "v"})
	ctx := policy.WithPrincipal(context.Background(), p)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			q, _ := policy.PrincipalFrom(ctx)
			s := q.Scopes()
			s[0] = "x"
			m := q.Attributes()
			m["k"] = "w"
			_ = q.WithAttributes(map[string]string{"i": string(rune('0' + i))})
			_ = q.WithScopes([]string{"z"})
			_ = q.WithIssuer("iss")
			_ = (policy.Scopes{Implies: policy.Hierarchy(":")}).Missing(q, []string{"a", "c"})
		})
	}
	wg.Wait()
	if got := p.Scopes(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("Scopes() = %q after concurrent use", got)
	}
	if got, _ := p.Attribute("k"); got != "v" {
		t.Fatalf("Attribute(k) = %q after concurrent use", got)
	}
}
