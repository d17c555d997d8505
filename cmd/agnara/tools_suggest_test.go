package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	framework "github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStands(t *testing.T) {
	for _, tc := range []struct {
		name, listed string
		want         bool
	}{
		{"greet", "hello.greet", true},             // the application's prefix
		{"get_user", "gateway.dir_get_user", true}, // a gateway's and an upstream's
		{"dir_get_user", "gateway.dir_get_user", true},
		{"get-user", "x.my-get-user", true},
		{"users.get_user", "gateway.get_user", true}, // another application's prefix
		{"hello.greet", "hello.greet", false},        // the same: nothing to suggest
		{"reet", "hello.greet", false},               // not at a separator
		{"user", "gateway.get_users", false},
		{"users.", "gateway.", false},
		{"greet", "greet.now", false},
		{"", "hello.greet", false},
	} {
		if got := stands(tc.name, tc.listed); got != tc.want {
			t.Errorf("stands(%q, %q) = %v, want %v", tc.name, tc.listed, got, tc.want)
		}
	}
}

// TestToolsCallSuggestsThePrefixedName: a call of a name no tool has, that
// a listed tool's name ends with (or ends like), says which tools it may
// mean, at both eras and with -task; a name like none says nothing more.
func TestToolsCallSuggestsThePrefixedName(t *testing.T) {
	app := framework.New("hello", nil)
	exp := mcpexpose.New(app)
	for _, name := range []string{"greet", "dir_get_user", "list_users"} {
		c := app.Capability(func() (string, error) { return name + " ran", nil }, &framework.CapabilityOptions{Name: name, Description: "A tool."})
		opts := &mcpexpose.ToolOptions{Name: "gateway." + name}
		if name == "greet" {
			opts = nil // hello.greet
		}
		exp.Tool(c, opts)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	url := srv.URL + "/mcp"

	const fix = "? ('agnara tools list' shows the names)\n"
	for _, mode := range [][]string{{"-era", "modern"}, {"-era", "legacy"}, {"-task"}} {
		for _, tc := range []struct{ name, want string }{
			{"greet", `agnara tools call: tools/call: unknown tool "greet" (JSON-RPC error -32602); did you mean hello.greet` + fix},
			{"get_user", `agnara tools call: tools/call: unknown tool "get_user" (JSON-RPC error -32602); did you mean gateway.dir_get_user` + fix},
			{"users.list_users", `agnara tools call: tools/call: unknown tool "users.list_users" (JSON-RPC error -32602); did you mean gateway.list_users` + fix},
			{"nope", `agnara tools call: tools/call: unknown tool "nope" (JSON-RPC error -32602)` + "\n"},
		} {
			code, out, errOut := tools(t, append([]string{"call", url, tc.name}, mode...)...)
			if code != 1 || out != "" || errOut != tc.want {
				t.Errorf("%v call %s: exit %d, %q\nstderr %q\nwant   %q", mode, tc.name, code, out, errOut, tc.want)
			}
		}
	}

	// Another refusal (a discovery server calls nothing): no suggestion.
	disc, err := mcpexpose.NewDiscoveryServer(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	discovery := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return disc }, nil))
	t.Cleanup(discovery.Close)
	code, _, errOut := tools(t, "call", discovery.URL, "greet", "-era", "legacy")
	if code != 1 || !strings.HasSuffix(errOut, "(JSON-RPC error -32601)\n") || strings.Contains(errOut, "did you mean") {
		t.Errorf("call on a discovery server: exit %d, %q, want -32601 and no suggestion", code, errOut)
	}

	// Invalid params for a tool that is listed: not an unknown tool, no
	// suggestion.
	s := mcp.NewServer(&mcp.Implementation{Name: "strict", Version: "1"}, nil)
	for _, name := range []string{"strict", "other.strict"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad params"}
		})
	}
	strict := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(strict.Close)
	code, _, errOut = tools(t, "call", strict.URL, "strict", "-era", "legacy")
	if want := "agnara tools call: tools/call: bad params (JSON-RPC error -32602)\n"; code != 1 || errOut != want {
		t.Errorf("call of a listed tool refusing its params: exit %d, %q, want %q", code, errOut, want)
	}
}
