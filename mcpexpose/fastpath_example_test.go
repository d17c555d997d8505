package mcpexpose_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// A single 2026-07-28 tools/call is answered on the handler's fast path;
// with DisableFastPath the same request goes through the SDK, with the
// same answer.
func ExampleHandler_FastPathRequests() {
	app := agnara.New("hello", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "hello, " + in.Name, nil
	}, &agnara.CapabilityOptions{Name: "greet", Description: "Greet someone."}), &mcpexpose.ToolOptions{Name: "greet"})
	snap, err := exp.Compile()
	if err != nil {
		panic(err)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, disable := range []bool{false, true} {
		h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{DisableFastPath: disable})
		if err != nil {
			panic(err)
		}
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "greet")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `hello, Ada`), h.FastPathRequests())
	}
	// Output:
	// 200 true 1
	// 200 true 0
}
