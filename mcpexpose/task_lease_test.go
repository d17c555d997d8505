package mcpexpose_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
	"github.com/google/go-cmp/cmp"
)

// partition is a TCP proxy between one instance and its Redis that the
// test can cut: it stands for a network partition between that instance
// and the task store (the store itself, and other instances, stay well).
// Cut closes the connections it carried and holds new ones open without
// forwarding a byte (the silence of a partition, not a refusal); Heal
// closes those and forwards new connections again. It stops with the test.
type partition struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

func newPartition(t *testing.T, target string) *partition {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &partition{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		p.closeAll()
		p.mu.Unlock()
	})
	return p
}

func (p *partition) addr() string { return p.ln.Addr().String() }

// keep tracks c, unless the partition is cut; it reports whether it did.
func (p *partition) keep(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = struct{}{}
	return !p.cut
}

func (p *partition) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.keep(c) {
			go p.forward(c)
		} // else held, silent, until Heal closes it
	}
}

func (p *partition) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if !p.keep(up) {
		c.Close()
		up.Close()
		return
	}
	go func() {
		io.Copy(up, c)
		up.Close()
		c.Close()
	}()
	io.Copy(c, up)
	c.Close()
	up.Close()
}

func (p *partition) closeAll() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *partition) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	p.closeAll()
}

func (p *partition) Heal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closeAll()
	p.cut = false
}

// cutStore is one instance's way to an in-memory store shared with
// another instance in this process, which the test can cut as the
// partition cuts Redis: while cut, every operation fails as a shared
// store's does when it cannot be reached.
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

// effectWorld has one task tool, effect, whose handler makes an effect
// that cannot be taken back: it says when it starts and when its context
// is cancelled, and then, ignoring the cancellation as a handler in the
// middle of its work may, finishes when released and returns a result.
type effectWorld struct {
	snap      *mcpexpose.Snapshot
	started   chan struct{}
	cancelled chan struct{}
	release   chan struct{}
	effects   atomic.Int32
}

func newEffectWorld(t *testing.T) *effectWorld {
	t.Helper()
	w := &effectWorld{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1), release: make(chan struct{})}
	app := agnara.New("jobs", nil)
	effect := app.Capability(func(ctx context.Context) (string, error) {
		w.started <- struct{}{}
		<-ctx.Done()
		w.cancelled <- struct{}{}
		<-w.release
		w.effects.Add(1)
		return "effect made", nil
	}, &agnara.CapabilityOptions{Name: "effect", Description: "Makes an effect."})
	exp := mcpexpose.New(app)
	exp.Tool(effect, &mcpexpose.ToolOptions{Name: "effect", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	w.snap = snap
	return w
}

// serveTasks serves snap with the task options on a loopback server,
// logging to logs.
func serveTasks(t *testing.T, snap *mcpexpose.Snapshot, o mcpexpose.TaskOptions, logs io.Writer) string {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: people, Server: &mcpexpose.ServerOptions{Logger: logger, Tasks: &o}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// signalled waits for one signal on ch, within a deadline.
func signalled(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed is ADR 0067's
// lease: two instances share one task store; instance A, running a
// task, is cut off from the store. A cancels the handler itself once its
// heartbeats have gone unrecorded for RenewDeadline, before B, polling the
// task all along, can declare it failed (only after HeartbeatLapse, longer
// by construction), and the result the handler returns once the task is
// failed is never reported as completed: the client that calls again
// after "failed" is the only one to have the effect made for it, the
// first having been stopped or, when the handler ignored the stop, kept
// unreported.
//
// The order is what is asserted, never a duration: the options put 2.8 s
// between A's deadline and B's, which only a stall of A's run longer than
// that could reverse.
func TestTaskRunnerCutOffIsCancelledBeforeItIsDeclaredFailed(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stores returns A's store, B's store, and how to cut and heal A's.
		stores func(t *testing.T) (a, b tasks.Store, cut, heal func())
	}{
		{"redis", func(t *testing.T) (tasks.Store, tasks.Store, func(), func()) {
			r := enginetest.Redis(t)
			p := newPartition(t, r.Addr())
			a, closeA, err := redistasks.Open(t.Context(), "redis://"+p.addr()+"/0", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeA() })
			b, closeB, err := redistasks.Open(t.Context(), r.URL(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeB() })
			return a, b, p.Cut, p.Heal
		}},
		{"memory", func(t *testing.T) (tasks.Store, tasks.Store, func(), func()) {
			m := tasks.NewMemory(nil)
			a := &cutStore{Store: m}
			return a, m, func() { a.cut.Store(true) }, func() { a.cut.Store(false) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storeA, storeB, cut, heal := tc.stores(t)
			w := newEffectWorld(t)
			o := mcpexpose.TaskOptions{Heartbeat: 20 * time.Millisecond, RenewDeadline: 200 * time.Millisecond, HeartbeatLapse: 3 * time.Second}
			var logsA mcptest.Buffer
			oa, ob := o, o
			oa.Store, ob.Store = storeA, storeB
			a := serveTasks(t, w.snap, oa, &logsA)
			b := serveTasks(t, w.snap, ob, io.Discard)

			id := startTask(t, a, "alice", "effect", map[string]any{})
			signalled(t, w.started, "the handler to start on A")
			if res, e := getTask(t, b, "alice", id); e != nil || res["status"] != "working" {
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
				<-w.cancelled
				event("A: handler cancelled")
			}()
			cut()
			deadline := time.Now().Add(20 * time.Second)
			for {
				res, e := getTask(t, b, "alice", id)
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
			close(w.release)
			waitUntil(t, "A to drop the late result, or to report it", func() bool {
				res, _ := getTask(t, b, "alice", id)
				return strings.Contains(logsA.String(), "task result dropped") || res["status"] != "failed"
			})
			for _, url := range []string{b, a} {
				res, e := getTask(t, url, "alice", id)
				errObj, _ := res["error"].(map[string]any)
				if e != nil || res["status"] != "failed" || res["result"] != nil || errObj["code"] != float64(-32603) {
					t.Errorf("tasks/get after the late result = %v %v, want failed with -32603 and no result", res, e)
				}
			}
			if got := w.effects.Load(); got != 1 {
				t.Errorf("effects = %d, want the one unreported", got)
			}
			if msg := "task cancelled: the task store has not recorded its heartbeat within the renew deadline"; !strings.Contains(logsA.String(), msg) {
				t.Errorf("A did not log %q:\n%s", msg, logsA.String())
			}
		})
	}
}

// TestTaskOptionsOrderTheDeadlines: the lapse other instances wait for
// must be longer than the running instance's own deadline, which must be
// longer than a heartbeat; NewHandler refuses anything else, defaults
// included.
func TestTaskOptionsOrderTheDeadlines(t *testing.T) {
	w := newEffectWorld(t)
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
			_, err := mcpexpose.NewHandler(w.snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Tasks: &tc.o}})
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
	url := serveTasks(t, snap, mcpexpose.TaskOptions{Store: store}, io.Discard)
	res, e := call(t, url, "alice", true, "effect", map[string]any{})
	if e == nil || e["code"] != float64(-32603) || !strings.Contains(fmt.Sprint(e["message"]), "retry later") || res != nil {
		t.Fatalf("tools/call with the store down = %v %v, want -32603 retry later", res, e)
	}
	waitUntil(t, "the invocation to end", func() bool { return strings.Contains(logs.String(), "invocation finished") })
	if n := effects.Load(); n != 0 {
		t.Errorf("the handler ran %d times for a task that was never stored", n)
	}
}

// TestRedisTaskStoreTimeoutBoundsAPartition: redistasks.Options.Timeout
// bounds an operation on a connection that has gone silent, however long
// the client's own read timeout (an hour here, from the URL): a store
// that hung for that long would hold a tasks/get, and every heartbeat of
// the running instance, for as long.
func TestRedisTaskStoreTimeoutBoundsAPartition(t *testing.T) {
	r := enginetest.Redis(t)
	p := newPartition(t, r.Addr())
	store, closeFn, err := redistasks.Open(t.Context(), "redis://"+p.addr()+"/0?read_timeout=1h&write_timeout=1h", &redistasks.Options{Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	if _, err := store.Get(t.Context(), "nothing"); err != tasks.ErrNotFound {
		t.Fatalf("Get before the partition = %v, want ErrNotFound", err)
	}
	p.Cut()
	got := make(chan error, 1)
	go func() {
		_, err := store.Get(context.Background(), "nothing")
		got <- err
	}()
	select {
	case err := <-got:
		if !errors.Is(err, tasks.ErrUnavailable) {
			t.Errorf("Get across the partition = %v, want ErrUnavailable", err)
		}
	case <-time.After(20 * time.Second):
		p.Heal() // let the Get end with the test
		t.Fatal("Get across the partition did not end within 20s: its Timeout of 50ms is not applied")
	}
}
