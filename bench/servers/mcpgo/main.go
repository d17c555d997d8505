// Command mcpgo serves the benchmark's tools (echo, and the realistic
// workload's quote: internal/realistic, with its schemas given raw) with
// github.com/mark3labs/mcp-go's streamable HTTP server, which serves both
// protocol eras on one URL by itself (the era is decided per request). It is
// configured for the same guarantees as the other MCP servers: input and
// output validated against the tools' schemas, structured output with a text
// copy, real sessions for the handshake era (validated session ids, an
// in-memory event store, a 30-minute idle timeout).
package main

import (
	"context"
	"net/http"
	"time"

	"github.com/agnara-go/agnara/bench/internal/realistic"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

type echoIn struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

func handler() (http.Handler, error) {
	s := server.NewMCPServer("bench", "1",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
		server.WithOutputSchemaValidation(),
	)
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echo."),
		mcp.WithInputSchema[echoIn](),
		mcp.WithOutputSchema[echoOut](),
	), mcp.NewStructuredToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in echoIn) (echoOut, error) {
		return echoOut(in), nil
	}))
	s.AddTool(mcp.NewTool(realistic.ToolName,
		mcp.WithDescription(realistic.Description),
		mcp.WithRawInputSchema(realistic.InputSchema),
		mcp.WithRawOutputSchema(realistic.OutputSchema),
	), mcp.NewStructuredToolHandler(func(_ context.Context, _ mcp.CallToolRequest, in realistic.Request) (realistic.Envelope, error) {
		return realistic.Envelope{Result: realistic.Compute(in)}, nil
	}))
	return server.NewStreamableHTTPServer(s,
		server.WithStateful(true),
		server.WithEventStore(server.NewInMemoryEventStore()),
		server.WithSessionIdleTTL(30*time.Minute),
	), nil
}

func main() { serve.Main(handler) }
