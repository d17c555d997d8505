package mcpexpose_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/agnara-go/agnara/policy"
)

// rawCall posts one 2026-07-28 tools/call of fx.echo as token's holder and
// returns the tool result's text and isError.
func rawEchoCall(t *testing.T, url, token string) (string, bool) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx.echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "fx.echo")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var msg struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(mcptest.Message(resp.Header.Get("Content-Type"), data), &msg); err != nil || len(msg.Result.Content) != 1 {
		t.Fatalf("not a tool result (%v): %s", err, data)
	}
	return msg.Result.Content[0].Text, msg.Result.IsError
}

// The server-wide default limits a tool without its own, per caller, and
// the refusal reaches the client as the canonical failure with its hint.
func TestRateLimitOnTheWire(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{
		Tokens: tokens,
		Server: &mcpexpose.ServerOptions{Identity: mapper, RateLimit: agnara.RateLimit{Rate: 0.01, Burst: 2}},
	})
	for range 2 {
		if text, isErr := rawEchoCall(t, srv.URL, "reader"); isErr {
			t.Fatalf("call within the limit failed: %s", text)
		}
	}
	before := f.calls.Load()
	text, isErr := rawEchoCall(t, srv.URL, "reader")
	var got struct {
		Code    string         `json:"code"`
		Reason  string         `json:"reason"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil || !isErr {
		t.Fatalf("third call: isError %v, text %s (%v)", isErr, text, err)
	}
	ms, _ := got.Details["retry_after_ms"].(float64)
	if got.Code != "unavailable" || got.Reason != "rate_limited" || ms < 90_000 || ms > 100_000 || !strings.Contains(got.Message, "retry in") {
		t.Errorf("third call answered %s; want unavailable, rate_limited, retry_after_ms about 100000", text)
	}
	if f.calls.Load() != before {
		t.Error("the handler ran for a refused call")
	}
	// Another caller has a bucket of its own.
	if text, isErr := rawEchoCall(t, srv.URL, "writer"); isErr {
		t.Errorf("another caller was refused: %s", text)
	}
	// The legacy era's server counts in the same bucket: switching eras is
	// no way around the limit.
	cs := connect(t, srv.URL+"/mcp", "reader", "2025-11-25", nil)
	res, err := cs.CallTool(t.Context(), callParams("fx.echo", map[string]any{"text": "hi"}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(t, res), `"reason":"rate_limited"`) {
		t.Errorf("legacy-era call answered %s, want the rate-limit failure", textOf(t, res))
	}
}

func TestServerRefusesABadRateLimit(t *testing.T) {
	f := newFixture(t)
	opts := mcpexpose.ServerOptions{RateLimit: agnara.RateLimit{Rate: 1}}
	for ctor, err := range map[string]error{
		"NewServer":  second(mcpexpose.NewServer(f.snap, &opts)),
		"NewHandler": second(mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Server: &opts})),
		"RunStdio":   mcpexpose.RunStdio(t.Context(), f.snap, policy.Anonymous(), &opts),
	} {
		if err == nil || !strings.Contains(err.Error(), "RateLimit: rate limit: Burst 0 must be at least 1") {
			t.Errorf("%s: %v, want an error naming the bad RateLimit", ctor, err)
		}
	}
}

// TestRateLimitCountsALogicalCallOnce: with a burst of one, a call that
// asks questions is counted in its first round only — its resumed rounds
// (a 2026-07-28 retry with sealed state, a handshake-era round on the
// session, a task's later round) are the same call — so the user's answer
// is never lost to rate_limited; the next call is refused.
func TestRateLimitCountsALogicalCallOnce(t *testing.T) {
	for _, tc := range roundsCases {
		t.Run(tc.name, func(t *testing.T) {
			w := newRoundsWorld(t, agnara.RateLimit{Rate: 0.001, Burst: 1})
			url := tasktest.Serve(t, w.snap, mcpexpose.TaskOptions{Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second}, discard{})
			got := tc.run(t, w, url, nil)
			if !strings.Contains(got, "Ann") || strings.Contains(got, "rate") {
				t.Fatalf("the answered call = %s, want it done", got)
			}
			if n := w.runs.Load(); n != 1 {
				t.Errorf("the handler acted %d times, want 1", n)
			}
			// The burst is spent: the next call is refused in its first round.
			var again string
			if tc.name == "task" {
				res, _ := tasktest.Call(t, url, "alice", true, "later", map[string]any{})
				again = toolText(res)
			} else {
				again = tc.run(t, w, url, nil)
			}
			if !strings.Contains(again, "rate limit exceeded") {
				t.Errorf("the next call = %s, want it refused by the rate limit", again)
			}
		})
	}
}

type TopicIn struct {
	Topic string `json:"topic"`
}

// TestRateLimitTaskMethodsAndCompletion: tasks/get, tasks/update,
// tasks/cancel and completion/complete count against ServerOptions.RateLimit,
// each method in a bucket of its own per caller, apart from the tools'
// calls, before the store is read (an unknown task id counts too), and are
// refused with the rate_limited failure as a JSON-RPC error. The polling
// interval a task suggests is one the limit admits.
func TestRateLimitTaskMethodsAndCompletion(t *testing.T) {
	app := agnara.New("lim", nil)
	work := app.Capability(func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}, &agnara.CapabilityOptions{Name: "work", Description: "Works until cancelled."})
	topic := app.Capability(func(in TopicIn) (string, error) { return "about " + in.Topic, nil },
		&agnara.CapabilityOptions{Name: "topic", Description: "A topic."})
	exp := mcpexpose.New(app)
	exp.Tool(work, &mcpexpose.ToolOptions{Name: "work", Task: mcpexpose.TaskRequired})
	exp.Prompt(topic, &mcpexpose.PromptOptions{Name: "topic", Complete: map[string]mcpexpose.Completer{
		"topic": func(context.Context, mcpexpose.CompletionRequest) ([]string, error) { return []string{"go"}, nil },
	}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tasktest.People, Server: &mcpexpose.ServerOptions{
		RateLimit: agnara.RateLimit{Rate: 0.001, Burst: 2},
		Tasks:     &mcpexpose.TaskOptions{Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)

	created, e := tasktest.Call(t, url, "alice", true, "work", map[string]any{})
	if e != nil || created["resultType"] != "task" {
		t.Fatalf("tools/call = %v %v", created, e)
	}
	if created["pollIntervalMs"] != float64(1_000_000) {
		t.Errorf("pollIntervalMs = %v, want the limit's interval, 1000000", created["pollIntervalMs"])
	}
	id := created["taskId"].(string)

	limited := func(e map[string]any) bool {
		data, _ := json.Marshal(e["data"])
		return e["code"] == float64(-32603) && strings.Contains(string(data), `"reason":"rate_limited"`) && strings.Contains(string(data), `"retry_after_ms"`)
	}
	complete := func(who string) map[string]any {
		_, e := tasktest.RPC(t, url, who, true, "completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/prompt", "name": "topic"}, "argument": map[string]any{"name": "topic", "value": "g"},
		})
		return e
	}
	task := func(who, method, id string) map[string]any {
		_, e := tasktest.RPC(t, url, who, true, method, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		return e
	}
	for _, step := range []struct {
		what string
		do   func() map[string]any
		want string // "ok", "limited", or "unknown" (the unknown-task error)
	}{
		{"tasks/get 1", func() map[string]any { return task("alice", "tasks/get", id) }, "ok"},
		{"tasks/get 2", func() map[string]any { return task("alice", "tasks/get", id) }, "ok"},
		{"tasks/get 3", func() map[string]any { return task("alice", "tasks/get", id) }, "limited"},
		{"tasks/get of an unknown id", func() map[string]any { return task("alice", "tasks/get", "no-such-task-id-at-all-xx") }, "limited"},
		{"tasks/get by another caller", func() map[string]any { return task("bob", "tasks/get", id) }, "unknown"},
		{"tasks/update 1", func() map[string]any { return task("alice", "tasks/update", id) }, "ok"},
		{"tasks/update 2", func() map[string]any { return task("alice", "tasks/update", id) }, "ok"},
		{"tasks/update 3", func() map[string]any { return task("alice", "tasks/update", id) }, "limited"},
		{"completion 1", func() map[string]any { return complete("alice") }, "ok"},
		{"completion 2", func() map[string]any { return complete("alice") }, "ok"},
		{"completion 3", func() map[string]any { return complete("alice") }, "limited"},
		{"completion by another caller", func() map[string]any { return complete("bob") }, "ok"},
		{"tasks/cancel", func() map[string]any { return task("alice", "tasks/cancel", id) }, "ok"},
	} {
		e := step.do()
		got := "ok"
		switch {
		case e == nil:
		case limited(e):
			got = "limited"
		case e["code"] == float64(-32602) && e["message"] == "unknown task":
			got = "unknown"
		default:
			got = fmt.Sprint(e)
		}
		if got != step.want {
			t.Errorf("%s: %s, want %s", step.what, got, step.want)
		}
	}
	// None of them spent the tool's calls.
	if res, e := tasktest.Call(t, url, "alice", true, "work", map[string]any{}); e != nil || res["resultType"] != "task" {
		t.Errorf("the second tools/call = %v %v, want a task: the other requests spent the calls' bucket", res, e)
	}
}

// downLimiter cannot decide: its store is down.
type downLimiter struct{}

func (downLimiter) Allow(context.Context, string, agnara.RateLimit) (time.Duration, bool, error) {
	return 0, false, errors.New("limit store down")
}

// A request that invokes no capability is refused, not served, when its
// rate limit cannot be checked (the check fails closed), and the limiter's
// words stay in the log.
func TestRateLimitedRequestFailsClosed(t *testing.T) {
	app := agnara.New("lim", nil)
	topic := app.Capability(func(in TopicIn) (string, error) { return "about " + in.Topic, nil },
		&agnara.CapabilityOptions{Name: "topic", Description: "A topic."})
	exp := mcpexpose.New(app)
	var completed atomic.Int32
	exp.Prompt(topic, &mcpexpose.PromptOptions{Name: "topic", Complete: map[string]mcpexpose.Completer{
		"topic": func(context.Context, mcpexpose.CompletionRequest) ([]string, error) {
			completed.Add(1)
			return []string{"go"}, nil
		},
	}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tasktest.People, Server: &mcpexpose.ServerOptions{
		RateLimit: agnara.RateLimit{Rate: 1, Burst: 1},
		Limiter:   downLimiter{},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	_, e := tasktest.RPC(t, url, "alice", true, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "topic"}, "argument": map[string]any{"name": "topic", "value": "g"},
	})
	data, _ := json.Marshal(e)
	if e == nil || e["code"] != float64(-32603) || !strings.Contains(string(data), `"unavailable"`) || strings.Contains(string(data), "rate_limited") {
		t.Errorf("completion/complete with the limiter down = %s, want the unavailable failure", data)
	}
	if strings.Contains(string(data), "store down") {
		t.Errorf("the limiter's words reached the caller: %s", data)
	}
	if n := completed.Load(); n != 0 {
		t.Errorf("the completer ran %d times with the limit unchecked", n)
	}
}
