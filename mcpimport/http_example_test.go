package mcpimport_test

import (
	"fmt"
	"net/http"

	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Connect to an HTTP upstream as a gateway should: a pooled HTTP client of
// its own, the newest protocol revision the upstream offers, and no stream
// resumption (a 2026-07-28 call has none to resume), so that ordinary calls
// take the fast path.
func ExampleHTTPClient() {
	client := mcpimport.HTTPClient(nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint:   "http://127.0.0.1:8080/mcp",
		HTTPClient: client,
		MaxRetries: -1,
	}
	opts := &mcpimport.ConnectOptions{
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: mcpimport.HTTPProtocolVersion},
	}
	// sess, err := mcpimport.Connect(ctx, "upstream", transport, opts)
	_, _ = transport, opts

	t := client.Transport.(*http.Transport)
	fmt.Println("idle connections per host:", t.MaxIdleConnsPerHost)
	fmt.Println("overall timeout:", client.Timeout)
	fmt.Println("protocol:", mcpimport.HTTPProtocolVersion)
	// Output:
	// idle connections per host: 64
	// overall timeout: 0s
	// protocol: 2026-07-28
}
