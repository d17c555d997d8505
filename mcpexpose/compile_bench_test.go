package mcpexpose_test

import (
	"fmt"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// BenchmarkCompile compiles an exposure of 1,000 tools that share one input
// and one output type, as tools over one domain type do: the whole start-up
// cost of an MCP server (plans, schemas, tool projection, output-envelope
// validators). The budget is 100 ms.
func BenchmarkCompile(b *testing.B) {
	const n = 1000
	b.ReportAllocs()
	for b.Loop() {
		app := agnara.New("bench", nil)
		exp := mcpexpose.New(app)
		for i := range n {
			exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: fmt.Sprintf("echo%d", i), Description: "Echo.", Scopes: []string{"s"}}), nil)
		}
		if _, err := exp.Compile(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/tool")
}
