package policy_test

import (
	"slices"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

func TestScopesExactMatch(t *testing.T) {
	p := policy.NewPrincipal("alice", []string{"users:read", "billing"})
	var s policy.Scopes // zero value: exact match only
	tests := []struct {
		name     string
		required []string
		missing  []string
	}{
		{"nothing required", nil, nil},
		{"empty required", []string{}, nil},
		{"one held", []string{"users:read"}, nil},
		{"all held", []string{"billing", "users:read"}, nil},
		{"read does not grant write", []string{"users:write"}, []string{"users:write"}},
		{"case sensitive", []string{"Users:read"}, []string{"Users:read"}},
		{"no hierarchy by default: narrower", []string{"users:read:email"}, []string{"users:read:email"}},
		{"no hierarchy by default: broader", []string{"users"}, []string{"users"}},
		{"prefix is not a match", []string{"bill"}, []string{"bill"}},
		{"missing in given order", []string{"z", "users:read", "a", "billing", "m"}, []string{"z", "a", "m"}},
		{"duplicates reported as given", []string{"x", "x"}, []string{"x", "x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.Missing(p, tt.required)
			if tt.missing == nil {
				if got != nil {
					t.Fatalf("Missing(%q) = %#v, want nil", tt.required, got)
				}
			} else if !slices.Equal(got, tt.missing) {
				t.Fatalf("Missing(%q) = %q, want %q", tt.required, got, tt.missing)
			}
			if allows := s.Allows(p, tt.required); allows != (tt.missing == nil) {
				t.Fatalf("Allows(%q) = %v, want %v", tt.required, allows, tt.missing == nil)
			}
		})
	}
}

func TestHierarchyImplication(t *testing.T) {
	tests := []struct {
		sep, held, required string
		want                bool
	}{
		// Documented implications.
		{":", "users", "users:read", true},
		{":", "users", "users:read:email", true},
		{":", "users:read", "users:read:email", true},
		{":", "a", "a:b", true},
		// Documented non-implications.
		{":", "users", "users2", false},
		{":", "users", "admin", false},
		{":", "users:read", "users:write", false},
		{":", "users:read", "users", false}, // narrower never grants broader
		{":", "users:read:email", "users:read", false},
		{":", "users", "users:", false}, // nothing after the separator
		{":", "users", "usersX:read", false},
		{":", "users", "Users:read", false}, // case sensitive
		{":", "Users", "users:read", false},
		{":", "user", "users:read", false},       // prefix must end at a separator
		{":", "users", "users.read", false},      // a different separator
		{":", "users:read", "users:read", false}, // equality is not the implication's job
		{":", "users", "xusers:read", false},
		// Other separators.
		{".", "users", "users.read", true},
		{".", "users", "users:read", false},
		{"::", "a", "a::b", true},
		{"::", "a", "a:b", false},
		{"::", "a", "a::", false},
		{"/", "https://api.example.com", "https://api.example.com/users", true},
		// An empty separator implies nothing.
		{"", "users", "users:read", false},
		{"", "users", "usersread", false},
	}
	for _, tt := range tests {
		imp := policy.Hierarchy(tt.sep)
		if got := imp(tt.held, tt.required); got != tt.want {
			t.Errorf("Hierarchy(%q)(%q, %q) = %v, want %v", tt.sep, tt.held, tt.required, got, tt.want)
		}
	}
}

func TestScopesWithHierarchy(t *testing.T) {
	s := policy.Scopes{Implies: policy.Hierarchy(":")}
	tests := []struct {
		name     string
		held     []string
		required []string
		missing  []string
	}{
		{"broad grants narrow", []string{"users"}, []string{"users:read", "users:write:all"}, nil},
		{"exact still works", []string{"users:read"}, []string{"users:read"}, nil},
		{"read does not grant write", []string{"users:read"}, []string{"users:write"}, []string{"users:write"}},
		{"narrow does not grant broad", []string{"users:read"}, []string{"users"}, []string{"users"}},
		{"sibling name is not a child", []string{"users"}, []string{"users2", "users2:read"}, []string{"users2", "users2:read"}},
		{"any held scope may imply", []string{"admin", "billing", "users"}, []string{"billing:view", "users:read", "ops:deploy"}, []string{"ops:deploy"}},
		{"anonymous holds nothing", nil, []string{"users:read"}, []string{"users:read"}},
		{"order preserved", []string{"b"}, []string{"c:x", "b:x", "a:x"}, []string{"c:x", "a:x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := policy.NewPrincipal("alice", tt.held)
			got := s.Missing(p, tt.required)
			if tt.missing == nil {
				if got != nil {
					t.Fatalf("Missing(%q) = %#v, want nil", tt.required, got)
				}
			} else if !slices.Equal(got, tt.missing) {
				t.Fatalf("Missing(%q) = %q, want %q", tt.required, got, tt.missing)
			}
			if allows := s.Allows(p, tt.required); allows != (tt.missing == nil) {
				t.Fatalf("Allows(%q) = %v, want %v", tt.required, allows, tt.missing == nil)
			}
		})
	}
}

func TestScopesCustomImplication(t *testing.T) {
	type call struct{ held, required string }
	var calls []call
	// "admin" grants everything; "*:read" grants any ":read" scope.
	imp := func(held, required string) bool {
		calls = append(calls, call{held, required})
		if held == "admin" {
			return true
		}
		return held == "*:read" && len(required) > 5 && required[len(required)-5:] == ":read"
	}
	s := policy.Scopes{Implies: imp}

	admin := policy.NewPrincipal("root", []string{"admin"})
	if !s.Allows(admin, []string{"users:write", "billing"}) {
		t.Error("custom implication: admin should be allowed everything")
	}
	if m := s.Missing(admin, []string{"x", "y"}); m != nil {
		t.Errorf("custom implication: Missing for admin = %q, want nil", m)
	}

	reader := policy.NewPrincipal("bob", []string{"*:read", "billing"})
	calls = nil
	got := s.Missing(reader, []string{"users:read", "users:write", "billing", "orders:read"})
	if want := []string{"users:write"}; !slices.Equal(got, want) {
		t.Fatalf("Missing = %q, want %q", got, want)
	}
	// The implication is consulted only for scopes not held exactly, and is
	// never asked about held == required.
	for _, c := range calls {
		if c.required == "billing" {
			t.Errorf("implication consulted for exactly held scope: %+v", c)
		}
		if c.held == c.required {
			t.Errorf("implication called with held == required: %+v", c)
		}
	}
	if len(calls) == 0 {
		t.Fatal("custom implication was never consulted")
	}

	// An implication that grants nothing leaves exact matching intact.
	never := policy.Scopes{Implies: func(string, string) bool { return false }}
	if !never.Allows(reader, []string{"billing"}) {
		t.Error("exactly held scope refused under an implication that grants nothing")
	}
	if never.Allows(reader, []string{"users:read"}) {
		t.Error("scope allowed under an implication that grants nothing")
	}
}

func TestMissingDoesNotAliasRequired(t *testing.T) {
	required := []string{"a", "b"}
	got := (policy.Scopes{}).Missing(policy.Anonymous(), required)
	got[0] = "changed"
	if required[0] != "a" {
		t.Fatalf("mutating Missing's result changed the required slice: %q", required)
	}
}
