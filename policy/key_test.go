package policy_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

func principal(issuer, id string) policy.Principal {
	return policy.NewPrincipal(id, nil).WithIssuer(issuer)
}

// TestKeyIsIssuerAndID: two principals have one key exactly when their
// issuers and ids are both equal; scopes and attributes are not part of
// it, and every anonymous principal has the key "".
func TestKeyIsIssuerAndID(t *testing.T) {
	alice := principal("https://a.example", "alice")
	tests := []struct {
		name string
		a, b policy.Principal
		same bool
	}{
		{"the same issuer and id", alice, principal("https://a.example", "alice"), true},
		{"other scopes and attributes", alice, alice.WithScopes([]string{"admin"}).WithAttributes(map[string]string{"k": "v"}), true},
		{"the same id from another issuer", alice, principal("https://b.example", "alice"), false},
		{"the same id without an issuer", alice, principal("", "alice"), false},
		{"another id from the same issuer", alice, principal("https://a.example", "bob"), false},
		{"the boundary moved", principal("ab", "c"), principal("a", "bc"), false},
		{"an issuer that spells a key", principal("1:a", "b"), principal("", "3:1:ab"), false},
		{"an issuer ending in digits", principal("x1", ":y"), principal("x", "1:y"), false},
		{"a colon at the boundary", principal("a:", "b"), principal("a", ":b"), false},
		{"the id differs in case", principal("i", "Alice"), principal("i", "alice"), false},
		{"anonymous and anonymous", policy.Anonymous(), policy.Anonymous(), true},
		{"anonymous with scopes", policy.Anonymous(), policy.NewPrincipal("", []string{"s"}), true},
		{"anonymous with an issuer", policy.Anonymous(), principal("https://a.example", ""), true},
		{"anonymous and someone", policy.Anonymous(), principal("", "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if same := tt.a.Key() == tt.b.Key(); same != tt.same {
				t.Errorf("Key() %q and %q: same %v, want %v", tt.a.Key(), tt.b.Key(), same, tt.same)
			}
		})
	}
	for _, p := range []policy.Principal{policy.Anonymous(), policy.NewPrincipal("", []string{"s"}), principal("iss", "")} {
		if p.Key() != "" {
			t.Errorf("anonymous principal %+v has key %q, want \"\"", p, p.Key())
		}
	}
	if k := principal("", "alice").Key(); k == "" {
		t.Error("an identified principal has the anonymous key")
	}
}

// FuzzKeyIsUnambiguous: the key gives back the issuer and id it was made
// of, so no two identified principals share one; an anonymous principal's
// is "".
func FuzzKeyIsUnambiguous(f *testing.F) {
	for _, s := range [][2]string{{"https://a.example", "alice"}, {"", "x"}, {"1:a", "b"}, {"a", ""}, {"x1", ":y"}, {"", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, issuer, id string) {
		key := principal(issuer, id).Key()
		if id == "" {
			if key != "" {
				t.Fatalf("anonymous key %q", key)
			}
			return
		}
		n, rest, ok := strings.Cut(key, ":")
		size, err := strconv.Atoi(n)
		if !ok || err != nil || strconv.Itoa(size) != n || size > len(rest) {
			t.Fatalf("key %q does not start with the issuer's length", key)
		}
		if gotIssuer, gotID := rest[:size], rest[size:]; gotIssuer != issuer || gotID != id {
			t.Fatalf("key %q reads back as issuer %q, id %q; want %q, %q", key, gotIssuer, gotID, issuer, id)
		}
	})
}
