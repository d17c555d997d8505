package gateway

import "testing"

// TestOptionalIsNoPartOfAWritesRevision: marking a write optional leaves
// its approvals usable: tolerating absence authorizes nothing.
func TestOptionalIsNoPartOfAWritesRevision(t *testing.T) {
	write := Tool{Remote: "w", Name: "w", Title: "W", Write: "write"}
	yes := true
	optional := write
	optional.Optional = &yes
	a, b := bindingRevision(write), bindingRevision(optional)
	if a != b {
		t.Errorf("revisions %s and %s differ", a, b)
	}
}
