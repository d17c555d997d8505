package approval_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsClient serves the approval tools of store to one MCP client acting as
// who, in memory at 2026-07-28. The client answers every confirmation with
// confirm.
func toolsClient(t *testing.T, store approval.Store, who policy.Principal, confirm bool) (*mcp.ClientSession, *[]string) {
	t.Helper()
	app := agnara.New("host", nil)
	exp := mcpexpose.New(app)
	for _, c := range approval.RegisterTools(app, store, nil) {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv := mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{DevelopmentPrincipal: &who}))
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	var asked []string
	client := mcp.NewClient(&mcp.Implementation{Name: "approver", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, r.Params.Message)
			if !confirm {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	})
	cs, err := client.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &asked
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res.Content[0].(*mcp.TextContent).Text, res.IsError
}

func TestApprovalTools(t *testing.T) {
	store := open(t, dbPath(t), nil)
	a, err := store.Prepare(context.Background(), testIntent(t, "k1", `{"doc":"42","title":"Q3"}`))
	if err != nil {
		t.Fatal(err)
	}

	// Without the approver scope the tools are not even listed.
	outsider, _ := toolsClient(t, store, policy.NewPrincipal("olga", nil), true)
	if res, err := outsider.ListTools(context.Background(), nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("an outsider sees %d tools (%v)", len(res.Tools), err)
	}

	// The requester may not decide their own approval, even holding the scope.
	self, _ := toolsClient(t, store, policy.NewPrincipal(requester.ID(), []string{approval.DefaultApproverScope}).WithIssuer(requester.Issuer()), true)
	if text, isErr := callText(t, self, "host.approvals_approve", map[string]any{"id": a.ID}); !isErr || !strings.Contains(text, `"code":"forbidden"`) || !strings.Contains(text, `"reason":"approval_self_decision"`) {
		t.Fatalf("self-approval: %s", text)
	}

	cs, asked := toolsClient(t, store, approver, true)
	text, isErr := callText(t, cs, "host.approvals_list", map[string]any{"state": "pending"})
	if isErr || !strings.Contains(text, a.ID) || strings.Contains(text, `"arguments"`) {
		t.Fatalf("list: %s", text)
	}
	text, _ = callText(t, cs, "host.approvals_show", map[string]any{"id": a.ID})
	var shown struct {
		Result approval.View `json:"result"`
	}
	if err := json.Unmarshal([]byte(text), &shown); err != nil || string(shown.Result.Arguments) != `{"doc":"42","title":"Q3"}` || shown.Result.Requester != requester.ID() {
		t.Fatalf("show: %s (%v)", text, err)
	}

	// Approving asks the approver's user first.
	text, isErr = callText(t, cs, "host.approvals_approve", map[string]any{"id": a.ID, "note": "checked"})
	if isErr || !strings.Contains(text, `"state":"approved"`) || len(*asked) != 1 {
		t.Fatalf("approve: %s, asked %q", text, *asked)
	}
	mustState(t, store, a.ID, approval.StateApproved)
	if text, isErr := callText(t, cs, "host.approvals_reject", map[string]any{"id": a.ID}); !isErr || !strings.Contains(text, `"code":"conflict"`) || !strings.Contains(text, `"reason":"approval_not_pending"`) {
		t.Errorf("reject after approval: %s", text)
	}
	if text, isErr := callText(t, cs, "host.approvals_show", map[string]any{"id": "apv_nosuch"}); !isErr || !strings.Contains(text, `"code":"not_found"`) || !strings.Contains(text, `"reason":"approval_not_found"`) {
		t.Errorf("unknown id: %s", text)
	}
}

func TestApprovalToolsNeedConfirmation(t *testing.T) {
	store := open(t, dbPath(t), nil)
	a, err := store.Prepare(context.Background(), testIntent(t, "k1", `{"doc":"42"}`))
	if err != nil {
		t.Fatal(err)
	}
	cs, asked := toolsClient(t, store, approver, false)
	if text, isErr := callText(t, cs, "host.approvals_approve", map[string]any{"id": a.ID}); !isErr || !strings.Contains(text, `"code":"forbidden"`) || len(*asked) != 1 {
		t.Fatalf("declined confirmation: %s, asked %q", text, *asked)
	}
	mustState(t, store, a.ID, approval.StatePending)
}

// mustServer returns the server of a NewServer call that must succeed.
func mustServer(s *mcp.Server, err error) *mcp.Server {
	if err != nil {
		panic(err)
	}
	return s
}
