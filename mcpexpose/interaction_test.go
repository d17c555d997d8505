package mcpexpose_test

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type PurgeIn struct {
	ID string `json:"id"`
}

type Contact struct {
	Name  string `json:"name" jsonschema:"minLength=1"`
	Email string `json:"email" jsonschema:"format=email"`
}

var contactForm = execution.NewForm[Contact]("Who should we notify?")

// interactiveApp has a destructive capability that requires confirmation,
// and one that asks two rounds of questions (a form, then a yes/no).
func interactiveApp(t testing.TB, purged, notified *atomic.Int32) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("ops", nil)
	purge := app.Capability(func(ctx context.Context, in PurgeIn) (string, error) {
		purged.Add(1)
		return "purged " + in.ID, nil
	}, &agnara.CapabilityOptions{Name: "purge", Description: "Purge a record.", Confirm: "Purge this record for good?", Annotations: agnara.Destructive})
	notify := app.Capability(func(ec *execution.Context) (string, error) {
		c, err := execution.Ask(ec, "contact", contactForm)
		if err != nil {
			return "", err
		}
		ok, err := ec.Confirm("send", "Send the notification to "+c.Name+"?")
		if err != nil {
			return "", err
		}
		if !ok {
			return "not sent", nil
		}
		notified.Add(1)
		return "sent to " + c.Email, nil
	}, &agnara.CapabilityOptions{Name: "notify", Description: "Notify someone.", Forms: []agnara.Form{contactForm}})
	exp := mcpexpose.New(app)
	exp.Tool(purge, nil)
	exp.Tool(notify, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func elicit(answers func(*mcp.ElicitRequest) *mcp.ElicitResult) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return answers(r), nil
	}}
}

func TestConfirmationOverBothEras(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			before := purged.Load()
			var asked []string
			yes := connect(t, url, "", era.version, elicit(func(r *mcp.ElicitRequest) *mcp.ElicitResult {
				asked = append(asked, r.Params.Message)
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
			}))
			res, err := yes.CallTool(ctx, &mcp.CallToolParams{Name: "ops.purge", Arguments: map[string]any{"id": "r1"}})
			if err != nil || res.IsError || textOf(t, res) != `{"result":"purged r1"}` {
				t.Fatalf("confirmed purge = %+v, %v", res, err)
			}
			if purged.Load() != before+1 || len(asked) != 1 || asked[0] != "Purge this record for good?" {
				t.Errorf("purged %d times, asked %q", purged.Load()-before, asked)
			}

			no := connect(t, url, "", era.version, elicit(func(*mcp.ElicitRequest) *mcp.ElicitResult {
				return &mcp.ElicitResult{Action: "decline"}
			}))
			res, err = no.CallTool(ctx, &mcp.CallToolParams{Name: "ops.purge", Arguments: map[string]any{"id": "r2"}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(textOf(t, res), `"code":"forbidden"`) || purged.Load() != before+1 {
				t.Errorf("declined purge = %q (purged %d)", textOf(t, res), purged.Load()-before)
			}
		})
	}
}

func TestTwoRoundsOverBothEras(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			var rounds []string
			cs := connect(t, url, "", era.version, elicit(func(r *mcp.ElicitRequest) *mcp.ElicitResult {
				rounds = append(rounds, r.Params.Message)
				if strings.HasPrefix(r.Params.Message, "Who") {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "email": "ada@example.com"}}
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
			}))
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops.notify"})
			if err != nil || res.IsError || textOf(t, res) != `{"result":"sent to ada@example.com"}` {
				t.Fatalf("notify = %+v, %v", res, err)
			}
			if len(rounds) != 2 || rounds[1] != "Send the notification to Ada?" {
				t.Errorf("rounds = %q", rounds)
			}
		})
	}
}

func TestUndeclaredCapabilityIsRefused(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, era := range eras[:2] {
		cs := connect(t, url, "", era.version, nil) // no elicitation handler: not declared
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ops.purge", Arguments: map[string]any{"id": "r1"}})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeMissingRequiredClientCapabilities || !strings.Contains(string(rpcErr.Data), `"elicitation":{}`) {
			t.Errorf("%s: error = %v, want -32021 naming elicitation", era.name, err)
		}
	}
	if purged.Load() != 0 {
		t.Error("the capability ran")
	}
}

// TestTypeScriptClientAnswersTwoRounds has the TypeScript SDK client, which
// speaks the handshake era, answer a form and then a confirmation: two
// rounds of server-to-client elicitation within one tools/call.
func TestTypeScriptClientAnswersTwoRounds(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	run := func(tool, args, answers string) (version string, elicited []string, text string, isError bool) {
		t.Helper()
		out, err := exec.Command(node, filepath.Join("..", "conformance", "ts-client.mjs"), url, tool, args, answers).Output()
		if err != nil {
			t.Fatalf("TypeScript client: %v", err)
		}
		var got struct {
			ProtocolVersion string   `json:"protocolVersion"`
			Elicited        []string `json:"elicited"`
			Result          struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(out, &got); err != nil || len(got.Result.Content) == 0 {
			t.Fatalf("TypeScript client printed %q", out)
		}
		return got.ProtocolVersion, got.Elicited, got.Result.Content[0].Text, got.Result.IsError
	}

	version, elicited, text, isError := run("ops.notify", "{}", `[{"name":"Ada","email":"ada@example.com"},{"confirm":true}]`)
	if version != "2025-11-25" || isError || text != `{"result":"sent to ada@example.com"}` || notified.Load() != 1 {
		t.Errorf("notify: version %s, text %s (notified %d)", version, text, notified.Load())
	}
	if diff := cmp.Diff([]string{"Who should we notify?", "Send the notification to Ada?"}, elicited); diff != "" {
		t.Errorf("elicitations (-want +got):\n%s", diff)
	}

	// A destructive capability runs only after an accepted confirmation.
	_, _, text, isError = run("ops.purge", `{"id":"r9"}`, `["decline"]`)
	if !isError || !strings.Contains(text, `"code":"forbidden"`) || purged.Load() != 0 {
		t.Errorf("declined purge: %s (purged %d)", text, purged.Load())
	}
	_, _, text, isError = run("ops.purge", `{"id":"r9"}`, `[{"confirm":true}]`)
	if isError || text != `{"result":"purged r9"}` || purged.Load() != 1 {
		t.Errorf("confirmed purge: %s (purged %d)", text, purged.Load())
	}
}
