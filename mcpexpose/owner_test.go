package mcpexpose_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallerMappedByTheRequestsOwner counts the identity mapper's runs for
// each request the SDK serves on a caller's behalf, at both eras: the
// request's one owner, the SDK's route, maps its caller once, from the
// token facts the SDK hands it (ADR 75), and acts as that caller (wendy
// reads what only she may). An edge that also mapped the requests it
// hands over would count two.
func TestCallerMappedByTheRequestsOwner(t *testing.T) {
	var runs atomic.Int64
	counting := func(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
		runs.Add(1)
		return mapper(ctx, id)
	}
	srv := serve(t, &fixture{snap: docsSnapshot(t)}, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: counting}})
	ctx := context.Background()
	for _, version := range []string{"", "2025-11-25"} {
		cs := connect(t, srv.URL+"/mcp", "writer", version, nil)
		for _, c := range []struct {
			name string
			do   func() error
		}{
			{"resources/list", func() error { _, err := cs.ListResources(ctx, nil); return err }},
			{"resources/read", func() error {
				res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "docs://secret"})
				if err == nil && (len(res.Contents) != 1 || string(res.Contents[0].Blob) != "\x01\x02\x03") {
					t.Errorf("version %q: wendy's read of the secret = %+v", version, res.Contents)
				}
				return err
			}},
			{"prompts/get", func() error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "audit"})
				return err
			}},
			{"completion/complete", func() error {
				_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "docs.summarize"}, Argument: mcp.CompleteParamsArgument{Name: "topic", Value: "go"}})
				return err
			}},
		} {
			before := runs.Load()
			if err := c.do(); err != nil {
				t.Fatalf("version %q, %s: %v", version, c.name, err)
			}
			if n := runs.Load() - before; n != 1 {
				t.Errorf("version %q, %s: the identity mapper ran %d times, want once", version, c.name, n)
			}
		}
	}
}
