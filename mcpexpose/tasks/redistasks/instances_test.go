package redistasks_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
)

// The tests of this file run mcpexpose's task scenarios on instances
// sharing one redis-server. They live here, not in mcpexpose, so that
// mcpexpose's tests import no Redis client (ADR 71).

func TestTaskSharedThroughRedis(t *testing.T) {
	r := enginetest.Redis(t)
	store, closeFn, err := redistasks.Open(t.Context(), r.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	w := tasktest.NewWorld(t)
	o := mcpexpose.TaskOptions{Store: store, Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second}
	a, b := w.Instance(t, o), w.Instance(t, o)

	// Asked on a, answered on b, completed on a, seen on b.
	id := tasktest.StartTask(t, a, "alice", "ask", map[string]any{})
	tasktest.WaitStatus(t, b, "alice", id, "input_required")
	if _, e := tasktest.GetTask(t, b, "bob", id); e == nil {
		t.Fatal("bob sees alice's task through another instance")
	}
	if _, e := tasktest.RPC(t, b, "alice", true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Bea"}}}}); e != nil {
		t.Fatal(e)
	}
	done := tasktest.WaitStatus(t, b, "alice", id, "completed")
	if text, _ := json.Marshal(done["result"]); !strings.Contains(string(text), "hi Bea") {
		t.Errorf("result = %s", text)
	}

	// Created on a, cancelled through b: a's handler is cancelled and
	// cleaned up.
	id = tasktest.StartTask(t, a, "alice", "work", map[string]any{"label": "x"})
	w.Running(t)
	if _, e := tasktest.RPC(t, b, "alice", true, "tasks/cancel", map[string]any{"taskId": id}); e != nil {
		t.Fatal(e)
	}
	tasktest.WaitStatus(t, b, "alice", id, "cancelled")
	tasktest.WaitUntil(t, "the cancelled handler's cleanup", func() bool { return w.Cleanups.Load() == 1 })
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
	w := tasktest.NewWorld(t)
	// a beats rarely; b's clock is ahead of a's by more than the lapse, so
	// to b, a has fallen silent.
	a := w.Instance(t, mcpexpose.TaskOptions{Store: store, Heartbeat: 20 * time.Millisecond, HeartbeatLapse: time.Second})
	ahead := func() time.Time { return time.Now().Add(time.Minute) }
	b := w.Instance(t, mcpexpose.TaskOptions{Store: store, Heartbeat: 20 * time.Millisecond, HeartbeatLapse: time.Second, Now: ahead})
	id := tasktest.StartTask(t, a, "alice", "work", map[string]any{"label": "lost"})
	w.Running(t)
	res, e := tasktest.GetTask(t, b, "alice", id)
	if e != nil || res["status"] != "failed" {
		t.Fatalf("tasks/get through b = %v %v, want failed", res, e)
	}
	if errObj, _ := res["error"].(map[string]any); errObj["code"] != float64(-32603) || res["result"] != nil {
		t.Fatalf("failed task = %v, want error -32603 and no result", res)
	}
	tasktest.WaitUntil(t, "a to cancel the handler of the failed task", func() bool { return w.Cleanups.Load() == 1 })
	if res, _ := tasktest.GetTask(t, a, "alice", id); res["status"] != "failed" {
		t.Errorf("a overwrote the failed status: %v", res["status"])
	}
}

// TestTaskNotificationsAcrossInstances is tasktest.CheckNotifications on
// two instances sharing one redis-server: alice's task runs on a, its
// listeners are on b, where every change a makes reaches them.
func TestTaskNotificationsAcrossInstances(t *testing.T) {
	r := enginetest.Redis(t)
	store, closeFn, err := redistasks.Open(t.Context(), r.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	w := tasktest.NewWorld(t)
	o := mcpexpose.TaskOptions{Store: store, Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second}
	a, b := w.Instance(t, o), w.Instance(t, o)
	tasktest.CheckNotifications(t, w, a, b)
}
