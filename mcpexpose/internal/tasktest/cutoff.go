package tasktest

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/google/go-cmp/cmp"
)

// EffectWorld has one task tool, effect, whose handler makes an effect
// that cannot be taken back: it says when it starts and when its context
// is cancelled, and then, ignoring the cancellation as a handler in the
// middle of its work may, finishes when released and returns a result.
type EffectWorld struct {
	Snap      *mcpexpose.Snapshot
	Started   chan struct{}
	Cancelled chan struct{}
	Release   chan struct{}
	Effects   atomic.Int32
}

// NewEffectWorld compiles an EffectWorld.
func NewEffectWorld(t *testing.T) *EffectWorld {
	t.Helper()
	w := &EffectWorld{Started: make(chan struct{}, 1), Cancelled: make(chan struct{}, 1), Release: make(chan struct{})}
	app := agnara.New("jobs", nil)
	effect := app.Capability(func(ctx context.Context) (string, error) {
		w.Started <- struct{}{}
		<-ctx.Done()
		w.Cancelled <- struct{}{}
		<-w.Release
		w.Effects.Add(1)
		return "effect made", nil
	}, &agnara.CapabilityOptions{Name: "effect", Description: "Makes an effect."})
	exp := mcpexpose.New(app)
	exp.Tool(effect, &mcpexpose.ToolOptions{Name: "effect", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	w.Snap = snap
	return w
}

// Serve serves snap with the task options on a loopback server, logging
// to logs, and returns its URL.
func Serve(t *testing.T, snap *mcpexpose.Snapshot, o mcpexpose.TaskOptions, logs io.Writer) string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: People, Server: &mcpexpose.ServerOptions{Logger: logger, Tasks: &o}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Signalled waits for one signal on ch, within a deadline.
func Signalled(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// CutOff is ADR 0067, on two instances A and B sharing a task
// store through storeA and storeB, where cut cuts A off from the store
// and heal ends the cut: A, running a task, is cut off from the store. A
// cancels the handler itself once its heartbeats have gone unrecorded
// for RenewDeadline, before B, polling the task all along, can declare
// it failed (only after HeartbeatLapse, longer by construction), and the
// result the handler returns once the task is failed is never reported
// as completed: the client that calls again after "failed" is the only
// one to have the effect made for it, the first having been stopped or,
// when the handler ignored the stop, kept unreported.
//
// The order is what is asserted, never a duration: the options put 2.8 s
// between A's deadline and B's, which only a stall of A's run longer than
// that could reverse.
func CutOff(t *testing.T, storeA, storeB tasks.Store, cut, heal func()) {
	t.Helper()
	w := NewEffectWorld(t)
	o := mcpexpose.TaskOptions{Heartbeat: 20 * time.Millisecond, RenewDeadline: 200 * time.Millisecond, HeartbeatLapse: 3 * time.Second}
	var logsA mcptest.Buffer
	oa, ob := o, o
	oa.Store, ob.Store = storeA, storeB
	a := Serve(t, w.Snap, oa, &logsA)
	b := Serve(t, w.Snap, ob, io.Discard)

	id := StartTask(t, a, "alice", "effect", map[string]any{})
	Signalled(t, w.Started, "the handler to start on A")
	if res, e := GetTask(t, b, "alice", id); e != nil || res["status"] != "working" {
		t.Fatalf("B's tasks/get before the partition = %v %v", res, e)
	}

	// Events in the order they happen: A's handler sees its
	// cancellation; B's tasks/get first answers "failed".
	var (
		mu     sync.Mutex
		events []string
	)
	event := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	go func() {
		<-w.Cancelled
		event("A: handler cancelled")
	}()
	cut()
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, e := GetTask(t, b, "alice", id)
		if e != nil {
			t.Fatalf("B's tasks/get: %v", e)
		}
		if res["status"] == "failed" {
			event("B: failed")
			break
		}
		if res["status"] != "working" || time.Now().After(deadline) {
			t.Fatalf("B's tasks/get = %v, want working until failed", res)
		}
		time.Sleep(20 * time.Millisecond) // B's client polling
	}
	mu.Lock()
	got := slices.Clone(events)
	mu.Unlock()
	if diff := cmp.Diff([]string{"A: handler cancelled", "B: failed"}, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}

	// The handler finishes anyway, after the task failed, with the
	// store reachable again: its result is not reported.
	heal()
	close(w.Release)
	WaitUntil(t, "A to drop the late result, or to report it", func() bool {
		res, _ := GetTask(t, b, "alice", id)
		return strings.Contains(logsA.String(), "task result dropped") || res["status"] != "failed"
	})
	for _, url := range []string{b, a} {
		res, e := GetTask(t, url, "alice", id)
		errObj, _ := res["error"].(map[string]any)
		if e != nil || res["status"] != "failed" || res["result"] != nil || errObj["code"] != float64(-32603) {
			t.Errorf("tasks/get after the late result = %v %v, want failed with -32603 and no result", res, e)
		}
	}
	if got := w.Effects.Load(); got != 1 {
		t.Errorf("effects = %d, want the one unreported", got)
	}
	if msg := "task cancelled: the task store has not recorded its heartbeat within the renew deadline"; !strings.Contains(logsA.String(), msg) {
		t.Errorf("A did not log %q:\n%s", msg, logsA.String())
	}
}
