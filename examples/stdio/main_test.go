package main

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestDesktopClient starts the built program as a desktop client would and
// calls a tool over its standard input and output.
func TestDesktopClient(t *testing.T) {
	bin := proctest.Build(t, ".")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "-scopes", "users:read users:write")
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "desktop", Version: "1"}, nil).
		Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	l, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Tools) != 3 { // get, list, create; delete needs users:admin
		t.Errorf("tools = %d, want 3", len(l.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.create_user", Arguments: map[string]any{"name": "Ada", "email": "ada@example.com"}})
	if err != nil || res.IsError {
		t.Fatalf("create = %+v, %v", res, err)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.get_user", Arguments: map[string]any{"id": "1"}})
	if err != nil || res.IsError {
		t.Fatalf("get = %+v, %v", res, err)
	}
}
