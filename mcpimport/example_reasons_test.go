package mcpimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A host program reads why anything failed with one accessor,
// execution.ReasonOf, whichever package made the error and however it was
// wrapped: a discovery error, an invocation the local pipeline refused, a
// failed call of an imported tool, an approval store's refusal. errors.Is
// and errors.As work on the same errors as before.
func Example_failureReasons() {
	ctx := context.Background()
	why := func(what string, err error) {
		fmt.Printf("%-18s %s\n", what+":", execution.ReasonOf(err))
	}

	remote := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	type SearchIn struct {
		Q string `json:"q"`
	}
	mcp.AddTool(remote, &mcp.Tool{Name: "search", Description: "Search the documents."},
		func(context.Context, *mcp.CallToolRequest, SearchIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := remote.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	sess, err := mcpimport.Connect(ctx, "docs", ct, &mcpimport.ConnectOptions{
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"},
	})
	if err != nil {
		log.Fatal(err)
	}

	// Discovery: a binding names a tool the server does not list.
	_, err = mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{
		"find": {Name: "find_docs", Title: "Find documents", NoScopeValidator: true},
	}, nil)
	why("discovery", fmt.Errorf("importing docs: %w", err))

	cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{
		"search": {Name: "search_docs", Title: "Search documents", NoScopeValidator: true},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		log.Fatal(err)
	}
	p, _ := plans.Lookup("gw.search_docs")
	call := func(args string) error {
		out, err := p.Invoke(ctx, &execution.Invocation{Principal: policy.NewPrincipal("alice", nil), Arguments: json.RawMessage(args)})
		if err != nil {
			return err
		}
		if f, ok := out.(*execution.Failure); ok {
			return f
		}
		return nil
	}

	// The local pipeline: arguments that do not match the remote schema.
	why("invocation", call(`{"q":7}`))
	// The remote call: the session is closed.
	sess.Close()
	why("remote call", call(`{"q":"mcp"}`))

	// The approval store.
	dir, err := os.MkdirTemp("", "reasons")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	store, err := approval.OpenSQLite(filepath.Join(dir, "approvals.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	_, err = store.Get(ctx, "apv_nosuch")
	err = fmt.Errorf("showing the approval: %w", err)
	why("approval", err)

	switch execution.ReasonOf(err) {
	case approval.ReasonNotFound:
		fmt.Println("no such approval; still errors.Is:", errors.Is(err, approval.ErrNotFound))
	default:
		fmt.Println("something else:", err)
	}
	// Output:
	// discovery:         mcp_tool_missing
	// invocation:        invalid_input
	// remote call:       mcp_connection_closed
	// approval:          approval_not_found
	// no such approval; still errors.Is: true
}
