package execution_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// ListOrdersInput mirrors its region argument in a header: over MCP's
// 2026-07-28 HTTP transport, clients send it as Mcp-Param-Region too, so a
// proxy can route the call to the region's servers without reading the
// body, and the server refuses a call whose header says otherwise.
type ListOrdersInput struct {
	Region string `json:"region" mcp:"header=Region" jsonschema:"enum=eu,enum=us"`
	Limit  int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=100"`
}

// The mcp tag declares a header parameter (SEP-2243): the input schema
// publishes it as x-mcp-header. The handler reads the field like any other.
func Example_headerParameter() {
	app := agnara.New("shop", nil)
	list := app.Capability(func(_ context.Context, in ListOrdersInput) ([]string, error) {
		return []string{in.Region + "-1001"}, nil
	}, &agnara.CapabilityOptions{Name: "list_orders", Description: "List a region's orders."})
	plans, err := execution.Compile(app)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := plans.Plan(list)
	fmt.Println(string(p.InputSchema()))
	// Output:
	// {"type":"object","properties":{"region":{"type":"string","enum":["eu","us"],"x-mcp-header":"Region"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["region"],"additionalProperties":false}
}
