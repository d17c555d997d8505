package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUserResourceAndPrompt starts the example and, in both eras with the
// Go SDK client, reads a user through the users://{id} template, gets the
// welcome prompt for them, completes their id, and reads a user who does
// not exist.
func TestUserResourceAndPrompt(t *testing.T) {
	url := startExample(t, "-dev-scopes", "users:read users:write")
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
				Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.create_user", Arguments: map[string]any{"name": "Ada", "email": "ada" + version + "@example.com"}})
			if err != nil || res.IsError {
				t.Fatalf("create: %+v, %v", res, err)
			}
			var created struct {
				Result struct{ ID string } `json:"result"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &created); err != nil || created.Result.ID == "" {
				t.Fatalf("created %s", b)
			}
			id := created.Result.ID

			tmpls, err := cs.ListResourceTemplates(ctx, nil)
			if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "users://{id}" {
				t.Fatalf("templates = %+v, %v", tmpls, err)
			}
			read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "users://" + id})
			if err != nil || len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/json" || !strings.Contains(read.Contents[0].Text, `"name":"Ada"`) {
				t.Fatalf("read users://%s = %+v, %v", id, read, err)
			}
			_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "users://nobody"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || string(je.Data) != `{"uri":"users://nobody"}` {
				t.Errorf("read users://nobody = %v, want -32602 with data.uri", err)
			}

			gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "users.welcome_user", Arguments: map[string]string{"id": id}})
			if err != nil || len(gp.Messages) != 1 || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "Ada <ada") {
				t.Fatalf("prompt = %+v, %v", gp, err)
			}
			cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "users.welcome_user"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: id}})
			if err != nil || len(cr.Completion.Values) == 0 || cr.Completion.Values[0] != id {
				t.Errorf("complete id %q = %+v, %v", id, cr, err)
			}
		})
	}
}
