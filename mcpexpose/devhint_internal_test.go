package mcpexpose

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioHiddenToolIsUnknown: over stdio the local principal acts, never
// the development principal, so a tool hidden from it is unknown as in
// production, even with a DevelopmentPrincipal set. (RunStdio builds its
// server so; here over in-memory transports.)
func TestStdioHiddenToolIsUnknown(t *testing.T) {
	t.Parallel()
	app := agnara.New("local", nil)
	exp := New(app)
	exp.Tool(app.Capability(func() (string, error) { return "ran", nil },
		&agnara.CapabilityOptions{Name: "write", Description: "Scoped.", Scopes: []string{"a:write"}}), &ToolOptions{Name: "write"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev, local := policy.NewPrincipal("developer", nil), policy.NewPrincipal("me", nil)
	s, err := newServerFor(snap, &ServerOptions{DevelopmentPrincipal: &dev, Logger: slog.New(slog.DiscardHandler)}, true, &local)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := s.mcp.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Message != `unknown tool "write"` {
		t.Errorf("call over stdio with a development principal set: %v, want unknown tool", err)
	}
}
