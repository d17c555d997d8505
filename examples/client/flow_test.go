package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/proctest"
)

// TestThreeCommandFlow runs the README's flow with the real programs: the
// development issuer, the users example with -issuer, and this client,
// which gets a token, calls a users:read tool, and is refused a users:admin
// tool with the 403 step-up challenge.
func TestThreeCommandFlow(t *testing.T) {
	issuerURL := proctest.Start(t, proctest.Build(t, "../devissuer"), "-addr", "127.0.0.1:0")
	mcpURL := proctest.Start(t, proctest.Build(t, "../users"), "-addr", "127.0.0.1:0", "-issuer", issuerURL)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := config{Issuer: issuerURL, MCP: mcpURL, ClientID: "demo", ClientSecret: "demo-secret", Scope: "users:read", Args: "{}"}

	var out bytes.Buffer
	read := base
	read.Tool = "users.list_users"
	if err := run(ctx, read, &out); err != nil {
		t.Fatalf("users:read call: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "protocol: 2026-07-28") || !strings.Contains(out.String(), `{"result":[]}`) {
		t.Errorf("users:read call printed:\n%s", out.String())
	}

	out.Reset()
	admin := base
	admin.Tool, admin.Args = "users.delete_user", `{"id":"1"}`
	err := run(ctx, admin, &out)
	var refused *refusedError
	if !errors.As(err, &refused) || refused.StatusCode != 403 {
		t.Fatalf("users:admin call with a users:read token = %v, want the 403 refusal\n%s", err, out.String())
	}
	checkChallenge(t, refused, mcpURL)

	// A tool that asks for a confirmation this client cannot give: the
	// server's JSON-RPC code is printed, not only the SDK's "rejected by
	// transport".
	out.Reset()
	asks := admin
	asks.Scope = "users:read users:admin"
	err = run(ctx, asks, &out)
	var rpc *rpcError
	if !errors.As(err, &rpc) || rpc.Code != -32021 || rpc.Step != "tools/call" ||
		!strings.HasPrefix(err.Error(), "calling users.delete_user: the MCP server answered tools/call with JSON-RPC error -32021: ") {
		t.Fatalf("a confirmation the client cannot answer = %v, want the -32021 answer\n%s", err, out.String())
	}
}

func checkChallenge(t *testing.T, refused *refusedError, mcpURL string) {
	t.Helper()
	want := `Bearer error="insufficient_scope", scope="users:admin", resource_metadata="` + strings.TrimSuffix(mcpURL, "/mcp") + `/.well-known/oauth-protected-resource/mcp"`
	if len(refused.WWWAuthenticate) != 1 || refused.WWWAuthenticate[0] != want {
		t.Errorf("challenge = %q, want %q", refused.WWWAuthenticate, want)
	}
}
