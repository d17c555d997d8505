// Command mcpgoproxy re-serves the tools of an upstream MCP server with
// github.com/mark3labs/mcp-go alone: an mcp-go client connected to the
// upstream given by -upstream (loopback only) lists its tools once, and an
// mcp-go server, configured as servers/mcpgo is (input and output
// validated against the tools' schemas, real sessions for the handshake
// era), serves each again with a handler that calls it upstream through
// the client. It is the mcp-go counterpart of servers/gateway, for issue
// 40's comparison: the gateway's own CPU per call against this one's.
// -gogc, -memlimit-mib and -gomaxprocs set the same runtime policy as the
// gateway's flags.
//
//	go run ./servers/mcpgoproxy -upstream http://127.0.0.1:PORT/mcp
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

var (
	upstream = flag.String("upstream", "", "MCP endpoint of the upstream, on a loopback address")
	policy   = serve.PolicyFlags()
)

// proxy connects to the upstream at url and returns the handler serving
// its tools again, and the client, which the caller closes once it no
// longer serves the handler.
func proxy(ctx context.Context, url string) (http.Handler, *client.Client, error) {
	if err := load.CheckLoopback(url); err != nil {
		return nil, nil, fmt.Errorf("-upstream: %w", err)
	}
	// The gateway's connection pool, so that the two differ by their code.
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPBasicClient(mcpimport.HTTPClient(nil)))
	if err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := c.Start(cctx); err != nil {
		return nil, nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "agnara-bench-mcpgoproxy", Version: "1"}
	if _, err := c.Initialize(cctx, init); err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	list, err := c.ListTools(cctx, mcp.ListToolsRequest{})
	if err != nil {
		_ = c.Close()
		return nil, nil, fmt.Errorf("listing the tools of %s: %w", url, err)
	}
	s := server.NewMCPServer("bench-mcpgoproxy", "1",
		server.WithToolCapabilities(false),
		server.WithInputSchemaValidation(),
		server.WithOutputSchemaValidation(),
	)
	for _, t := range list.Tools {
		name := t.Name
		s.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments}})
		})
	}
	return server.NewStreamableHTTPServer(s,
		server.WithStateful(true),
		server.WithEventStore(server.NewInMemoryEventStore()),
		server.WithSessionIdleTTL(30*time.Minute),
	), c, nil
}

func main() {
	// The client lives as long as the process.
	serve.Main(func() (http.Handler, error) {
		policy.Apply()
		h, _, err := proxy(context.Background(), *upstream)
		return h, err
	})
}
