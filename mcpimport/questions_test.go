//lint:file-ignore SA1019 sampling is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; the test upstream asks for it on purpose.

package mcpimport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
)

var proceedForm = map[string]any{"type": "object", "properties": map[string]any{"go": map[string]any{"type": "boolean", "title": "Go ahead"}}, "required": []any{"go"}}

// askingServer is an upstream whose tools ask before they answer, as an
// input-required result (which the SDK serves as server-to-client requests
// on a handshake-era session). entered counts the calls in; until it
// reaches wait, "ask" waits before asking.
type askingServer struct {
	mu      sync.Mutex
	entered int
	wait    int
	in      chan struct{}
	calls   int // calls that got their answer
}

func (a *askingServer) server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	ask := func(q mcp.InputRequest) mcp.ToolHandler {
		return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r, ok := req.Params.InputResponses["q"]; ok {
				a.mu.Lock()
				a.calls++
				a.mu.Unlock()
				b, _ := json.Marshal(r)
				return &mcp.CallToolResult{Content: text("answered " + string(b))}, nil
			}
			a.mu.Lock()
			a.entered++
			if a.entered == a.wait {
				close(a.in)
			}
			a.mu.Unlock()
			if a.wait > 0 {
				select {
				case <-a.in:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": q}}, nil
		}
	}
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: schema}, ask(&mcp.ElicitParams{Message: "Proceed?", RequestedSchema: proceedForm}))
	srv.AddTool(&mcp.Tool{Name: "sample", InputSchema: schema}, ask(&mcp.CreateMessageParams{MaxTokens: 50, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "Name a colour"}}}}))
	polite := ask(&mcp.ElicitParams{Message: "Proceed?", RequestedSchema: proceedForm})
	srv.AddTool(&mcp.Tool{Name: "polite", InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil {
			return &mcp.CallToolResult{Content: text("did without")}, nil
		}
		return polite(ctx, req)
	})
	srv.AddTool(&mcp.Tool{Name: "roots", InputSchema: schema}, ask(&mcp.ListRootsParams{}))
	srv.AddTool(&mcp.Tool{Name: "url", InputSchema: schema}, ask(&mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: "https://example.com/login", ElicitationID: "e1"}))
	srv.AddTool(&mcp.Tool{Name: "badurl", InputSchema: schema}, ask(&mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: "http://example.com/login", ElicitationID: "e2"}))
	srv.AddTool(&mcp.Tool{Name: "nested", InputSchema: schema}, ask(&mcp.ElicitParams{Message: "Address?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string", "pattern": "^x"}}}}))
	return srv
}

// askingPlans connects to srv at version with the relaying handlers and
// imports its tools.
func askingPlans(t *testing.T, srv *mcp.Server, version string, concurrent bool) *execution.Plans {
	t.Helper()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := mcpimport.Connect(ctx, "asker", ct, &mcpimport.ConnectOptions{SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: version}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	bindings := map[string]mcpimport.Binding{}
	for _, name := range []string{"ask", "sample", "url", "badurl", "nested", "polite", "roots"} {
		bindings[name] = mcpimport.Binding{Name: name, Title: name, NoScopeValidator: true, ConcurrencySafe: concurrent}
	}
	cat, err := mcpimport.Discover(ctx, sess, bindings, nil)
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

// TestUpstreamQuestionsReachTheCaller: an upstream's elicitation and
// sampling requests are asked of the imported tool's caller, as put, and
// the answers go upstream, at both upstream eras; a question outside the
// rules is refused and never shown.
func TestUpstreamQuestionsReachTheCaller(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			up := &askingServer{}
			plans := askingPlans(t, up.server(), version, false)
			invoke := func(name string, answers map[string]execution.Answer) (execution.Outcome, error) {
				p, _ := plans.Lookup("gw." + name)
				return p.Invoke(context.Background(), &execution.Invocation{Principal: reader, Arguments: json.RawMessage(`{}`), Answers: answers})
			}
			for _, tc := range []struct {
				tool   string
				want   execution.InputRequest
				answer execution.Answer
				got    string
			}{
				{"ask", execution.InputRequest{Kind: execution.Elicitation, Message: "Proceed?", Schema: json.RawMessage(`{"properties":{"go":{"title":"Go ahead","type":"boolean"}},"required":["go"],"type":"object"}`)},
					execution.Answer{Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"go":true}`)}, `answered {"action":"accept","content":{"go":true}}`},
				{"ask", execution.InputRequest{Kind: execution.Elicitation, Message: "Proceed?", Schema: json.RawMessage(`{"properties":{"go":{"title":"Go ahead","type":"boolean"}},"required":["go"],"type":"object"}`)},
					execution.Answer{Kind: execution.Elicitation, Action: "decline"}, `answered {"action":"decline"}`},
				{"sample", execution.InputRequest{Kind: execution.Sampling, Sampling: &execution.SamplingRequest{MaxTokens: 50, Messages: []execution.SamplingMessage{{Role: "user", Text: "Name a colour"}}}},
					execution.Answer{Kind: execution.Sampling, Sampling: &execution.SamplingResult{Role: "assistant", Text: "teal", Model: "m1"}}, `answered {"content":{"type":"text","text":"teal"},"model":"m1","role":"assistant"}`},
				{"url", execution.InputRequest{Kind: execution.URLElicitation, Message: "Sign in", URL: "https://example.com/login"},
					execution.Answer{Kind: execution.URLElicitation, Action: "accept"}, `answered {"action":"accept"}`},
				{"url", execution.InputRequest{Kind: execution.URLElicitation, Message: "Sign in", URL: "https://example.com/login"},
					execution.Answer{Kind: execution.URLElicitation, Action: "cancel"}, `answered {"action":"cancel"}`},
			} {
				out, err := invoke(tc.tool, nil)
				ir, ok := out.(*execution.InputRequired)
				if err != nil || !ok || len(ir.Requests) != 1 {
					t.Fatalf("%s, first round: %#v, %v", tc.tool, out, err)
				}
				var key string
				for k, q := range ir.Requests {
					key = k
					if diff := cmp.Diff(tc.want, q); diff != "" {
						t.Errorf("%s: asked (-want +got):\n%s", tc.tool, diff)
					}
				}
				out, err = invoke(tc.tool, map[string]execution.Answer{key: tc.answer})
				s, ok := out.(execution.Success)
				if err != nil || !ok || len(s.Content) != 1 || s.Content[0].(execution.Text).Text != tc.got {
					t.Errorf("%s, answered: %#v, %v; want %s", tc.tool, out, err, tc.got)
				}
			}
			// A URL the caller's own questions could not send it to, and a
			// form outside the subset, are never shown.
			for _, tool := range []string{"badurl", "nested"} {
				out, err := invoke(tool, nil)
				f, ok := out.(*execution.Failure)
				if r := execution.ReasonOf(f); err != nil || !ok || r != mcpimport.ReasonQuestionRefused {
					t.Errorf("%s: %#v, %v; want %s", tool, out, err, mcpimport.ReasonQuestionRefused)
				}
			}
		})
	}
}

// TestHandshakeRootsReachTheCaller: a handshake-era upstream's roots/list
// during a call is the caller's to answer; at 2026-07-28 the SDK client
// answers an input-required roots request itself, with its own (empty)
// list.
func TestHandshakeRootsReachTheCaller(t *testing.T) {
	roots := []execution.Root{{URI: "file:///home/ada/project", Name: "project"}}
	for _, tc := range []struct {
		version string
		asks    bool
		want    string
	}{
		{"2025-11-25", true, `answered {"roots":[{"name":"project","uri":"file:///home/ada/project"}]}`},
		{"2026-07-28", false, `answered {"roots":[]}`},
	} {
		t.Run(tc.version, func(t *testing.T) {
			plans := askingPlans(t, (&askingServer{}).server(), tc.version, false)
			p, _ := plans.Lookup("gw.roots")
			inv := &execution.Invocation{Principal: reader, Arguments: json.RawMessage(`{}`)}
			out, err := p.Invoke(context.Background(), inv)
			if ir, ok := out.(*execution.InputRequired); ok && tc.asks {
				for key, q := range ir.Requests {
					if q.Kind != execution.Roots {
						t.Fatalf("asked %+v, want roots", q)
					}
					inv.Answers = map[string]execution.Answer{key: {Kind: execution.Roots, Roots: roots}}
				}
				out, err = p.Invoke(context.Background(), inv)
			} else if tc.asks {
				t.Fatalf("first round: %#v, %v; want the caller asked for roots", out, err)
			}
			s, ok := out.(execution.Success)
			if err != nil || !ok || s.Content[0].(execution.Text).Text != tc.want {
				t.Errorf("%#v, %v; want %s", out, err, tc.want)
			}
		})
	}
}

// TestUpstreamAsksOnlyWhatTheCallerCanAnswer: at 2026-07-28 each call
// declares the caller's own capabilities upstream, so a tool that asks
// only when it may does without for a caller that cannot answer.
func TestUpstreamAsksOnlyWhatTheCallerCanAnswer(t *testing.T) {
	plans := askingPlans(t, (&askingServer{}).server(), "2026-07-28", false)
	p, _ := plans.Lookup("gw.polite")
	for _, tc := range []struct {
		name     string
		supports func(execution.InputKind) bool
		asks     bool
	}{
		{"a caller that can answer", nil, true},
		{"a caller that cannot", func(execution.InputKind) bool { return false }, false},
	} {
		out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: reader, Arguments: json.RawMessage(`{}`), Supports: tc.supports})
		_, asked := out.(*execution.InputRequired)
		if err != nil || asked != tc.asks {
			t.Errorf("%s: %#v, %v; want asked %v", tc.name, out, err, tc.asks)
		}
		if s, ok := out.(execution.Success); !tc.asks && (!ok || s.Content[0].(execution.Text).Text != "did without") {
			t.Errorf("%s: %#v, want the tool to do without", tc.name, out)
		}
	}
}

// TestQuestionsTheCallerCannotAnswer: a question of a kind the caller's
// client did not declare is refused at once, at both upstream eras.
func TestQuestionsTheCallerCannotAnswer(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		plans := askingPlans(t, (&askingServer{}).server(), version, false)
		for _, tool := range []string{"ask", "sample", "url"} {
			p, _ := plans.Lookup("gw." + tool)
			out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: reader, Arguments: json.RawMessage(`{}`), Supports: func(execution.InputKind) bool { return false }})
			if f, ok := out.(*execution.Failure); err != nil || !ok || execution.ReasonOf(f) != mcpimport.ReasonQuestionRefused {
				t.Errorf("%s %s: %#v, %v; want %s", version, tool, out, err, mcpimport.ReasonQuestionRefused)
			}
		}
	}
}

// TestHandshakeQuestionWithSeveralCallsOut: a handshake-era upstream's
// question names no call; one that comes while two calls are out on the
// session goes to neither, and its call fails closed. (A question that
// comes once the other call has ended is its own call's.)
func TestHandshakeQuestionWithSeveralCallsOut(t *testing.T) {
	up := &askingServer{wait: 2, in: make(chan struct{})}
	plans := askingPlans(t, up.server(), "2025-11-25", true)
	p, _ := plans.Lookup("gw.ask")
	var wg sync.WaitGroup
	errs := make([]string, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: reader, Arguments: json.RawMessage(`{}`)})
			errs[i] = fmt.Sprintf("%T %v %s", out, err, execution.ReasonOf(asFailure(out)))
		}()
	}
	wg.Wait()
	failed := 0
	for _, e := range errs {
		switch e {
		case "*execution.Failure <nil> " + string(mcpimport.ReasonProtocolError), "*execution.Failure <nil> " + string(mcpimport.ReasonQuestionRefused):
			failed++
		case "*execution.InputRequired <nil> ":
		default:
			t.Errorf("a call ended %s", e)
		}
	}
	if failed == 0 {
		t.Errorf("two calls out: %q; want the question that came with both out refused", errs)
	}
}

func asFailure(out execution.Outcome) error {
	if f, ok := out.(*execution.Failure); ok {
		return f
	}
	return nil
}
