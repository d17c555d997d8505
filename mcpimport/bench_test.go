package mcpimport_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkImportedCall compares one tools/call made with the SDK client
// directly ("sdk") with the same call through an imported capability
// ("imported": scope guard, input validation against the remote schema,
// the call, result checks and the envelope), both over in-memory transports
// to the same SDK server.
func BenchmarkImportedCall(b *testing.B) {
	d := newDocs(nil)
	args := json.RawMessage(`{"q":"bench"}`)
	b.Run("sdk", func(b *testing.B) {
		cs, _ := connect(b, d.server, "2025-11-25")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search", Arguments: args}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("imported", func(b *testing.B) {
		cs, mon := connect(b, d.server, "2025-11-25")
		_, plans := imported(b, cs, mon, readBindings(), nil)
		p, _ := plans.Lookup("gw.search_docs")
		inv := &execution.Invocation{Principal: reader, Arguments: args}
		b.ReportAllocs()
		for b.Loop() {
			out, err := p.Invoke(context.Background(), inv)
			if err != nil {
				b.Fatal(err)
			}
			if _, ok := out.(execution.Success); !ok {
				b.Fatalf("outcome %v", out)
			}
		}
	})
}
