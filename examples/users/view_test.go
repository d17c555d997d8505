package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUserView: users.get_user's MCP App view is served, as written, to a
// caller who may get users, with an empty CSP; a caller without users:read
// sees neither the tool nor its view.
func TestUserView(t *testing.T) {
	_, c := inProcess(t, config{devScopes: "users:read"}, nil, agnaratest.Options{Principal: policy.NewPrincipal("ann", []string{"users:read"})})
	view := c.ToolUI(t, "users.get_user")
	meta, _ := json.Marshal(view.Meta)
	if view.URI != "ui://users.get_user" || view.Text != userView || string(meta) != `{"ui":{}}` {
		t.Errorf("view = %s %q, _meta %s", view.URI, view.Text, meta)
	}
	_, anon := inProcess(t, config{}, nil, agnaratest.Options{})
	if _, err := anon.Session().ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "ui://users.get_user"}); err == nil {
		t.Error("a caller without users:read read the view")
	}
}

// The view is self-contained, as its empty CSP says it must be: it loads
// nothing (no src, href, url() or import) and names no other origin.
func TestUserViewSelfContained(t *testing.T) {
	if loads := regexp.MustCompile(`(?i)\bsrc\s*=|\bhref\s*=|url\(|@import|\bimport\s*\(|fetch\(|://`).FindAllString(userView, -1); len(loads) > 0 {
		t.Errorf("the view loads from elsewhere: %q", loads)
	}
}
