package mcpexpose_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A running handler is handed a new snapshot, here one where a tool behind
// a feature flag is enabled. The connected client is told, lists again and
// calls the new tool on the same session.
func ExampleHandler_Swap() {
	app := agnara.New("calc", nil)
	add := app.Capability(Add, &agnara.CapabilityOptions{Description: "Add two integers."})
	double := app.Capability(func(ctx context.Context, in struct {
		N int `json:"n"`
	}) (int, error) {
		return 2 * in.N, nil
	}, &agnara.CapabilityOptions{Name: "double", Description: "Double an integer."})
	snapshot := func(doubling bool) *mcpexpose.Snapshot {
		exp := mcpexpose.New(app)
		exp.Tool(add, nil)
		if doubling {
			exp.Tool(double, nil)
		}
		snap, err := exp.Compile() // a mistake here leaves the running snapshot alone
		if err != nil {
			panic(err)
		}
		return snap
	}
	h, err := mcpexpose.NewHandler(snapshot(false), &mcpexpose.HandlerOptions{
		Server: &mcpexpose.ServerOptions{Swappable: true}, // advertises tools.listChanged
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	ctx := context.Background()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	list := func() {
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			panic(err)
		}
		var names []string
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		fmt.Println(strings.Join(names, " "))
	}
	list()

	if err := h.Swap(snapshot(true)); err != nil {
		panic(err)
	}
	select {
	case <-changed: // notifications/tools/list_changed
	case <-time.After(10 * time.Second):
		fmt.Println("not told")
	}
	list()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calc.double", Arguments: map[string]any{"n": 21}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// calc.add
	// calc.add calc.double
	// {"result":42}
}
