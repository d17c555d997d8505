package mcpexpose_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

func TestTaskOfAnotherPrincipalIsUnknown(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	id := tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "a"})
	if res, e := tasktest.GetTask(t, url, "alice", id); e != nil || res["status"] != "working" {
		t.Fatalf("alice's tasks/get = %v %v", res, e)
	}
	_, unknown := tasktest.GetTask(t, url, "alice", "no-such-task-id-at-all-xx")
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		_, e := tasktest.RPC(t, url, "bob", true, method, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		if e == nil || e["code"] != unknown["code"] || e["message"] != unknown["message"] {
			t.Errorf("bob's %s of alice's task = %v, want exactly the unknown-task error %v", method, e, unknown)
		}
	}
	if res, _ := tasktest.GetTask(t, url, "alice", id); res["status"] != "working" {
		t.Errorf("after bob's cancel, alice's task is %v", res["status"])
	}
}

// TestTaskOfTheSameSubjectFromAnotherIssuerIsUnknown: a task is bound to
// the principal's id and issuer both. The same subject id vouched for by
// another issuer is another caller: every tasks/* method answers it as for
// an unknown task, and changes nothing.
func TestTaskOfTheSameSubjectFromAnotherIssuerIsUnknown(t *testing.T) {
	w := tasktest.NewWorld(t)
	issuers := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		subject, issuer, ok := strings.Cut(token, "@")
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: subject, Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{mcpexpose.ExtraIssuer: "https://" + issuer + ".example"}}, nil
	}
	h, err := mcpexpose.NewHandler(w.Snap, &mcpexpose.HandlerOptions{Tokens: issuers})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	url := srv.URL

	id := tasktest.StartTask(t, url, "alice@a", "ask", map[string]any{})
	tasktest.WaitStatus(t, url, "alice@a", id, "input_required")
	_, unknown := tasktest.GetTask(t, url, "alice@a", "no-such-task-id-at-all-xx")
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Eve"}}}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, e := tasktest.RPC(t, url, "alice@b", true, method, map[string]any{"taskId": id, "inputResponses": answer})
		if e == nil || e["code"] != unknown["code"] || e["message"] != unknown["message"] {
			t.Errorf("%s by alice of issuer b = %v, want exactly the unknown-task error %v", method, e, unknown)
		}
	}
	res, e := tasktest.GetTask(t, url, "alice@a", id)
	if e != nil || res["status"] != "input_required" || res["inputRequests"] == nil {
		t.Errorf("after the other issuer's requests, the task is %v %v, want it still asking", res, e)
	}
}

func TestTaskCancelCancelsTheHandlerAndRunsCleanup(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	id := tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "c"})
	w.Running(t) // cancelled before its handler ran, it would have nothing to clean up
	res, e := tasktest.RPC(t, url, "alice", true, "tasks/cancel", map[string]any{"taskId": id})
	if e != nil || len(res) != 1 || res["resultType"] != "complete" {
		t.Fatalf("tasks/cancel = %v %v, want the empty ack", res, e)
	}
	tasktest.WaitStatus(t, url, "alice", id, "cancelled")
	tasktest.WaitUntil(t, "the dependency's cleanup", func() bool { return w.Cleanups.Load() == 1 })
}

func TestTaskResultIsTheDirectCallResult(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	id := tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "r"})
	close(w.Release)
	done := tasktest.WaitStatus(t, url, "alice", id, "completed")
	direct, e := tasktest.Call(t, url, "alice", false, "work", map[string]any{"label": "r"})
	if e != nil || direct["resultType"] == "task" || direct["taskId"] != nil {
		t.Fatalf("a client without the extension got %v %v, want a direct result", direct, e)
	}
	inlined := done["result"].(map[string]any)
	for _, k := range []string{"content", "structuredContent", "isError"} {
		a, _ := json.Marshal(inlined[k])
		b, _ := json.Marshal(direct[k])
		if string(a) != string(b) {
			t.Errorf("%s: task %s, direct %s", k, a, b)
		}
	}
}

func TestTaskChecksRunBeforeTheTaskExists(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	res, e := tasktest.Call(t, url, "alice", true, "confirmed", map[string]any{})
	if e != nil || res["resultType"] != "input_required" || res["taskId"] != nil {
		t.Fatalf("an unconfirmed call = %v %v, want the confirmation asked before any task", res, e)
	}
	res, _ = tasktest.Call(t, url, "alice", true, "work", map[string]any{"label": 7})
	if res["resultType"] == "task" || res["isError"] != true {
		t.Fatalf("invalid input = %v, want the invalid_input result, no task", res)
	}
	_, e = tasktest.Call(t, url, "alice", false, "ask", map[string]any{})
	if e == nil || e["code"] != float64(-32021) {
		t.Fatalf("a required-task tool without the extension = %v, want -32021", e)
	}
}

func TestTaskAsksThroughTasksGetAndValidatesAnswers(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	for _, tc := range []struct {
		answer  map[string]any
		isError bool
		text    string
	}{
		{map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}, false, "hi Ann"},
		{map[string]any{"action": "accept", "content": map[string]any{"name": ""}}, true, "invalid_input"},
	} {
		id := tasktest.StartTask(t, url, "alice", "ask", map[string]any{})
		st := tasktest.WaitStatus(t, url, "alice", id, "input_required")
		q, _ := st["inputRequests"].(map[string]any)["name"].(map[string]any)
		if q["method"] != "elicitation/create" {
			t.Fatalf("inputRequests = %v", st["inputRequests"])
		}
		res, e := tasktest.RPC(t, url, "alice", true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": tc.answer}})
		if e != nil || res["resultType"] != "complete" {
			t.Fatalf("tasks/update = %v %v", res, e)
		}
		done := tasktest.WaitStatus(t, url, "alice", id, "completed")
		result := done["result"].(map[string]any)
		text, _ := json.Marshal(result["content"])
		if result["isError"] != tc.isError && !(result["isError"] == nil && !tc.isError) {
			t.Errorf("answer %v: isError %v", tc.answer, result["isError"])
		}
		if !json.Valid(text) || !contains(string(text), tc.text) {
			t.Errorf("answer %v: content %s, want %s in it", tc.answer, text, tc.text)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// clock is a settable clock for TTL tests.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

func TestTaskExpiresWithItsTTL(t *testing.T) {
	w := tasktest.NewWorld(t)
	c := &clock{now: time.Now()}
	url := w.Instance(t, mcpexpose.TaskOptions{TTL: time.Minute, Now: c.Now, Heartbeat: 5 * time.Millisecond, HeartbeatLapse: time.Hour})
	id := tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "ttl"})
	w.Running(t)
	res, _ := tasktest.GetTask(t, url, "alice", id)
	if res["ttlMs"] != float64(60000) {
		t.Errorf("ttlMs = %v, want 60000", res["ttlMs"])
	}
	c.Advance(59 * time.Second)
	if _, e := tasktest.GetTask(t, url, "alice", id); e != nil {
		t.Fatalf("before its TTL the task is gone: %v", e)
	}
	c.Advance(2 * time.Second)
	if _, e := tasktest.GetTask(t, url, "alice", id); e == nil || e["code"] != float64(-32602) {
		t.Fatalf("after its TTL tasks/get = %v, want -32602", e)
	}
	// The handler still running is cancelled, and its cleanup runs.
	tasktest.WaitUntil(t, "the expired task's cleanup", func() bool { return w.Cleanups.Load() == 1 })
}
