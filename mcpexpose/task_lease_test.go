package mcpexpose_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
)

// cutStore is one instance's way to an in-memory store shared with
// another instance in this process, which the test can cut as
// redistasks' tests cut Redis: while cut, every operation fails as a
// shared store's does when it cannot be reached.
type cutStore struct {
	tasks.Store
	cut atomic.Bool
}

var errPartitioned = fmt.Errorf("%w: partitioned by the test", tasks.ErrUnavailable)

func (c *cutStore) Create(ctx context.Context, t *tasks.Task) error {
	if c.cut.Load() {
		return errPartitioned
	}
	return c.Store.Create(ctx, t)
}

func (c *cutStore) Get(ctx context.Context, id string) (*tasks.Task, error) {
	if c.cut.Load() {
		return nil, errPartitioned
	}
	return c.Store.Get(ctx, id)
}

func (c *cutStore) Update(ctx context.Context, id string, f func(*tasks.Task) error) (*tasks.Task, error) {
	if c.cut.Load() {
		return nil, errPartitioned
	}
	return c.Store.Update(ctx, id, f)
}

// TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed is
// tasktest.CutOff (ADR 0067) on the in-memory store, with
// instance A's way to it cut: A cancels the handler before B declares
// the task failed, and the late result is never reported as completed.
// redistasks' TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed
// runs it on Redis, behind a TCP proxy the test cuts.
func TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed(t *testing.T) {
	m := tasks.NewMemory(nil)
	a := &cutStore{Store: m}
	tasktest.CutOff(t, a, m, func() { a.cut.Store(true) }, func() { a.cut.Store(false) })
}

// TestTaskOptionsOrderTheDeadlines: the lapse other instances wait for
// must be longer than the running instance's own deadline, which must be
// longer than a heartbeat; NewHandler refuses anything else, defaults
// included.
func TestTaskOptionsOrderTheDeadlines(t *testing.T) {
	w := tasktest.NewEffectWorld(t)
	for _, tc := range []struct {
		name string
		o    mcpexpose.TaskOptions
		want string // in the error; "" for none
	}{
		{"defaults", mcpexpose.TaskOptions{}, ""},
		{"all set", mcpexpose.TaskOptions{Heartbeat: time.Second, RenewDeadline: 5 * time.Second, HeartbeatLapse: 6 * time.Second}, ""},
		{"deadline equals lapse", mcpexpose.TaskOptions{Heartbeat: time.Second, RenewDeadline: 6 * time.Second, HeartbeatLapse: 6 * time.Second}, "RenewDeadline 6s must be shorter than Tasks.HeartbeatLapse 6s"},
		{"deadline past lapse", mcpexpose.TaskOptions{RenewDeadline: 20 * time.Second}, "RenewDeadline 20s must be shorter than Tasks.HeartbeatLapse 15s"},
		{"deadline within a heartbeat", mcpexpose.TaskOptions{Heartbeat: time.Second, RenewDeadline: time.Second}, "RenewDeadline 1s must exceed Tasks.Heartbeat 1s"},
		{"default deadline within a heartbeat", mcpexpose.TaskOptions{Heartbeat: time.Second, HeartbeatLapse: 1200 * time.Millisecond}, "RenewDeadline 800ms must exceed Tasks.Heartbeat 1s"},
		{"lapse within a heartbeat", mcpexpose.TaskOptions{Heartbeat: 2 * time.Second, HeartbeatLapse: time.Second}, "HeartbeatLapse 1s must exceed Tasks.Heartbeat 2s"},
		{"negative", mcpexpose.TaskOptions{RenewDeadline: -time.Second}, "negative Tasks duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mcpexpose.NewHandler(w.Snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Tasks: &tc.o}})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("NewHandler: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("NewHandler: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// TestTaskStoreDownAtCreationRunsNothing: when the task cannot be stored,
// the caller is told to retry, and the handler — which would otherwise run
// with no task to report it, and again on the retry — never runs.
func TestTaskStoreDownAtCreationRunsNothing(t *testing.T) {
	var logs mcptest.Buffer
	var effects atomic.Int32
	app := agnara.New("jobs", &agnara.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	effect := app.Capability(func(context.Context) (string, error) {
		effects.Add(1) // at once, whatever its context says
		return "effect made", nil
	}, &agnara.CapabilityOptions{Name: "effect", Description: "Makes an effect."})
	exp := mcpexpose.New(app)
	exp.Tool(effect, &mcpexpose.ToolOptions{Name: "effect", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	store := &cutStore{Store: tasks.NewMemory(nil)}
	store.cut.Store(true)
	url := tasktest.Serve(t, snap, mcpexpose.TaskOptions{Store: store}, io.Discard)
	res, e := tasktest.Call(t, url, "alice", true, "effect", map[string]any{})
	if e == nil || e["code"] != float64(-32603) || !strings.Contains(fmt.Sprint(e["message"]), "retry later") || res != nil {
		t.Fatalf("tools/call with the store down = %v %v, want -32603 retry later", res, e)
	}
	tasktest.WaitUntil(t, "the invocation to end", func() bool { return strings.Contains(logs.String(), "invocation finished") })
	if n := effects.Load(); n != 0 {
		t.Errorf("the handler ran %d times for a task that was never stored", n)
	}
}
