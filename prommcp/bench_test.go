package prommcp_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/prommcp"
)

type EchoInput struct {
	Message string `json:"message"`
}

// BenchmarkHandlerCallMetered measures one 2026-07-28 tools/call through
// the HTTP handler's fast path, in process, without a Meter and with this
// package's: what metrics cost per call (run both in one process and read
// the ratio).
func BenchmarkHandlerCallMetered(b *testing.B) {
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(_ context.Context, in EchoInput) (EchoInput, error) { return in, nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	snap, err := exp.Compile()
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello, world"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`)
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "application/json, text/event-stream")
	header.Set("Mcp-Protocol-Version", "2026-07-28")
	header.Set("Mcp-Method", "tools/call")
	header.Set("Mcp-Name", "echo")
	for _, metered := range []bool{false, true} {
		name := "off"
		var so mcpexpose.ServerOptions
		if metered {
			name = "on"
			m, err := prommcp.New(nil)
			if err != nil {
				b.Fatal(err)
			}
			so.Meter = m
		}
		b.Run(name, func(b *testing.B) {
			h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &so})
			if err != nil {
				b.Fatal(err)
			}
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
			if h.FastPathRequests() == 0 {
				b.Fatal("the fast path answered none")
			}
		})
	}
}
