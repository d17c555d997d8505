package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
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

	// The same, observed by an observer that does nothing: the cost of
	// observation itself.
	observedApp := agnara.New("bench", &agnara.Options{Observer: nopObserver{}})
	observedExp := mcpexpose.New(observedApp)
	observedExp.Tool(observedApp.Capability(echo, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	observed, err := observedExp.Compile()
	if err != nil {
		b.Fatal(err)
	}

	for _, era := range []struct{ name, version string }{{"modern", ""}, {"legacy", "2025-11-25"}} {
		for _, bc := range []struct {
			name   string
			server *mcp.Server
		}{
			{"sdk", raw},
			{"sdk_unvalidated", bare},
			{"agnara", mustServer(mcpexpose.NewServer(snap, nil))},
			{"agnara_observed", mustServer(mcpexpose.NewServer(observed, nil))},
		} {
			b.Run(era.name+"/"+bc.name, func(b *testing.B) {
				benchCall(b, bc.server, era.version)
			})
		}
	}
}

func benchCall(b *testing.B, server *mcp.Server, version string) {
	{
		{
			ctx := context.Background()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := server.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
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
		}
	}
}

// BenchmarkToolsList lists 1,000 tools: through agnara-go for a principal
// holding half of their scopes (filtered per caller), and through the raw
// SDK, unfiltered, with a page size that returns them all at once.
func BenchmarkToolsList(b *testing.B) {
	const n = 1000
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	raw := mcp.NewServer(&mcp.Implementation{Name: "raw", Version: "1"}, &mcp.ServerOptions{PageSize: n})
	var held []string
	for i := range n {
		scope := fmt.Sprintf("s%d", i)
		if i%2 == 0 {
			held = append(held, scope)
		}
		name := fmt.Sprintf("echo%d", i)
		exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: name, Description: "Echo.", Scopes: []string{scope}}), nil)
		mcp.AddTool(raw, &mcp.Tool{Name: "bench." + name, Description: "Echo."},
			func(ctx context.Context, _ *mcp.CallToolRequest, in benchIn) (*mcp.CallToolResult, benchOut, error) {
				out, err := echo(ctx, in)
				return nil, out, err
			})
	}
	snap, err := exp.Compile()
	if err != nil {
		b.Fatal(err)
	}
	half := policy.NewPrincipal("bench", held)
	for _, bc := range []struct {
		name   string
		server *mcp.Server
		want   int
	}{
		{"sdk_unfiltered", raw, n},
		{"agnara_filtered", mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{DevelopmentPrincipal: &half})), n / 2},
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
			b.ReportAllocs()
			for b.Loop() {
				res, err := cs.ListTools(ctx, nil)
				if err != nil || len(res.Tools) != bc.want {
					b.Fatal(err, len(res.Tools))
				}
			}
		})
	}
}

// nopObserver observes nothing, at the least cost an observer can have.
type nopObserver struct{}

func (nopObserver) Request(ctx context.Context, _ agnara.RequestInfo) (context.Context, func(agnara.Label, error)) {
	return ctx, nopRequestEnd
}

func (nopObserver) Stage(ctx context.Context, _ string, _ agnara.Stage) (context.Context, func(error)) {
	return ctx, nopStageEnd
}

func nopRequestEnd(agnara.Label, error) {}
func nopStageEnd(error)                 {}

// BenchmarkHandlerCall measures one 2026-07-28 tools/call of the echo
// capability through the HTTP handler, in process (no sockets), with the
// fast path and without it: what the handler itself costs per request.
func BenchmarkHandlerCall(b *testing.B) {
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	snap, err := exp.Compile()
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for _, fast := range []bool{true, false} {
		name := "fast"
		if !fast {
			name = "sdk"
		}
		b.Run(name, func(b *testing.B) {
			h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{DisableFastPath: !fast})
			if err != nil {
				b.Fatal(err)
			}
			header := baseHeader("tools/call", "echo")
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
				req.Header = header
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
}
