package mcpexpose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type AddInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

func Add(ctx context.Context, in AddInput) (int, error) { return in.A + in.B, nil }

// Declaring tools and compiling them into a snapshot; the projected SDK tool
// carries the closed input schema and an output schema for the result
// envelope.
func ExampleExposure() {
	app := agnara.New("calc", nil)
	add := app.Capability(Add, &agnara.CapabilityOptions{
		Description: "Add two integers.",
		Annotations: agnara.ReadOnly | agnara.Idempotent,
	})
	exp := mcpexpose.New(app)
	exp.Tool(add, nil) // wire name: the identity, "calc.add"
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	tool, _ := snap.Tool("calc.add")
	b, _ := json.Marshal(tool)
	fmt.Println(snap.Names())
	fmt.Println(string(b))
	// Output:
	// [calc.add]
	// {"annotations":{"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"readOnlyHint":true},"description":"Add two integers.","inputSchema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false},"name":"calc.add","outputSchema":{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"],"additionalProperties":false}}
}

// Outcomes become tool results in exactly one place.
func ExampleProjectResult() {
	for _, out := range []execution.Outcome{
		execution.Success{Value: map[string]int{"total": 42}},
		execution.Fail(execution.NotFound, "no such order", map[string]any{"order": "A-1"}),
	} {
		res, _ := mcpexpose.ProjectResult(out)
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false {"result":{"total":42}}
	// true {"code":"not_found","details":{"order":"A-1"},"message":"no such order"}
}

// Serving a snapshot over HTTP: one handler, mounted at any path, serves
// both protocol eras. Here a Go SDK client calls a tool through it.
func ExampleNewHandler() {
	app := agnara.New("calc", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(Add, &agnara.CapabilityOptions{Description: "Add two integers."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		panic(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux) // 127.0.0.1, a free port
	defer srv.Close()

	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "calc.add", Arguments: map[string]any{"a": 2, "b": 3}})
	if err != nil {
		panic(err)
	}
	fmt.Println(cs.InitializeResult().ProtocolVersion, res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// 2026-07-28 {"result":5}
}
