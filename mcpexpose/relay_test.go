package mcpexpose_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
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

// TestAnswerThatDoesNotFitTheForm: an accepted answer that does not fit
// the form ends the call with the same canonical invalid_input failure,
// naming its violations, at every era: at 2026-07-28 the answer comes in
// inputResponses; in the handshake era as the client's answer to
// elicitation/create, which the SDK's own check used to turn into a
// JSON-RPC error with code 0. A relayed form, a form of the handler's own
// (execution.Ask), and a prompt that asks.
func TestAnswerThatDoesNotFitTheForm(t *testing.T) {
	relayed := json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}`)
	type Name struct {
		Name string `json:"name" jsonschema:"minLength=1"`
	}
	own := execution.NewForm[Name]("What is your name?")
	var ran atomic.Int32
	app := agnara.New("ops", nil)
	relay := app.Capability(func(ec *execution.Context) (string, error) {
		a, err := ec.Relay("upstream", execution.InputRequest{Kind: execution.Elicitation, Message: "Go ahead?", Schema: relayed})
		if err != nil {
			return "", err
		}
		ran.Add(1)
		return string(a.Content), nil
	}, &agnara.CapabilityOptions{Name: "relay", Description: "Relay the upstream's question."})
	ask := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", own)
		if err != nil {
			return "", err
		}
		ran.Add(1)
		return v.Name, nil
	}, &agnara.CapabilityOptions{Name: "ask", Description: "Ask a name.", Forms: []agnara.Form{own}})
	greet := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", own)
		if err != nil {
			return "", err
		}
		ran.Add(1)
		return "Greet " + v.Name, nil
	}, &agnara.CapabilityOptions{Name: "greet", Description: "A greeting prompt.", Forms: []agnara.Form{own}})
	exp := mcpexpose.New(app)
	exp.Tool(relay, nil)
	exp.Tool(ask, nil)
	exp.Prompt(greet, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, tc := range []struct {
		name       string
		call       func(context.Context, *mcp.ClientSession) (mcp.Result, error)
		fits, sent string // the handler's answer, and the answer on the wire
		want       string // the outcome, at every era
	}{
		{"a relayed form", func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "ops.relay"})
		}, `{"confirm":true}`, `{"confirm":"yes"}`,
			`isError {"code":"invalid_input","details":{"question":"upstream","violations":[{"message":"want boolean, got string","path":"/confirm"}]},"message":"the answer to \"upstream\" does not match the requested form: /confirm: want boolean, got string"}`},
		{"a form of the handler's own", func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: "ops.ask"})
		}, `{"name":"Ada"}`, `{"name":""}`,
			`isError {"code":"invalid_input","details":{"question":"name","violations":[{"message":"must not be empty","path":"/name"}]},"message":"the answer to \"name\" does not match the requested form: /name: must not be empty"}`},
		{"a prompt's form", func(ctx context.Context, cs *mcp.ClientSession) (mcp.Result, error) {
			return cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "ops.greet"})
		}, `{"name":"Ada"}`, `{"name":""}`,
			`error -32602 "the answer to \"name\" does not match the requested form: /name: must not be empty" {"code":"invalid_input","details":{"question":"name","violations":[{"message":"must not be empty","path":"/name"}]},"message":"the answer to \"name\" does not match the requested form: /name: must not be empty","name":"ops.greet"}`},
	} {
		for _, era := range eras {
			t.Run(tc.name+"/"+era.name, func(t *testing.T) {
				c := mcp.NewClient(&mcp.Implementation{Name: "careless", Version: "1"}, elicit(func(*mcp.ElicitRequest) *mcp.ElicitResult {
					var content map[string]any
					json.Unmarshal([]byte(tc.fits), &content)
					return &mcp.ElicitResult{Action: "accept", Content: content}
				}))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				hc := &http.Client{Transport: mcptest.Misanswering{From: tc.fits, To: tc.sent}}
				cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				before := ran.Load()
				res, err := tc.call(ctx, cs)
				got := outcomeText(res, err)
				if got != tc.want {
					t.Errorf("outcome:\n got %s\nwant %s", got, tc.want)
				}
				if ran.Load() != before {
					t.Error("the handler went on with an answer that does not fit its form")
				}
			})
		}
	}
}

// outcomeText is a call's outcome as TestAnswerThatDoesNotFitTheForm
// compares it: a tool result's text, marked when it is an error, or a
// JSON-RPC error's code, message and data.
func outcomeText(res mcp.Result, err error) string {
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire):
		return fmt.Sprintf("error %d %q %s", wire.Code, wire.Message, wire.Data)
	case err != nil:
		return "error " + err.Error()
	}
	b, _ := json.Marshal(res)
	if r, ok := res.(*mcp.CallToolResult); ok && len(r.Content) == 1 {
		if text, ok := r.Content[0].(*mcp.TextContent); ok {
			mark := ""
			if r.IsError {
				mark = "isError "
			}
			return mark + text.Text
		}
	}
	return string(b)
}
