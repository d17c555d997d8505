package mcpexpose_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool that is gone for now keeps its name: withdrawn, it is in no
// tools/list and answers its failure, and nothing runs. (WithdrawnOptions.Scopes
// would answer it only to callers holding them, as for the tool it
// stands for.)
func ExampleExposure_Withdrawn() {
	app := agnara.New("crm", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(Add, &agnara.CapabilityOptions{Description: "Add two integers."}), nil)
	exp.Withdrawn("crm.find_contact",
		execution.Fail(execution.Unavailable, "the contacts service is down; retry later", nil).WithReason("crm_down"), nil)
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := mcpexpose.NewServer(snap, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, _ := srv.Connect(ctx, st, nil)
	defer ss.Close()
	cs, _ := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	defer cs.Close()
	list, _ := cs.ListTools(ctx, nil)
	for _, t := range list.Tools {
		fmt.Println("listed:", t.Name)
	}
	res, _ := cs.CallTool(ctx, &mcp.CallToolParams{Name: "crm.find_contact", Arguments: map[string]any{"q": "Ada"}})
	fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// listed: crm.add
	// true {"code":"unavailable","message":"the contacts service is down; retry later","reason":"crm_down"}
}
