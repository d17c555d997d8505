package mcpexpose_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// toolFailure decodes the canonical failure of an isError tool result, or
// fails the test.
func toolFailure(t *testing.T, res map[string]any) map[string]any {
	t.Helper()
	content, _ := res["content"].([]any)
	if res["isError"] != true || len(content) != 1 {
		t.Fatalf("result %v, want one failure", res)
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	var f map[string]any
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("failure text %q: %v", text, err)
	}
	return f
}

// taskLimited asserts that res refuses a task with limit.
func taskLimited(t *testing.T, res, rpcErr map[string]any, limit string) {
	t.Helper()
	if rpcErr != nil || res["taskId"] != nil {
		t.Fatalf("refused call = %v %v, want a tool result and no task", res, rpcErr)
	}
	f := toolFailure(t, res)
	want := map[string]any{"limit": limit, "retry_after_ms": float64(30000)}
	if f["code"] != "unavailable" || f["reason"] != string(mcpexpose.ReasonTaskLimit) || !strings.Contains(f["message"].(string), limit) {
		t.Errorf("failure = %v, want unavailable, task_limit, naming %s", f, limit)
	}
	if diff := cmp.Diff(want, f["details"]); diff != "" {
		t.Errorf("details (-want +got):\n%s", diff)
	}
}

// TestTaskCapRefusesPastTheLimits: MaxTasks and MaxTasksPerPrincipal
// refuse a call that would start a task with the canonical "unavailable"
// failure (reason task_limit), before anything runs or is consumed, log it
// at most once a minute, and give the slot back when a task ends.
func TestTaskCapRefusesPastTheLimits(t *testing.T) {
	w := tasktest.NewWorld(t)
	var logs mcptest.Buffer
	url := tasktest.Serve(t, w.Snap, mcpexpose.TaskOptions{MaxTasks: 3, MaxTasksPerPrincipal: 2, Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second}, &logs)

	// A confirmation asked before the cap fills; its answer comes after.
	asked, e := tasktest.Call(t, url, "alice", true, "confirmed", map[string]any{})
	state, _ := asked["requestState"].(string)
	if e != nil || state == "" {
		t.Fatalf("confirmed = %v %v, want the confirmation asked", asked, e)
	}

	first := tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "1"})
	tasktest.StartTask(t, url, "alice", "work", map[string]any{"label": "2"})
	res, e := tasktest.Call(t, url, "alice", true, "work", map[string]any{"label": "3"})
	taskLimited(t, res, e, "MaxTasksPerPrincipal")
	tasktest.StartTask(t, url, "bob", "work", map[string]any{"label": "b1"})
	res, e = tasktest.Call(t, url, "bob", true, "work", map[string]any{"label": "b2"})
	taskLimited(t, res, e, "MaxTasks")

	// The answered confirmation past the cap is refused before its state
	// is opened: the same state and answer run the call once a slot is
	// free.
	retry := map[string]any{"name": "confirmed", "arguments": map[string]any{}, "requestState": state,
		"inputResponses": map[string]any{execution.ConfirmKey: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}}
	res, e = tasktest.RPC(t, url, "alice", true, "tools/call", retry)
	taskLimited(t, res, e, "MaxTasks")

	if n := strings.Count(logs.String(), "task refused: limit reached"); n != 1 {
		t.Errorf("%d refusal records, want 1 a minute:\n%s", n, logs.String())
	}
	if got := w.Cleanups.Load(); got != 0 {
		t.Errorf("%d invocations cleaned up: a refused call ran", got)
	}

	// Cancelling one of alice's tasks frees its slot once its handler has
	// returned: the retry with the same state is then admitted.
	if _, e := tasktest.RPC(t, url, "alice", true, "tasks/cancel", map[string]any{"taskId": first}); e != nil {
		t.Fatal(e)
	}
	tasktest.WaitStatus(t, url, "alice", first, "cancelled")
	var admitted map[string]any
	tasktest.WaitUntil(t, "the cancelled task's slot", func() bool {
		admitted, _ = tasktest.RPC(t, url, "alice", true, "tools/call", retry)
		return admitted["isError"] != true
	})
	if admitted["resultType"] != "task" && toolText(admitted) != `{"result":"ok"}` {
		t.Fatalf("the retry once a slot is free = %v, want the confirmed call run", admitted)
	}

	// Tasks that complete free their slots too.
	close(w.Release)
	tasktest.WaitUntil(t, "every slot to be free", func() bool {
		for _, who := range []string{"alice", "alice", "bob"} {
			res, _ := tasktest.Call(t, url, who, true, "work", map[string]any{"label": "again"})
			if res["isError"] == true {
				return false
			}
		}
		return true
	})
}

func toolText(res map[string]any) string {
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		return ""
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return text
}

// TestTaskCapBoundsMemory floods one handler with task calls from one
// token, as the attack run did (2,000 of 2,000 accepted), and measures
// what the cap holds when full: the calls past it are refused, the heap
// and goroutines grow with the cap, not with the flood, and come back
// when the tasks end.
func TestTaskCapBoundsMemory(t *testing.T) {
	const capacity, flood = 200, 600
	release := make(chan struct{})
	var running atomic.Int32
	app := agnara.New("jobs", nil)
	hold := app.Capability(func(ctx context.Context) (string, error) {
		running.Add(1)
		defer running.Add(-1)
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &agnara.CapabilityOptions{Name: "hold", Description: "Holds until released."})
	exp := mcpexpose.New(app)
	exp.Tool(hold, &mcpexpose.ToolOptions{Name: "hold", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	one := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "flooder", Expiration: time.Now().Add(time.Hour)}, nil
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: one, Server: &mcpexpose.ServerOptions{
		Tasks: &mcpexpose.TaskOptions{MaxTasks: capacity, MaxTasksPerPrincipal: -1},
	}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)

	measure := func() (heap, stack uint64, goroutines int) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc, ms.StackInuse, runtime.NumGoroutine()
	}
	tasktest.Call(t, url, "t", false, "hold", map[string]any{}) // warm up: one refused -32021, connections open
	heap0, stack0, g0 := measure()
	created, refused := 0, 0
	for range flood {
		res, e := tasktest.Call(t, url, "t", true, "hold", map[string]any{})
		switch {
		case e == nil && res["resultType"] == "task":
			created++
		case e == nil && res["isError"] == true && toolFailure(t, res)["reason"] == string(mcpexpose.ReasonTaskLimit):
			refused++
		default:
			t.Fatalf("call = %v %v", res, e)
		}
	}
	tasktest.WaitUntil(t, "every task's handler to run", func() bool { return running.Load() == capacity })
	heap1, stack1, g1 := measure()
	if created != capacity || refused != flood-capacity {
		t.Fatalf("%d created, %d refused of %d, want %d created", created, refused, flood, capacity)
	}
	perTask := (int64(heap1) - int64(heap0)) / capacity
	t.Logf("cap full (%d tasks, %d calls): heap %.1f -> %.1f MiB (%d B a task), stacks %d -> %d KiB, goroutines %d -> %d (%.2f a task)",
		capacity, flood, float64(heap0)/(1<<20), float64(heap1)/(1<<20), perTask, stack0>>10, stack1>>10, g0, g1, float64(g1-g0)/capacity)
	if g1-g0 > 3*capacity {
		t.Errorf("%d goroutines more with the cap full, want at most 3 a task", g1-g0)
	}
	// Measured: some 11.5 KiB; a task that kept its tools/call request
	// alive (through the invocation) cost 27 KiB.
	if perTask > 20<<10 {
		t.Errorf("%d bytes of heap a running task, want the 12 KiB or so it takes: is it keeping its request alive?", perTask)
	}
	close(release)
	tasktest.WaitUntil(t, "the tasks to end and their goroutines with them", func() bool {
		_, _, g := measure()
		return running.Load() == 0 && g <= g0+10
	})
}

// TestTaskCancelledBeforeItsRunStarts cancels a task as soon as its id is
// answered, while the goroutine that runs it has not begun: the run is
// known from the moment the task is answered, so the cancellation wakes
// it, and its handler's context ends.
func TestTaskCancelledBeforeItsRunStarts(t *testing.T) {
	w := tasktest.NewWorld(t)
	defer close(w.Release)
	h, err := mcpexpose.NewHandler(w.Snap, &mcpexpose.HandlerOptions{Tokens: tasktest.People, Server: &mcpexpose.ServerOptions{
		Tasks: &mcpexpose.TaskOptions{Heartbeat: time.Hour, HeartbeatLapse: 2 * time.Hour}}})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	mcpexpose.DelayTaskRuns(h, release)
	srv := httptest.NewServer(h)
	defer srv.Close()

	id := tasktest.StartTask(t, srv.URL, "alice", "work", map[string]any{"label": "early"})
	if _, e := tasktest.RPC(t, srv.URL, "alice", true, "tasks/cancel", map[string]any{"taskId": id}); e != nil {
		t.Fatal(e)
	}
	close(release)
	tasktest.WaitUntil(t, "the cancelled task's handler to end", func() bool { return w.Cleanups.Load() == 1 })
}
