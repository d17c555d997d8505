package main

import (
	"testing"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// TestRedirectURIs: a loopback redirect URI registered without a port
// matches any port and nothing else; others match exactly.
func TestRedirectURIs(t *testing.T) {
	c := &client{ClientConfig{
		ID: "web", Secret: "x",
		RedirectURIs: []string{"http://127.0.0.1/cb", "http://[::1]/cb?x=1", "https://app.example/cb"},
	}}
	for uri, want := range map[string]bool{
		"http://127.0.0.1/cb":                 true,
		"http://127.0.0.1:1/cb":               true,
		"http://127.0.0.1:65535/cb":           true,
		"http://[::1]:8080/cb?x=1":            true,
		"https://app.example/cb":              true,
		"http://127.0.0.1:123456/cb":          false,
		"http://127.0.0.1:80/cb/more":         false,
		"http://127.0.0.1:80/other":           false,
		"http://127.0.0.1:80@evil.example/cb": false,
		"http://127.0.0.1:80.evil.example/cb": false,
		"http://localhost:80/cb":              false,
		"http://[::1]:8080/cb":                false,
		"https://app.example:444/cb":          false,
		"https://app.example/cb2":             false,
	} {
		err := op.ValidateAuthReqRedirectURI(c, uri, oidc.ResponseTypeCode)
		if got := err == nil; got != want {
			t.Errorf("%s: accepted %v, want %v (%v)", uri, got, want, err)
		}
	}
}

// TestConfigChecks: a bad configuration is refused at start.
func TestConfigChecks(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no id":                {Clients: []ClientConfig{{Secret: "x"}}},
		"no secret":            {Clients: []ClientConfig{{ID: "a"}}},
		"public with secret":   {Clients: []ClientConfig{{ID: "a", Public: true, Secret: "x"}}},
		"unknown grant":        {Clients: []ClientConfig{{ID: "a", Secret: "x", GrantTypes: []string{"password"}}}},
		"public credentials":   {Clients: []ClientConfig{{ID: "a", Public: true, GrantTypes: []string{"client_credentials"}}}},
		"duplicate client":     {Clients: []ClientConfig{{ID: "a", Secret: "x"}, {ID: "a", Secret: "y"}}},
		"user without subject": {Users: []UserConfig{{Username: "u"}}},
		"bad lifetime":         {AccessTokenLifetime: "soon"},
	} {
		if err := cfg.check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
