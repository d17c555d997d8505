// Command sdk serves the benchmark's tools (echo, and the realistic
// workload's quote: internal/realistic) with the official Go SDK alone,
// configured as agnara-go configures it: the typed mcp.AddTool (input
// validated, structured output; quote's input and output validated against
// the workload's schemas, which the SDK is given), a stateless streamable handler for
// 2026-07-28 and a stateful one (in-memory event store, 1 MiB body limit,
// 30-minute session timeout) for the handshake era, routed on the
// Mcp-Protocol-Version header exactly as mcpexpose.Handler routes.
package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/agnara-go/agnara/bench/internal/realistic"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoIn struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

// modernVersion is the first protocol version served without sessions.
const modernVersion = "2026-07-28"

func handler() (http.Handler, error) {
	logger := slog.New(slog.DiscardHandler)
	srv := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
		Logger:       logger,
	})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echo."},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
			return nil, echoOut(in), nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: realistic.ToolName, Description: realistic.Description,
		InputSchema: realistic.InputSchema, OutputSchema: realistic.OutputSchema},
		func(_ context.Context, _ *mcp.CallToolRequest, in realistic.Request) (*mcp.CallToolResult, realistic.Envelope, error) {
			return nil, realistic.Envelope{Result: realistic.Compute(in)}, nil
		})
	get := func(*http.Request) *mcp.Server { return srv }
	stateless := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       logger,
		MaxRequestBodyBytes:          1 << 20,
		PropagateRequestCancellation: true,
	})
	stateful := mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
		EventStore:          mcp.NewMemoryEventStore(nil),
		Logger:              logger,
		MaxRequestBodyBytes: 1 << 20,
		SessionTimeout:      30 * time.Minute,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v >= modernVersion {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	}), nil
}

func main() { serve.Main(handler) }
