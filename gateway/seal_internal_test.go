package gateway

import (
	"bytes"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

// TestSealedGrantsAreBoundToTheirOwner: a grant sealed for alice at orders
// through one client does not open as bob's, as another client's, as
// another upstream's, under another key, or altered by one bit; a link or
// cookie sealed for one purpose does not open for another.
func TestSealedGrantsAreBoundToTheirOwner(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	s, err := newSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	alice := policy.NewPrincipal("alice", nil).WithIssuer("https://idp.example")
	bob := policy.NewPrincipal("bob", nil).WithIssuer("https://idp.example")
	aliceElsewhere := policy.NewPrincipal("alice", nil).WithIssuer("https://other.example")
	sealed := s.seal(grantAD(alice, "orders", "agent"), []byte(`{"a":"token"}`))
	if plain, ok := s.open(grantAD(alice, "orders", "agent"), sealed); !ok || string(plain) != `{"a":"token"}` {
		t.Fatalf("alice's own grant does not open: %q %v", plain, ok)
	}
	other, _ := newSealer(bytes.Repeat([]byte{8}, 32))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, open := range map[string]func() bool{
		"as bob's":             func() bool { _, ok := s.open(grantAD(bob, "orders", "agent"), sealed); return ok },
		"as another issuer's":  func() bool { _, ok := s.open(grantAD(aliceElsewhere, "orders", "agent"), sealed); return ok },
		"for another client":   func() bool { _, ok := s.open(grantAD(alice, "orders", "other"), sealed); return ok },
		"for another upstream": func() bool { _, ok := s.open(grantAD(alice, "files", "agent"), sealed); return ok },
		"under another key":    func() bool { _, ok := other.open(grantAD(alice, "orders", "agent"), sealed); return ok },
		"altered":              func() bool { _, ok := s.open(grantAD(alice, "orders", "agent"), flipped); return ok },
		"truncated":            func() bool { _, ok := s.open(grantAD(alice, "orders", "agent"), sealed[:5]); return ok },
		"a cookie as a session": func() bool {
			_, ok := s.openText("session", s.sealText("connect", []byte("{}")), maxCookie)
			return ok
		},
	} {
		if open() {
			t.Errorf("a grant opened %s", name)
		}
	}
	if _, err := sealingKey("not base64!"); err == nil {
		t.Error("a key that is not base64 was taken")
	}
}
