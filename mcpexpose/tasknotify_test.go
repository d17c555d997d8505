package mcpexpose_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
)

// TestTaskNotificationsToTheOwnerOnly is tasktest.CheckNotifications on
// one instance with the in-memory store; redistasks'
// TestTaskNotificationsAcrossInstances runs it on two sharing Redis.
func TestTaskNotificationsToTheOwnerOnly(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second})
	tasktest.CheckNotifications(t, w, url, url)
}

// TestTaskListenRefusals: a listen for tasks without the extension gets
// -32021 naming it, and one whose taskIds are not a list of at most 64
// strings of at most 128 bytes -32602; an unknown id is left out of the acknowledgement exactly
// like another principal's.
func TestTaskListenRefusals(t *testing.T) {
	w := tasktest.NewWorld(t)
	url := w.Instance(t, mcpexpose.TaskOptions{})
	if _, e := tasktest.Listen(t, url, "alice", false, []string{"x"}); e == nil || e["code"] != float64(-32021) || !strings.Contains(tasktest.MustJSON(t, e), mcpversion.TasksExtension) {
		t.Errorf("without the extension: %v, want -32021 naming it", e)
	}
	many := make([]string, 65)
	for i := range many {
		many[i] = "t"
	}
	for _, bad := range []any{"x", []any{1}, many, []string{strings.Repeat("t", 129)}} {
		if _, e := tasktest.Listen(t, url, "alice", true, bad); e == nil || e["code"] != float64(-32602) {
			t.Errorf("taskIds %.40v: %v, want -32602", bad, e)
		}
	}
	l, e := tasktest.Listen(t, url, "alice", true, []string{"no-such-task"})
	if e != nil {
		t.Fatal(e)
	}
	if got := l.Agreed(); len(got) != 0 {
		t.Errorf("an unknown task was agreed to: %v", got)
	}
}

// TestTaskProgressIsNotified: a running task's progress, written to its
// status message at a heartbeat, reaches its owner's listener as a
// working notification carrying that message.
func TestTaskProgressIsNotified(t *testing.T) {
	release, listening := make(chan struct{}), make(chan struct{})
	app := agnara.New("jobs", nil)
	halfway := app.Capability(func(ec *execution.Context) (string, error) {
		select { // progress after the listen: its state at the listen cannot carry it
		case <-ec.Done():
			return "", ec.Err()
		case <-listening:
		}
		ec.Progress(1, 2, "halfway there")
		select {
		case <-ec.Done():
			return "", ec.Err()
		case <-release:
			return "done", nil
		}
	}, &agnara.CapabilityOptions{Name: "halfway", Description: "Reports progress, then waits."})
	exp := mcpexpose.New(app)
	exp.Tool(halfway, &mcpexpose.ToolOptions{Name: "halfway", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	w := &tasktest.World{Snap: snap, Release: release}
	url := w.Instance(t, mcpexpose.TaskOptions{Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second})
	id := tasktest.StartTask(t, url, "alice", "halfway", map[string]any{})
	alice, e := tasktest.Listen(t, url, "alice", true, []string{id})
	if e != nil {
		t.Fatal(e)
	}
	close(listening)
	for {
		p, _ := alice.Until(t, id, "working")
		if msg, _ := p["statusMessage"].(string); strings.Contains(msg, "halfway there") {
			break
		}
	}
	close(release)
	alice.Until(t, id, "completed")
}
