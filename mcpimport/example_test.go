package mcpimport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Import one tool of a remote MCP server and call it as a capability. The
// remote server here is an SDK server in memory; in production the host
// connects its own transport, with its own credentials and limits.
func Example() {
	ctx := context.Background()
	remote := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	type SearchIn struct {
		Q string `json:"q"`
	}
	type SearchOut struct {
		Count int `json:"count"`
	}
	mcp.AddTool(remote, &mcp.Tool{Name: "search", Description: "Search the documents."},
		func(_ context.Context, _ *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, SearchOut, error) {
			return nil, SearchOut{Count: len(in.Q)}, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := remote.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}

	// The host owns the session: Connect also wires the session's monitor
	// (tools/list_changed, the negotiated protocol version).
	sess, err := mcpimport.Connect(ctx, "docs", ct, &mcpimport.ConnectOptions{
		Client:         &mcp.Implementation{Name: "host", Version: "1"},
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{
		"search": {Name: "search_docs", Title: "Search documents", Scopes: []string{"docs:read"}, NoScopeValidator: true},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	snap := cat.Snapshot()
	fmt.Println(snap.SchemaVersion(), snap.ProtocolVersion(), snap.Entries()[0].Name, snap.Digest()[:7])

	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		log.Fatal(err)
	}
	p, _ := plans.Lookup("gw.search_docs")
	out, err := p.Invoke(ctx, &execution.Invocation{
		Principal: policy.NewPrincipal("alice", []string{"docs:read"}),
		Arguments: json.RawMessage(`{"q":"mcp"}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	res := out.(execution.Success)
	fmt.Printf("%s %s\n", res.Content[0].(execution.Text).Text, res.Structured)
	// Output:
	// 1 2025-11-25 search_docs sha256:
	// {"count":3} {"count":3}
}
