package prommcp_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/prommcp"
)

type GreetInput struct {
	Name string `json:"name"`
}

// A Metrics is the server's Meter and serves its registry: here one call
// is made, and the scrape counts it under its tool and outcome.
func Example() {
	app := agnara.New("hello", nil)
	greet := app.Capability(func(_ context.Context, in GreetInput) (string, error) { return "hello, " + in.Name, nil },
		&agnara.CapabilityOptions{Name: "greet", Description: "Greets someone."})
	exp := mcpexpose.New(app)
	exp.Tool(greet, &mcpexpose.ToolOptions{Name: "greet"})
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}
	m, err := prommcp.New(nil)
	if err != nil {
		log.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Meter: m}})
	if err != nil {
		log.Fatal(err)
	}
	if err := m.Handler(h); err != nil {
		log.Fatal(err)
	}
	mcp := httptest.NewServer(h)
	defer mcp.Close()
	metrics := httptest.NewServer(m.HTTPHandler()) // in production: a listener of its own
	defer metrics.Close()

	req, _ := http.NewRequest("POST", mcp.URL, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"example","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	resp.Body.Close()

	resp, err = http.Get(metrics.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for line := range strings.Lines(string(body)) {
		if strings.HasPrefix(line, "agnara_mcp_calls_total{") || strings.HasPrefix(line, "agnara_mcp_sessions ") {
			fmt.Print(line)
		}
	}
	// Output:
	// agnara_mcp_calls_total{outcome="ok",reason="",tool="greet"} 1
	// agnara_mcp_sessions 0
}
