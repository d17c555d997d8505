package mcpexpose_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An audit trail: one JSON record per decided tools/call, with the
// arguments' digest and never their values.
func ExampleNewSlogAudit() {
	app := agnara.New("users", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(context.Context, UserIn) (string, error) { return "ok", nil },
		&agnara.CapabilityOptions{Name: "get_user", Description: "Get a user."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{} // for a stable example
		}
		return a
	}
	audit := mcpexpose.NewSlogAudit(slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime})))
	srv, err := mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{Audit: audit})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.get_user", Arguments: map[string]any{"id": "u1"}}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"level":"INFO","msg":"audit","principal":"","tool":"users.get_user","capability":"users.get_user","protocol_version":"2026-07-28","arguments_digest":"sha256:2b100f0bbb76bb9522881402cd02a73e0cc0a0594b01bf60569a27782b4f4bbf","outcome":"ok","resumed":false}
}
