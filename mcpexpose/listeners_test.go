package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
)

// TestListenPendingIsBounded: a listen whose client stops reading (its
// writer blocked in a write) holds at most one event of each kind waiting,
// and one update of each resource it agreed to, however many swaps and
// updates come, in the rule's order (ADR 90): the tool list, the resource
// list, the prompt list, as first queued.
func TestListenPendingIsBounded(t *testing.T) {
	snap := func(tools ...string) *Snapshot {
		app := agnara.New("bounded", nil)
		exp := New(app)
		for _, name := range tools {
			exp.Tool(app.Capability(func() (string, error) { return name, nil }, &agnara.CapabilityOptions{Name: name, Description: name}), nil)
		}
		s, err := exp.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := snap("a"), snap("a", "b")
	var ls edgeListens
	l := &edgeListen{tools: true, resources: true, prompts: true, uris: []string{"docs://x", "docs://y"}, wake: make(chan struct{}, 1)}
	ls.add(l)
	for i := range 1000 {
		old, next := a, b
		if i%2 == 1 {
			old, next = b, a
		}
		ls.changed(old, next, i%3 == 0, i%5 == 0)
		ls.changed(nil, nil, true, true) // a retired epoch's sweep
		ls.updated("docs://x")
		ls.updated("docs://other")
	}
	want := []listenEvent{{kind: listenTools}, {kind: listenResources}, {kind: listenPrompts}, {kind: listenUpdated, uri: "docs://x"}}
	if got := l.take(); !slices.Equal(got, want) {
		t.Errorf("pending: %v, want %v", got, want)
	}
	ls.remove(l)
	ls.changed(a, b, true, true)
	if got := l.take(); len(got) != 0 {
		t.Errorf("a listen removed was told %v", got)
	}
}

// TestTaskListenHeldBoundedWhenNotRead: a listen naming a task, held by
// the edge (ADR 91), whose client stops reading after the
// acknowledgement (its writer blocked in the write of the task's first
// state): thousands of changes of the task wait as its latest state only,
// in the listen's taskStream, without a goroutine of their own; when the
// request ends, the listen stops following the task.
func TestTaskListenHeldBoundedWhenNotRead(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	app := agnara.New("bounded", nil)
	slow := app.Capability(func(ctx context.Context) (string, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "s", nil
	}, &agnara.CapabilityOptions{Name: "slow", Description: "Slow."})
	exp := New(app)
	exp.Tool(slow, &ToolOptions{Name: "slow", Task: TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(snap, &HandlerOptions{Server: &ServerOptions{Tasks: &TaskOptions{Heartbeat: time.Hour}}, Limits: &Limits{StreamKeepAlive: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	caps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, mcptest.Request(t, "http://x/", "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{}, "_meta": mcptest.Meta(caps)}, ""))
	id := regexp.MustCompile(`"taskId":"([^"]+)"`).FindStringSubmatch(rec.Body.String())
	if id == nil {
		t.Fatalf("starting a task: %s", rec.Body)
	}
	task := id[1]
	w := &stuckWriter{header: http.Header{}, stuck: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	req := mcptest.Request(t, "http://x/", "subscriptions/listen", map[string]any{"notifications": map[string]any{"taskIds": []string{task}}, "_meta": mcptest.Meta(caps)}, "").WithContext(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		h.ServeHTTP(w, req)
	}()
	tr := h.srv.tasks
	var ts *taskStream
	for ts == nil {
		tr.listeners.mu.Lock()
		for s := range tr.listeners.by[task] {
			ts = s
		}
		tr.listeners.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
	for {
		w.mu.Lock()
		n := len(w.writes)
		w.mu.Unlock()
		if n >= 2 { // the acknowledgement, and the first state, blocked
			break
		}
		time.Sleep(time.Millisecond)
	}
	if h.FastPathRequests() < 1 {
		t.Fatal("the edge did not hold the listen")
	}
	for range 5000 {
		tr.tell(task)
	}
	ts.pmu.Lock()
	waiting := len(ts.pending)
	ts.pmu.Unlock()
	if waiting != 1 {
		t.Errorf("%d states wait for a client that does not read, want the latest one", waiting)
	}
	if !bytes.Contains(w.writes[0], []byte(`"taskIds":["`+task+`"]`)) {
		t.Errorf("acknowledgement %q does not name the task", w.writes[0])
	}
	cancel()
	close(w.stuck)
	<-served
	tr.listeners.mu.Lock()
	left, streams := len(tr.listeners.by), tr.listeners.streams
	tr.listeners.mu.Unlock()
	if left != 0 || streams != 0 {
		t.Errorf("after the listen ended, %d tasks and %d streams are still followed", left, streams)
	}
}

// TestTaskStreamTakeIsBounded: what the edge takes from a listen's task
// stream is each task's latest state, in the order of the tasks' ids,
// however many were offered; nothing after a task's terminal state.
func TestTaskStreamTakeIsBounded(t *testing.T) {
	ts := newTaskStream(nil, json.RawMessage(`7`))
	alice := policy.NewPrincipal("alice", nil)
	ts.agree(alice, []string{"a", "b"})
	start := time.Now()
	for i := range 1000 {
		for _, id := range []string{"b", "a"} {
			task := &tasks.Task{ID: id, PrincipalID: "alice", Status: tasks.Working, StatusMessage: strconv.Itoa(i), UpdatedAt: start.Add(time.Duration(i) * time.Millisecond)}
			ts.offer(task, taskWire{TaskID: id, Status: task.Status, StatusMessage: task.StatusMessage})
		}
	}
	done := &tasks.Task{ID: "a", PrincipalID: "alice", Status: tasks.Completed, UpdatedAt: start.Add(time.Hour)}
	ts.offer(done, taskWire{TaskID: "a", Status: tasks.Completed})
	ts.offer(&tasks.Task{ID: "a", PrincipalID: "alice", Status: tasks.Working, UpdatedAt: start.Add(2 * time.Hour)}, taskWire{TaskID: "a", Status: tasks.Working})
	got := ts.take()
	if len(got) != 2 || !bytes.Contains(got[0], []byte(`"taskId":"a","status":"completed"`)) || !bytes.Contains(got[1], []byte(`"taskId":"b","status":"working","statusMessage":"999"`)) {
		t.Errorf("took %q, want a's completion, then b's latest state", got)
	}
	if again := ts.take(); len(again) != 0 {
		t.Errorf("took %q again", again)
	}
}
