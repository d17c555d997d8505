package mcpimport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// jobs is a real SDK server that implements the remote side of the tasks
// extension minimally, in test code: tools/call of "job" answers with a task
// handle when the request declares the extension (mode "rogue": always),
// tasks/get and tasks/cancel follow the task, whose course the "mode"
// argument picks.
type jobs struct {
	server *mcp.Server

	mu        sync.Mutex
	tasks     map[string]*job
	next      int
	cancelled []string
	declared  []bool // per tools/call: whether it declared the extension
}

type job struct {
	mode  string
	polls int
}

const jobInput = `{"type":"object","properties":{"mode":{"type":"string"}},"required":["mode"],"additionalProperties":false}`

// raw is a result the test server sends exactly as written.
type raw struct {
	mcp.ResultBase
	json string
}

func (r *raw) MarshalJSON() ([]byte, error) { return []byte(r.json), nil }

type taskRef struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

func newJobs(t testing.TB) *jobs {
	j := &jobs{tasks: map[string]*job{}}
	j.server = mcp.NewServer(&mcp.Implementation{Name: "jobs", Version: "1"}, nil)
	j.server.AddTool(&mcp.Tool{Name: "job", Description: "A long job.", InputSchema: json.RawMessage(jobInput)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: text("done at once")}, nil
		})
	j.server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			p := req.GetParams().(*mcp.CallToolParamsRaw)
			var in struct{ Mode string }
			json.Unmarshal(p.Arguments, &in)
			declared := declaresTasks(p.Meta)
			j.mu.Lock()
			j.declared = append(j.declared, declared)
			j.mu.Unlock()
			if !declared && in.Mode != "rogue" {
				return next(ctx, method, req)
			}
			return &raw{json: j.create(in.Mode)}, nil
		}
	})
	must(t, mcp.AddReceivingCustomMethod(j.server, "tasks/get", func(_ context.Context, _ *mcp.ServerSession, p *taskRef) (*raw, error) {
		return j.get(p.TaskID)
	}))
	must(t, mcp.AddReceivingCustomMethod(j.server, "tasks/cancel", func(_ context.Context, _ *mcp.ServerSession, p *taskRef) (*raw, error) {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.cancelled = append(j.cancelled, p.TaskID)
		return &raw{json: `{"resultType":"complete"}`}, nil
	}))
	return j
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[mcp.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext["io.modelcontextprotocol/tasks"]
	return ok
}

func taskJSON(id, status, extra string) string {
	return fmt.Sprintf(`{"taskId":%q,"status":%q,"createdAt":"2026-07-28T10:00:00Z","lastUpdatedAt":"2026-07-28T10:00:00Z","ttlMs":60000,"pollIntervalMs":1%s}`, id, status, extra)
}

func (j *jobs) create(mode string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.next++
	id := fmt.Sprintf("task-%d", j.next)
	switch mode {
	case "malformed":
		return `{"resultType":"task","taskId":"","status":"working"}`
	case "badstatus":
		return `{"resultType":"task","taskId":"x","status":"sleeping"}`
	case "bighandle":
		return `{"resultType":"task","taskId":"x","status":"working","statusMessage":"` + strings.Repeat("x", 70<<10) + `"}`
	case "shared":
		id = "shared"
	}
	j.tasks[id] = &job{mode: mode}
	return `{"resultType":"task",` + taskJSON(id, "working", "")[1:]
}

func (j *jobs) get(id string) (*raw, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	tk, ok := j.tasks[id]
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such task"}
	}
	tk.polls++
	state := func(status, extra string) (*raw, error) {
		return &raw{json: `{"resultType":"complete",` + taskJSON(id, status, extra)[1:]}, nil
	}
	if tk.polls < 2 && tk.mode != "forever" && tk.mode != "shared" {
		return state("working", "")
	}
	switch tk.mode {
	case "complete", "rogue":
		return state("completed", `,"result":{"content":[{"type":"text","text":"the report is ready"}]}`)
	case "toolerror":
		return state("completed", `,"result":{"content":[{"type":"text","text":"remote secret"}],"isError":true}`)
	case "fail":
		return state("failed", `,"error":{"code":-32603,"message":"remote secret: stack trace"}`)
	case "cancelled":
		return state("cancelled", "")
	case "roots":
		return state("input_required", `,"inputRequests":{"r":{"method":"roots/list","params":{}}}`)
	case "input":
		return state("input_required", `,"inputRequests":{"name":{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{}}}}}`)
	case "bigresult":
		return state("completed", `,"result":{"content":[{"type":"text","text":"`+strings.Repeat("x", 1<<20+1)+`"}]}`)
	case "othertask":
		return &raw{json: `{"resultType":"complete",` + taskJSON("task-999", "completed", `,"result":{"content":[]}`)[1:]}, nil
	case "lost":
		delete(j.tasks, id)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "expired"}
	case "nested":
		return state("completed", `,"result":{"resultType":"task","taskId":"inner","status":"working"}`)
	}
	return state("working", "")
}

func (j *jobs) cancels() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.cancelled...)
}

func (j *jobs) polls(id string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if tk, ok := j.tasks[id]; ok {
		return tk.polls
	}
	return 0
}

// eventually polls cond until it holds or ten seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// taskSession connects to j in memory at version, following tasks.
func taskSession(t testing.TB, j *jobs, version string) *mcpimport.Session {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := j.server.Connect(ctx, st, nil)
	must(t, err)
	t.Cleanup(func() { ss.Close() })
	sess, err := mcpimport.Connect(ctx, "jobs", ct, &mcpimport.ConnectOptions{Tasks: true, SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: version}})
	must(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

func jobPlans(t testing.TB, sess *mcpimport.Session, task *mcpimport.TaskOptions) *execution.Plans {
	t.Helper()
	cat, err := mcpimport.Discover(context.Background(), sess, map[string]mcpimport.Binding{
		"job": {Name: "run_job", Title: "Run a job", Scopes: []string{"docs:read"}, NoScopeValidator: true, ConcurrencySafe: true, Task: task},
	}, nil)
	must(t, err)
	app := agnara.New("gw", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	must(t, err)
	return plans
}

func TestRemoteTask(t *testing.T) {
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			j := newJobs(t)
			plans := jobPlans(t, taskSession(t, j, v), &mcpimport.TaskOptions{})
			env, err := call(t, plans, "run_job", `{"mode":"complete"}`)
			if err != nil {
				t.Fatal(err)
			}
			if len(env.Text) != 1 || env.Text[0] != "the report is ready" || string(env.Structured) != "null" {
				t.Errorf("envelope = %+v", env)
			}
			if got := j.polls("task-1"); got != 2 {
				t.Errorf("tasks/get sent %d times, want 2", got)
			}
			if c := j.cancels(); len(c) != 0 {
				t.Errorf("a completed task was cancelled: %v", c)
			}
		})
	}
}

func TestRemoteTaskEnds(t *testing.T) {
	j := newJobs(t)
	plans := jobPlans(t, taskSession(t, j, "2026-07-28"), &mcpimport.TaskOptions{})
	t.Run("input", func(t *testing.T) { taskAsks(t, j, plans) })
	for _, tc := range []struct {
		mode      string
		reason    execution.Reason
		cancelled bool
	}{
		{"toolerror", mcpimport.ReasonToolError, false},
		{"fail", mcpimport.ReasonProtocolError, false},
		{"cancelled", mcpimport.ReasonTaskCancelled, false},
		{"roots", mcpimport.ReasonTaskInputRequired, true}, // roots are not relayed
		{"lost", mcpimport.ReasonTaskLost, false},
		{"malformed", mcpimport.ReasonProtocolError, false},
		{"badstatus", mcpimport.ReasonProtocolError, false},
		{"bighandle", mcpimport.ReasonResultTooLarge, false},
		{"bigresult", mcpimport.ReasonResultTooLarge, false},
		{"othertask", mcpimport.ReasonProtocolError, true},
		{"nested", mcpimport.ReasonProtocolError, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			before := len(j.cancels())
			_, err := call(t, plans, "run_job", `{"mode":"`+tc.mode+`"}`)
			if got := execution.ReasonOf(err); got != tc.reason {
				t.Fatalf("reason = %q (%v), want %q", got, err, tc.reason)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("the remote's words reached the caller: %v", err)
			}
			if got := len(j.cancels()) > before; got != tc.cancelled {
				t.Errorf("tasks/cancel sent: %v, want %v", got, tc.cancelled)
			}
		})
	}
}

func TestRemoteTaskTimesOut(t *testing.T) {
	j := newJobs(t)
	// The timeout bounds the whole call: long enough for a loaded machine
	// to create the task first, which is then cancelled.
	plans := jobPlans(t, taskSession(t, j, "2026-07-28"), &mcpimport.TaskOptions{Timeout: time.Second})
	_, err := call(t, plans, "run_job", `{"mode":"forever"}`)
	if got := execution.ReasonOf(err); got != mcpimport.ReasonTimeout {
		t.Fatalf("reason = %q (%v), want %q", got, err, mcpimport.ReasonTimeout)
	}
	// The cancel is sent before the call returns.
	if c := j.cancels(); len(c) != 1 || c[0] != "task-1" {
		t.Errorf("tasks/cancel sent for %v, want [task-1]", c)
	}
}

func TestRemoteTaskPollLimit(t *testing.T) {
	j := newJobs(t)
	plans := jobPlans(t, taskSession(t, j, "2026-07-28"), &mcpimport.TaskOptions{Polls: 3})
	_, err := call(t, plans, "run_job", `{"mode":"forever"}`)
	if got := execution.ReasonOf(err); got != mcpimport.ReasonTimeout {
		t.Fatalf("reason = %q (%v), want %q", got, err, mcpimport.ReasonTimeout)
	}
	if got := j.polls("task-1"); got != 3 {
		t.Errorf("tasks/get sent %d times, want 3", got)
	}
	if c := j.cancels(); len(c) != 1 {
		t.Errorf("tasks/cancel sent for %v, want one", c)
	}
}

func TestRemoteTaskCallerCancels(t *testing.T) {
	j := newJobs(t)
	plans := jobPlans(t, taskSession(t, j, "2026-07-28"), &mcpimport.TaskOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := callAs(t, ctx, plans, "run_job", `{"mode":"forever"}`, reader)
		done <- err
	}()
	eventually(t, "the task is polled", func() bool { return j.polls("task-1") > 0 })
	cancel()
	err := <-done
	if err == nil || execution.ReasonOf(err) == mcpimport.ReasonTimeout {
		t.Errorf("a caller's cancellation reported as a timeout: %v", err)
	}
	if c := j.cancels(); len(c) != 1 || c[0] != "task-1" {
		t.Errorf("tasks/cancel sent for %v, want [task-1]", c)
	}
}

func TestRemoteTaskWithoutOptIn(t *testing.T) {
	j := newJobs(t)
	plans := jobPlans(t, taskSession(t, j, "2026-07-28"), nil)
	// Without the opt-in, the call declares nothing and a server that honours
	// that answers directly.
	env, err := call(t, plans, "run_job", `{"mode":"complete"}`)
	if err != nil || len(env.Text) != 1 || env.Text[0] != "done at once" {
		t.Fatalf("direct call = %+v, %v", env, err)
	}
	// A task nobody asked for fails closed, rather than passing as an empty
	// success.
	_, err = call(t, plans, "run_job", `{"mode":"rogue"}`)
	if got := execution.ReasonOf(err); got != mcpimport.ReasonProtocolError {
		t.Fatalf("reason = %q (%v), want %q", got, err, mcpimport.ReasonProtocolError)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.declared) != 2 || j.declared[0] || j.declared[1] {
		t.Errorf("declared = %v, want no declarations", j.declared)
	}
}

func TestRemoteTaskSharedHandle(t *testing.T) {
	j := newJobs(t)
	plans := jobPlans(t, taskSession(t, j, "2026-07-28"), &mcpimport.TaskOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := callAs(t, ctx, plans, "run_job", `{"mode":"shared"}`, reader)
		done <- err
	}()
	eventually(t, "the first task is polled", func() bool { return j.polls("shared") > 0 })
	// A second call handed the same task fails closed and cancels nothing.
	_, err := call(t, plans, "run_job", `{"mode":"shared"}`)
	if got := execution.ReasonOf(err); got != mcpimport.ReasonProtocolError {
		t.Fatalf("reason = %q (%v), want %q", got, err, mcpimport.ReasonProtocolError)
	}
	if c := j.cancels(); len(c) != 0 {
		t.Errorf("the other call's task was cancelled: %v", c)
	}
	cancel()
	<-done
}

func TestRemoteTaskBindings(t *testing.T) {
	j := newJobs(t)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := j.server.Connect(ctx, st, nil)
	must(t, err)
	defer ss.Close()
	plain, err := mcpimport.Connect(ctx, "jobs", ct, nil)
	must(t, err)
	defer plain.Close()
	for name, tc := range map[string]struct {
		sess *mcpimport.Session
		opts mcpimport.TaskOptions
	}{
		"session without tasks": {plain, mcpimport.TaskOptions{}},
		"timeout too long":      {taskSession(t, j, "2026-07-28"), mcpimport.TaskOptions{Timeout: mcpimport.MaxCallTimeout + 1}},
		"too many polls":        {taskSession(t, j, "2026-07-28"), mcpimport.TaskOptions{Polls: mcpimport.MaxTaskPolls + 1}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := mcpimport.Discover(ctx, tc.sess, map[string]mcpimport.Binding{
				"job": {Name: "run_job", Title: "Run a job", NoScopeValidator: true, Task: &tc.opts},
			}, nil)
			if execution.ReasonOf(err) != mcpimport.BindingInvalid {
				t.Errorf("err = %v, want %s", err, mcpimport.BindingInvalid)
			}
		})
	}
}

// TestRemoteTaskOverHTTP follows a task of a stateless streamable HTTP
// server on loopback, where the answer is captured in the HTTP client.
func TestRemoteTaskOverHTTP(t *testing.T) {
	j := newJobs(t)
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return j.server }, &mcp.StreamableHTTPOptions{Stateless: true}))
	defer srv.Close()
	ctx := context.Background()
	sess, err := mcpimport.Connect(ctx, "jobs", &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcpimport.ConnectOptions{Tasks: true})
	must(t, err)
	defer sess.Close()
	plans := jobPlans(t, sess, &mcpimport.TaskOptions{})
	env, err := call(t, plans, "run_job", `{"mode":"complete"}`)
	if err != nil || len(env.Text) != 1 || env.Text[0] != "the report is ready" {
		t.Fatalf("call = %+v, %v", env, err)
	}
	taskAsks(t, j, plans)
}

// taskAsks calls a job whose task asks for input: the question is the
// caller's, and the task is left waiting for the answer, not cancelled.
func taskAsks(t *testing.T, j *jobs, plans *execution.Plans) {
	t.Helper()
	before := len(j.cancels())
	p, _ := plans.Lookup("gw.run_job")
	out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: reader, Arguments: json.RawMessage(`{"mode":"input"}`)})
	ir, ok := out.(*execution.InputRequired)
	if err != nil || !ok || len(ir.Requests) != 1 {
		t.Fatalf("a task that asks: %#v, %v", out, err)
	}
	for _, q := range ir.Requests {
		if q.Kind != execution.Elicitation || q.Message != "Your name?" {
			t.Errorf("asked %+v, want the task's question", q)
		}
	}
	if len(j.cancels()) != before {
		t.Errorf("the task that asks was cancelled")
	}
}
