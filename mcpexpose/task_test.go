package mcpexpose_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// taskWorld is an application with task tools: work blocks until released
// or cancelled and holds a per-invocation dependency whose cleanup is
// counted; ask asks a name; confirmed needs a confirmation.
type taskWorld struct {
	snap     *mcpexpose.Snapshot
	release  chan struct{}
	leases   atomic.Int32 // a running handler's dependency, made
	cleanups atomic.Int32 // and cleaned up
}

type WorkInput struct {
	Label string `json:"label"`
}

type Lease struct{}

type NameAnswer struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

var nameQuestion = execution.NewForm[NameAnswer]("Your name?")

func newTaskWorld(t *testing.T) *taskWorld {
	t.Helper()
	w := &taskWorld{release: make(chan struct{})}
	deps := di.NewRegistry()
	di.ProvidePerInvocation(deps, func() (*Lease, func()) { w.leases.Add(1); return &Lease{}, func() { w.cleanups.Add(1) } })
	app := agnara.New("jobs", &agnara.Options{Dependencies: deps})
	work := app.Capability(func(ctx context.Context, in WorkInput, _ *Lease) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-w.release:
			return "done " + in.Label, nil
		}
	}, &agnara.CapabilityOptions{Name: "work", Description: "Works until released."})
	ask := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", nameQuestion)
		if err != nil {
			return "", err
		}
		return "hi " + v.Name, nil
	}, &agnara.CapabilityOptions{Name: "ask", Description: "Asks a name.", Forms: []agnara.Form{nameQuestion}})
	confirmed := app.Capability(func() (string, error) { return "ok", nil },
		&agnara.CapabilityOptions{Name: "confirmed", Description: "Needs a yes.", Confirm: "Sure?"})
	exp := mcpexpose.New(app)
	exp.Tool(work, &mcpexpose.ToolOptions{Name: "work", Task: mcpexpose.TaskOptional})
	exp.Tool(ask, &mcpexpose.ToolOptions{Name: "ask", Task: mcpexpose.TaskRequired})
	exp.Tool(confirmed, &mcpexpose.ToolOptions{Name: "confirmed", Task: mcpexpose.TaskOptional})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	w.snap = snap
	return w
}

func people(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	switch token {
	case "alice", "bob":
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	return nil, auth.ErrInvalidToken
}

// instance serves w with the task options on a loopback server.
func (w *taskWorld) instance(t *testing.T, o mcpexpose.TaskOptions) string {
	t.Helper()
	h, err := mcpexpose.NewHandler(w.snap, &mcpexpose.HandlerOptions{Tokens: people, Server: &mcpexpose.ServerOptions{Tasks: &o}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// rpc sends one 2026-07-28 request as token, declaring the tasks
// extension when ext, and returns its result or its error.
func rpc(t *testing.T, url, token string, ext bool, method string, params map[string]any) (result, rpcErr map[string]any) {
	t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{mcpexpose.TasksExtension: map[string]any{}}
	}
	params["_meta"] = mcptest.Meta(caps)
	req := mcptest.Request(t, url, method, params, token)
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	_, body, msg := mcptest.Do(t, req)
	if msg == nil {
		t.Fatalf("%s: no JSON-RPC response in %s", method, body)
	}
	r, _ := msg["result"].(map[string]any)
	e, _ := msg["error"].(map[string]any)
	return r, e
}

func call(t *testing.T, url, token string, ext bool, tool string, args map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	return rpc(t, url, token, ext, "tools/call", map[string]any{"name": tool, "arguments": args})
}

func startTask(t *testing.T, url, token, tool string, args map[string]any) string {
	t.Helper()
	res, e := call(t, url, token, true, tool, args)
	if e != nil || res["resultType"] != "task" {
		t.Fatalf("%s: want a task, got %v %v", tool, res, e)
	}
	id, _ := res["taskId"].(string)
	if len(id) < 24 { // 144 random bits, base64url
		t.Fatalf("task id %q is too short to be unguessable", id)
	}
	return id
}

func getTask(t *testing.T, url, token, id string) (map[string]any, map[string]any) {
	t.Helper()
	return rpc(t, url, token, true, "tasks/get", map[string]any{"taskId": id})
}

// waitStatus polls tasks/get until the task has status, within a deadline.
func waitStatus(t *testing.T, url, token, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, e := getTask(t, url, token, id)
		if e != nil {
			t.Fatalf("tasks/get: %v", e)
		}
		if res["status"] == status {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: status %v, want %s", id, res["status"], status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// running waits until the "work" handler of the latest task has its
// dependency, so that ending the task then has a handler to cancel and a
// cleanup to run.
func (w *taskWorld) running(t *testing.T) {
	t.Helper()
	n := w.cleanups.Load() + 1
	waitUntil(t, "the handler to run", func() bool { return w.leases.Load() >= n })
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestTaskOfAnotherPrincipalIsUnknown(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	id := startTask(t, url, "alice", "work", map[string]any{"label": "a"})
	if res, e := getTask(t, url, "alice", id); e != nil || res["status"] != "working" {
		t.Fatalf("alice's tasks/get = %v %v", res, e)
	}
	_, unknown := getTask(t, url, "alice", "no-such-task-id-at-all-xx")
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		_, e := rpc(t, url, "bob", true, method, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		if e == nil || e["code"] != unknown["code"] || e["message"] != unknown["message"] {
			t.Errorf("bob's %s of alice's task = %v, want exactly the unknown-task error %v", method, e, unknown)
		}
	}
	if res, _ := getTask(t, url, "alice", id); res["status"] != "working" {
		t.Errorf("after bob's cancel, alice's task is %v", res["status"])
	}
}

// TestTaskOfTheSameSubjectFromAnotherIssuerIsUnknown: a task is bound to
// the principal's id and issuer both. The same subject id vouched for by
// another issuer is another caller: every tasks/* method answers it as for
// an unknown task, and changes nothing.
func TestTaskOfTheSameSubjectFromAnotherIssuerIsUnknown(t *testing.T) {
	w := newTaskWorld(t)
	issuers := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		subject, issuer, ok := strings.Cut(token, "@")
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: subject, Expiration: time.Now().Add(time.Hour),
			Extra: map[string]any{mcpexpose.ExtraIssuer: "https://" + issuer + ".example"}}, nil
	}
	h, err := mcpexpose.NewHandler(w.snap, &mcpexpose.HandlerOptions{Tokens: issuers})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	url := srv.URL

	id := startTask(t, url, "alice@a", "ask", map[string]any{})
	waitStatus(t, url, "alice@a", id, "input_required")
	_, unknown := getTask(t, url, "alice@a", "no-such-task-id-at-all-xx")
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Eve"}}}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		_, e := rpc(t, url, "alice@b", true, method, map[string]any{"taskId": id, "inputResponses": answer})
		if e == nil || e["code"] != unknown["code"] || e["message"] != unknown["message"] {
			t.Errorf("%s by alice of issuer b = %v, want exactly the unknown-task error %v", method, e, unknown)
		}
	}
	res, e := getTask(t, url, "alice@a", id)
	if e != nil || res["status"] != "input_required" || res["inputRequests"] == nil {
		t.Errorf("after the other issuer's requests, the task is %v %v, want it still asking", res, e)
	}
}

func TestTaskCancelCancelsTheHandlerAndRunsCleanup(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	id := startTask(t, url, "alice", "work", map[string]any{"label": "c"})
	w.running(t) // cancelled before its handler ran, it would have nothing to clean up
	res, e := rpc(t, url, "alice", true, "tasks/cancel", map[string]any{"taskId": id})
	if e != nil || len(res) != 1 || res["resultType"] != "complete" {
		t.Fatalf("tasks/cancel = %v %v, want the empty ack", res, e)
	}
	waitStatus(t, url, "alice", id, "cancelled")
	waitUntil(t, "the dependency's cleanup", func() bool { return w.cleanups.Load() == 1 })
}

func TestTaskResultIsTheDirectCallResult(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	id := startTask(t, url, "alice", "work", map[string]any{"label": "r"})
	close(w.release)
	done := waitStatus(t, url, "alice", id, "completed")
	direct, e := call(t, url, "alice", false, "work", map[string]any{"label": "r"})
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
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	res, e := call(t, url, "alice", true, "confirmed", map[string]any{})
	if e != nil || res["resultType"] != "input_required" || res["taskId"] != nil {
		t.Fatalf("an unconfirmed call = %v %v, want the confirmation asked before any task", res, e)
	}
	res, _ = call(t, url, "alice", true, "work", map[string]any{"label": 7})
	if res["resultType"] == "task" || res["isError"] != true {
		t.Fatalf("invalid input = %v, want the invalid_input result, no task", res)
	}
	_, e = call(t, url, "alice", false, "ask", map[string]any{})
	if e == nil || e["code"] != float64(-32021) {
		t.Fatalf("a required-task tool without the extension = %v, want -32021", e)
	}
}

func TestTaskAsksThroughTasksGetAndValidatesAnswers(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	for _, tc := range []struct {
		answer  map[string]any
		isError bool
		text    string
	}{
		{map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}, false, "hi Ann"},
		{map[string]any{"action": "accept", "content": map[string]any{"name": ""}}, true, "invalid_input"},
	} {
		id := startTask(t, url, "alice", "ask", map[string]any{})
		st := waitStatus(t, url, "alice", id, "input_required")
		q, _ := st["inputRequests"].(map[string]any)["name"].(map[string]any)
		if q["method"] != "elicitation/create" {
			t.Fatalf("inputRequests = %v", st["inputRequests"])
		}
		res, e := rpc(t, url, "alice", true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": tc.answer}})
		if e != nil || res["resultType"] != "complete" {
			t.Fatalf("tasks/update = %v %v", res, e)
		}
		done := waitStatus(t, url, "alice", id, "completed")
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
	w := newTaskWorld(t)
	c := &clock{now: time.Now()}
	url := w.instance(t, mcpexpose.TaskOptions{TTL: time.Minute, Now: c.Now, Heartbeat: 5 * time.Millisecond, HeartbeatLapse: time.Hour})
	id := startTask(t, url, "alice", "work", map[string]any{"label": "ttl"})
	w.running(t)
	res, _ := getTask(t, url, "alice", id)
	if res["ttlMs"] != float64(60000) {
		t.Errorf("ttlMs = %v, want 60000", res["ttlMs"])
	}
	c.Advance(59 * time.Second)
	if _, e := getTask(t, url, "alice", id); e != nil {
		t.Fatalf("before its TTL the task is gone: %v", e)
	}
	c.Advance(2 * time.Second)
	if _, e := getTask(t, url, "alice", id); e == nil || e["code"] != float64(-32602) {
		t.Fatalf("after its TTL tasks/get = %v, want -32602", e)
	}
	// The handler still running is cancelled, and its cleanup runs.
	waitUntil(t, "the expired task's cleanup", func() bool { return w.cleanups.Load() == 1 })
}

func TestTaskSharedThroughRedis(t *testing.T) {
	r := enginetest.Redis(t)
	store, closeFn, err := redistasks.Open(t.Context(), r.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	w := newTaskWorld(t)
	o := mcpexpose.TaskOptions{Store: store, Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second}
	a, b := w.instance(t, o), w.instance(t, o)

	// Asked on a, answered on b, completed on a, seen on b.
	id := startTask(t, a, "alice", "ask", map[string]any{})
	waitStatus(t, b, "alice", id, "input_required")
	if _, e := getTask(t, b, "bob", id); e == nil {
		t.Fatal("bob sees alice's task through another instance")
	}
	if _, e := rpc(t, b, "alice", true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Bea"}}}}); e != nil {
		t.Fatal(e)
	}
	done := waitStatus(t, b, "alice", id, "completed")
	if text, _ := json.Marshal(done["result"]); !contains(string(text), "hi Bea") {
		t.Errorf("result = %s", text)
	}

	// Created on a, cancelled through b: a's handler is cancelled and
	// cleaned up.
	id = startTask(t, a, "alice", "work", map[string]any{"label": "x"})
	w.running(t)
	if _, e := rpc(t, b, "alice", true, "tasks/cancel", map[string]any{"taskId": id}); e != nil {
		t.Fatal(e)
	}
	waitStatus(t, b, "alice", id, "cancelled")
	waitUntil(t, "the cancelled handler's cleanup", func() bool { return w.cleanups.Load() == 1 })
}

// TestTaskFailsWhenItsInstanceStopsHeartbeating is ADR 0067: an instance
// that sees no heartbeat for HeartbeatLapse marks the task failed; the
// running instance, if it was only cut off, learns it at its next beat and
// cancels the handler.
func TestTaskFailsWhenItsInstanceStopsHeartbeating(t *testing.T) {
	r := enginetest.Redis(t)
	store, closeFn, err := redistasks.Open(t.Context(), r.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	w := newTaskWorld(t)
	// a beats rarely; b's clock is ahead of a's by more than the lapse, so
	// to b, a has fallen silent.
	a := w.instance(t, mcpexpose.TaskOptions{Store: store, Heartbeat: 20 * time.Millisecond, HeartbeatLapse: time.Second})
	ahead := func() time.Time { return time.Now().Add(time.Minute) }
	b := w.instance(t, mcpexpose.TaskOptions{Store: store, Heartbeat: 20 * time.Millisecond, HeartbeatLapse: time.Second, Now: ahead})
	id := startTask(t, a, "alice", "work", map[string]any{"label": "lost"})
	w.running(t)
	res, e := getTask(t, b, "alice", id)
	if e != nil || res["status"] != "failed" {
		t.Fatalf("tasks/get through b = %v %v, want failed", res, e)
	}
	if errObj, _ := res["error"].(map[string]any); errObj["code"] != float64(-32603) || res["result"] != nil {
		t.Fatalf("failed task = %v, want error -32603 and no result", res)
	}
	waitUntil(t, "a to cancel the handler of the failed task", func() bool { return w.cleanups.Load() == 1 })
	if res, _ := getTask(t, a, "alice", id); res["status"] != "failed" {
		t.Errorf("a overwrote the failed status: %v", res["status"])
	}
}

func TestMemoryStoreForgetsExpiredTasks(t *testing.T) {
	c := &clock{now: time.Now()}
	m := tasks.NewMemory(&tasks.MemoryOptions{Now: c.Now})
	ctx := t.Context()
	if err := m.Create(ctx, &tasks.Task{ID: "x", ExpiresAt: c.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, &tasks.Task{ID: "x", ExpiresAt: c.Now().Add(time.Second)}); err != tasks.ErrExists {
		t.Fatalf("second Create = %v, want ErrExists", err)
	}
	c.Advance(time.Second)
	if _, err := m.Get(ctx, "x"); err != tasks.ErrNotFound {
		t.Fatalf("Get after expiry = %v", err)
	}
	if m.Len() != 0 {
		t.Errorf("Len = %d after expiry", m.Len())
	}
}
