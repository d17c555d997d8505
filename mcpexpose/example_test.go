package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

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

type ArchiveInput struct {
	ID string `json:"id"`
}

// What a 2026-07-28 client sends for a confirmation, on the wire: round 1
// answers with the question and a sealed requestState; the retry repeats
// the call with the state unchanged and the answer under the question's
// key. (A form is answered the same way, its content matching the form's
// requestedSchema.)
func ExampleHandler_confirmation() {
	app := agnara.New("docs", nil)
	archive := app.Capability(func(ctx context.Context, in ArchiveInput) (string, error) {
		return "archived " + in.ID, nil
	}, &agnara.CapabilityOptions{Name: "archive", Description: "Archive a document.", Confirm: "Archive it?"})
	exp := mcpexpose.New(app)
	exp.Tool(archive, nil)
	snap, err := exp.Compile()
	if err != nil {
		panic(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	call := func(extra string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"docs.archive","arguments":{"id":"d-7"},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"example","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}` + extra + `}}`
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "docs.archive")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if i := bytes.Index(raw, []byte("data: ")); i >= 0 { // an event stream
			raw = bytes.TrimSpace(raw[i+len("data: "):])
		}
		var msg struct{ Result map[string]any }
		if err := json.Unmarshal(raw, &msg); err != nil {
			panic(err)
		}
		return msg.Result
	}

	round1 := call("")
	question, _ := json.Marshal(round1["inputRequests"])
	fmt.Println(round1["resultType"], string(question))

	state, _ := json.Marshal(round1["requestState"])
	retry := call(`,"requestState":` + string(state) +
		`,"inputResponses":{"agnara.confirm":{"action":"accept","content":{"confirm":true}}}`)
	fmt.Println(retry["resultType"], retry["structuredContent"])
	// Output:
	// input_required {"agnara.confirm":{"method":"elicitation/create","params":{"message":"Archive it?","mode":"form","requestedSchema":{"properties":{"confirm":{"title":"Confirm","type":"boolean"}},"required":["confirm"],"type":"object"}}}}
	// complete map[result:archived d-7]
}

// A hardened *http.Server for a handler: slow clients are cut off, and
// responses may stream as long as Write allows.
func ExampleNewHTTPServer() {
	srv := mcpexpose.NewHTTPServer(http.NotFoundHandler(), &mcpexpose.HTTPTimeouts{Write: 30 * time.Minute})
	fmt.Println(srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout)
	// Output:
	// 10s 30s 30m0s 2m0s
}
