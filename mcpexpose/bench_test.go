package mcpexpose_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type benchIn struct {
	Message string `json:"message"`
}

type benchOut struct {
	Message string `json:"message"`
}

func echo(_ context.Context, in benchIn) (benchOut, error) { return benchOut(in), nil }

// BenchmarkToolsCall measures one tools/call of the same trivial echo
// handler, end to end through a Go SDK client over in-memory transports:
// registered directly with the SDK (mcp.AddTool, which also validates input
// and returns structured output), registered with the SDK's raw AddTool with
// no validation at all (the floor), and exposed through agnara-go.
// Compare the two as a ratio; see docs/PERFORMANCE.md.
func BenchmarkToolsCall(b *testing.B) {
	raw := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, nil)
	mcp.AddTool(raw, &mcp.Tool{Name: "echo", Description: "Echo."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in benchIn) (*mcp.CallToolResult, benchOut, error) {
			out, err := echo(ctx, in)
			return nil, out, err
		})

	// The floor: the SDK's raw registration, with no validation and a
	// hand-written result.
	bare := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	bare.AddTool(&mcp.Tool{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in benchIn
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			out, _ := echo(ctx, in)
			b, _ := json.Marshal(out)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
		})

	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	snap, err := exp.Compile()
	if err != nil {
		b.Fatal(err)
	}

	for _, bc := range []struct {
		name   string
		server *mcp.Server
	}{
		{"sdk", raw},
		{"sdk_unvalidated", bare},
		{"agnara", mcpexpose.NewServer(snap, nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := context.Background()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := bc.server.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello, world"}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
