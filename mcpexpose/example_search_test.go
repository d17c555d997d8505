package mcpexpose_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type InvoiceIn struct {
	Customer string `json:"customer" jsonschema:"minLength=1"`
}

// A catalog too big to list: tools/list holds search_tools and call_tool
// (and the tools named in Listed); a search answers the definitions of the
// best matches, and call_tool calls one as if it were called by its name.
func ExampleExposure_Search() {
	app := agnara.New("billing", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(ctx context.Context, in InvoiceIn) (string, error) {
		return "invoice sent to " + in.Customer, nil
	}, &agnara.CapabilityOptions{Name: "send_invoice", Title: "Send invoice", Description: "Email an invoice to a customer."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, in InvoiceIn) (int, error) {
		return 42, nil
	}, &agnara.CapabilityOptions{Name: "balance", Description: "The amount a customer owes."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) {
		return "ok", nil
	}, &agnara.CapabilityOptions{Name: "status", Description: "Whether billing is up."}), nil)
	exp.Search(&mcpexpose.SearchOptions{Listed: []string{"billing.status"}, Results: 5})
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	cs := connectInMemory(snap)
	defer cs.Close()
	ctx := context.Background()

	list, _ := cs.ListTools(ctx, nil)
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	found, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "email an invoice"}})
	for _, t := range found.StructuredContent.(map[string]any)["tools"].([]any) {
		fmt.Println("found:", t.(map[string]any)["name"])
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{
		"name": "billing.send_invoice", "arguments": map[string]any{"customer": "ACME"}}})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// listed: search_tools
	// listed: call_tool
	// listed: billing.status
	// found: billing.send_invoice
	// {"result":"invoice sent to ACME"}
}
