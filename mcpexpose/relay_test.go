package mcpexpose_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// TestRelayedQuestionsKeepRoundState: a handler that relays another
// party's questions, two rounds of them, finds on each round the state it
// kept on the one before, at both eras: sealed in the requestState at
// 2026-07-28, carried by the bridged rounds on a handshake-era session.
func TestRelayedQuestionsKeepRoundState(t *testing.T) {
	form := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}`)
	app := agnara.New("ops", nil)
	relay := app.Capability(func(ec *execution.Context) (string, error) {
		kept := string(ec.RoundState())
		if err := ec.SetRoundState([]byte(kept + "r")); err != nil {
			return "", err
		}
		for _, q := range []string{"First?", "Second?"} {
			if _, err := ec.Relay(q, execution.InputRequest{Kind: execution.Elicitation, Message: q, Schema: form}); err != nil {
				return "", err
			}
		}
		return "kept " + kept, nil
	}, &agnara.CapabilityOptions{Name: "relay", Description: "Relay two questions."})
	exp := mcpexpose.New(app)
	exp.Tool(relay, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			var asked []string
			cs := connect(t, url, "", era.version, elicit(func(r *mcp.ElicitRequest) *mcp.ElicitResult {
				asked = append(asked, r.Params.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
			}))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops.relay"})
			if err != nil || res.IsError || textOf(t, res) != `{"result":"kept rr"}` {
				t.Fatalf("relay = %+v, %v", res, err)
			}
			if len(asked) != 2 {
				t.Errorf("asked %q, want both questions, one round each", asked)
			}
		})
	}
}
