package mcpexpose_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// Limits bounds what a handler holds for its callers: here one
// handshake-era session at a time, so a second initialize is refused with
// 503 and Retry-After until the first session ends. Every other limit
// keeps its default.
func ExampleLimits() {
	app := agnara.New("hello", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(context.Context) (string, error) { return "hi", nil },
		&agnara.CapabilityOptions{Name: "hi", Description: "Says hi."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		panic(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
		Limits: &mcpexpose.Limits{MaxSessions: 1},
	})
	if err != nil {
		panic(err)
	}
	for range 2 {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, rec.Header().Get("Retry-After"), rec.Header().Get("Mcp-Session-Id") != "")
	}
	// Output:
	// 200  true
	// 503 30 false
}
