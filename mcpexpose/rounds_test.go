package mcpexpose_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// roundsWorld has one capability of each kind that asks before it acts,
// all behind one policy whose decision the test changes (gate) and one
// rate limit: register (a tool: a form, then a confirmation), greet (a
// prompt: a form) and later (a task tool: a form, asked through the task).
// runs counts the handlers that went past their questions.
type roundsWorld struct {
	snap  *mcpexpose.Snapshot
	open  atomic.Bool // the gate's decision
	runs  atomic.Int32
	gated atomic.Int32 // the gate's evaluations
}

var askName = execution.NewForm[tasktest.NameAnswer]("Your name?")

func newRoundsWorld(t *testing.T, limit agnara.RateLimit) *roundsWorld {
	t.Helper()
	w := &roundsWorld{}
	w.open.Store(true)
	gate := policy.Func(func(context.Context, policy.Request) error {
		w.gated.Add(1)
		if !w.open.Load() {
			return policy.Deny("the gate is closed")
		}
		return nil
	})
	opts := func(name string) *agnara.CapabilityOptions {
		return &agnara.CapabilityOptions{Name: name, Description: "Asks, then acts.", Policies: []policy.Policy{gate}, RateLimit: limit, Forms: []agnara.Form{askName}}
	}
	app := agnara.New("rounds", nil)
	register := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", askName)
		if err != nil {
			return "", err
		}
		ok, err := ec.Confirm("sure", "Register "+v.Name+"?")
		if err != nil || !ok {
			return "not registered", err
		}
		w.runs.Add(1)
		return "registered " + v.Name, nil
	}, opts("register"))
	greet := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", askName)
		if err != nil {
			return "", err
		}
		w.runs.Add(1)
		return "hello " + v.Name, nil
	}, opts("greet"))
	later := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", askName)
		if err != nil {
			return "", err
		}
		w.runs.Add(1)
		return "later " + v.Name, nil
	}, opts("later"))
	exp := mcpexpose.New(app)
	exp.Tool(register, &mcpexpose.ToolOptions{Name: "register"})
	exp.Prompt(greet, &mcpexpose.PromptOptions{Name: "greet"})
	exp.Tool(later, &mcpexpose.ToolOptions{Name: "later", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	w.snap = snap
	return w
}

// answering answers the world's questions as Ann would, calling between
// first, if not nil, before each answer: what changes between rounds.
func answering(between func()) *mcp.ClientOptions {
	return elicit(func(r *mcp.ElicitRequest) *mcp.ElicitResult {
		if between != nil {
			between()
		}
		if strings.HasPrefix(r.Params.Message, "Register") {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}
	})
}

// roundsCase is one way to call the world and get its answer as text, or
// the error's text.
type roundsCase struct {
	name string
	run  func(t *testing.T, w *roundsWorld, url string, between func()) string
}

// roundsCases call every kind of capability of the world, in both eras
// where it exists, answering every question: the resumed rounds are a
// 2026-07-28 retry with sealed request state, a handshake-era round
// bridged on the session, or a task's later round.
var roundsCases = []roundsCase{
	{"tool 2026-07-28", func(t *testing.T, _ *roundsWorld, url string, between func()) string {
		return callText(t, connect(t, url, "alice", "", answering(between)), "register")
	}},
	{"tool 2025-11-25", func(t *testing.T, _ *roundsWorld, url string, between func()) string {
		return callText(t, connect(t, url, "alice", "2025-11-25", answering(between)), "register")
	}},
	{"prompt 2026-07-28", func(t *testing.T, _ *roundsWorld, url string, between func()) string {
		return promptText(t, connect(t, url, "alice", "", answering(between)), "greet")
	}},
	{"prompt 2025-11-25", func(t *testing.T, _ *roundsWorld, url string, between func()) string {
		return promptText(t, connect(t, url, "alice", "2025-11-25", answering(between)), "greet")
	}},
	{"task", func(t *testing.T, _ *roundsWorld, url string, between func()) string {
		id := tasktest.StartTask(t, url, "alice", "later", map[string]any{})
		tasktest.WaitStatus(t, url, "alice", id, "input_required")
		if between != nil {
			between()
		}
		if _, e := tasktest.RPC(t, url, "alice", true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}},
		}}); e != nil {
			t.Fatalf("tasks/update: %v", e)
		}
		done := tasktest.WaitStatus(t, url, "alice", id, "completed")
		b, _ := json.Marshal(done["result"].(map[string]any)["content"])
		return string(b)
	}},
}

func callText(t *testing.T, cs *mcp.ClientSession, tool string) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		return err.Error()
	}
	return textOf(t, res)
}

func promptText(t *testing.T, cs *mcp.ClientSession, prompt string) string {
	t.Helper()
	res, err := cs.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: prompt})
	if err != nil {
		return err.Error()
	}
	if len(res.Messages) != 1 {
		t.Fatalf("prompt messages = %+v", res.Messages)
	}
	return res.Messages[0].Content.(*mcp.TextContent).Text
}

// TestPoliciesDecideAgainOnAResumedRound: a policy that allowed a call's
// first round and refuses by the time the caller answers refuses the
// resumed round: sealed state, an answer on the session or through a task
// carries no authority of its own, and the handler never acts.
func TestPoliciesDecideAgainOnAResumedRound(t *testing.T) {
	for _, tc := range roundsCases {
		t.Run(tc.name, func(t *testing.T) {
			w := newRoundsWorld(t, agnara.RateLimit{})
			url := tasktest.Serve(t, w.snap, mcpexpose.TaskOptions{}, discard{})
			got := tc.run(t, w, url, func() { w.open.Store(false) })
			// A tool's forbidden result, or a prompt's -32602 error: both
			// carry the policy's denial.
			if !strings.Contains(got, "the gate is closed") {
				t.Errorf("answered after the policy changed: %s, want refused by the gate", got)
			}
			if n := w.runs.Load(); n != 0 {
				t.Errorf("the handler acted %d times", n)
			}
			if n := w.gated.Load(); n < 2 {
				t.Errorf("the policy was evaluated %d times, want once a round", n)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
