package main

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/examples/internal/userservice"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUserResourceAndPrompt, in both eras, reads a user through the
// users://{id} template, gets the welcome prompt for them, completes their
// id, and reads a user who does not exist.
func TestUserResourceAndPrompt(t *testing.T) {
	for _, version := range []string{agnaratest.Modern, agnaratest.Handshake} {
		t.Run(version, func(t *testing.T) {
			_, c := inProcess(t, config{devScopes: "users:read users:write"}, io.Discard, agnaratest.Options{ProtocolVersion: version})
			var created userservice.User
			if c.CallValue(t, "users.create_user", map[string]any{"name": "Ada", "email": "ada@example.com"}, &created); created.ID == "" {
				t.Fatalf("created %+v", created)
			}
			id, cs := created.ID, c.Session()

			tmpls, err := cs.ListResourceTemplates(t.Context(), nil)
			if err != nil || len(tmpls.ResourceTemplates) != 1 || tmpls.ResourceTemplates[0].URITemplate != "users://{id}" {
				t.Fatalf("templates = %+v, %v", tmpls, err)
			}
			if read := c.ReadResource(t, "users://"+id); len(read.Contents) != 1 || read.Contents[0].MIMEType != "application/json" || !strings.Contains(read.Contents[0].Text, `"name":"Ada"`) {
				t.Fatalf("read users://%s = %+v", id, read)
			}
			_, err = cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "users://nobody"})
			var je *jsonrpc.Error
			if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || string(je.Data) != `{"uri":"users://nobody"}` {
				t.Errorf("read users://nobody = %v, want -32602 with data.uri", err)
			}

			if gp := c.GetPrompt(t, "users.welcome_user", map[string]string{"id": id}); len(gp.Messages) != 1 || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "Ada <ada") {
				t.Fatalf("prompt = %+v", gp)
			}
			cr, err := cs.Complete(t.Context(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "users.welcome_user"}, Argument: mcp.CompleteParamsArgument{Name: "id", Value: id}})
			if err != nil || len(cr.Completion.Values) == 0 || cr.Completion.Values[0] != id {
				t.Errorf("complete id %q = %+v, %v", id, cr, err)
			}
		})
	}
}
