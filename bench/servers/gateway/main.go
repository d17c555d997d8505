// Command gateway re-serves the benchmark's echo tool from an upstream MCP
// server, as a production agnara-go gateway would: mcpimport connects to the
// upstream given by -upstream (loopback only), imports echo under a binding
// (concurrency-safe, no argument-level scope check, the standard schema
// profile) over mcpimport.HTTPClient at mcpimport.HTTPProtocolVersion,
// registers it with an application and serves it through
// mcpexpose.NewHandler, both protocol eras on one URL. -gogc and
// -memlimit-mib set its garbage collection policy, -gomaxprocs how many
// processors run its Go code (docs/operating.md).
//
//	go run ./servers/gateway -upstream http://127.0.0.1:PORT/mcp
//
// The benchmark driver (-gateway) starts an upstream, then this, and reads
// the CPU time of both processes.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/bench/load"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	upstream = flag.String("upstream", "", "MCP endpoint of the upstream serving echo, on a loopback address")
	protocol = flag.String("upstream-protocol", mcpimport.HTTPProtocolVersion, "protocol version to ask the upstream for (empty: the newest the SDK speaks)")
	policy   = serve.PolicyFlags()
)

// gateway connects to the upstream at url and returns the handler serving
// its echo tool again, and the upstream session, which the caller closes
// once it no longer serves the handler.
func gateway(ctx context.Context, url, version string) (http.Handler, *mcpimport.Session, error) {
	if err := load.CheckLoopback(url); err != nil {
		return nil, nil, fmt.Errorf("-upstream: %w", err)
	}
	transport := &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: upstreamClient(),
		MaxRetries: -1,
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	sess, err := mcpimport.Connect(cctx, "upstream", transport, &mcpimport.ConnectOptions{
		Client:         &mcp.Implementation{Name: "agnara-bench-gateway", Version: "1"},
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: version},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("connecting to %s: %w", url, err)
	}
	cat, err := mcpimport.Discover(cctx, sess, map[string]mcpimport.Binding{
		"echo": {
			Name: "echo", Title: "Echo",
			NoScopeValidator: true,
			ConcurrencySafe:  true,
			Profile:          mcpimport.ProfileStandard,
		},
	}, nil)
	if err != nil {
		_ = sess.Close()
		return nil, nil, fmt.Errorf("importing echo: %w", err)
	}
	app := agnara.New("gateway", nil)
	exp := mcpexpose.New(app)
	for _, c := range cat.Register(app) {
		exp.Tool(c, &mcpexpose.ToolOptions{Name: "echo"}) // not "gateway.echo": the load calls echo
	}
	snap, err := exp.Compile()
	if err == nil {
		var h http.Handler
		if h, err = mcpexpose.NewHandler(snap, nil); err == nil {
			return h, sess, nil
		}
	}
	_ = sess.Close()
	return nil, nil, err
}

// upstreamClient is the gateway's HTTP client for its upstream: pooled
// keep-alive connections (net/http keeps only 2 idle per host by default).
func upstreamClient() *http.Client { return mcpimport.HTTPClient(nil) }

func main() {
	// The session lives as long as the process.
	serve.Main(func() (http.Handler, error) {
		policy.Apply()
		h, _, err := gateway(context.Background(), *upstream, *protocol)
		return h, err
	})
}
