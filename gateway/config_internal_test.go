package gateway

import "testing"

// TestOptionalIsNoPartOfAWritesRevision: marking a write optional leaves
// its approvals usable: tolerating absence authorizes nothing.
func TestOptionalIsNoPartOfAWritesRevision(t *testing.T) {
	write := Tool{Remote: "w", Name: "w", Title: "W", Write: "write"}
	yes := true
	optional := write
	optional.Optional = &yes
	up := &Upstream{Name: "u", HTTP: &HTTPUpstream{URL: "http://127.0.0.1:1/mcp"}}
	a, b := bindingRevision(write, up), bindingRevision(optional, up)
	if a != b {
		t.Errorf("revisions %s and %s differ", a, b)
	}
}

// TestCredentialsArePartOfAWritesRevision: an approval given for a write
// the gateway sends as itself does not let it go as the caller, nor the
// other way round; naming the default changes nothing.
func TestCredentialsArePartOfAWritesRevision(t *testing.T) {
	write := Tool{Remote: "w", Name: "w", Title: "W", Write: "write"}
	rev := func(mode string) string {
		return bindingRevision(write, &Upstream{Name: "u", HTTP: &HTTPUpstream{URL: "http://127.0.0.1:1/mcp", Credentials: mode}})
	}
	if rev("") != rev(CredentialsGateway) {
		t.Error("naming the default credentials changed the revision")
	}
	if rev("") == rev(CredentialsTokenExchange) {
		t.Error("token_exchange has the gateway's revision")
	}
	if rev("") != bindingRevision(write, &Upstream{Name: "u", Stdio: &StdioUpstream{Command: "x"}}) {
		t.Error("a stdio upstream's revision differs from the default's")
	}
}
