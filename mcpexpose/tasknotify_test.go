package mcpexpose_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/tasks/redistasks"
)

// taskListener is a client's subscriptions/listen stream for task status:
// the Go SDK client (v1.8.0) cannot name taskIds in a listen, nor take a
// notifications/tasks, so this is the listen as the extension writes it,
// over plain HTTP, read event by event.
type taskListener struct {
	ack    map[string]any // the acknowledgement's params
	events chan map[string]any
	cancel context.CancelFunc
}

// listenTasks opens a listen for the task ids as token, declaring the tasks
// extension when ext. Refused, it returns nil and the JSON-RPC error.
func listenTasks(t *testing.T, url, token string, ext bool, ids any) (*taskListener, map[string]any) {
	t.Helper()
	caps := map[string]any{}
	if ext {
		caps["extensions"] = map[string]any{mcpexpose.TasksExtension: map[string]any{}}
	}
	params := map[string]any{"notifications": map[string]any{"taskIds": ids}, "_meta": mcptest.Meta(caps)}
	ctx, cancel := context.WithCancel(context.Background())
	req := mcptest.Request(t, url, "subscriptions/listen", params, token).WithContext(ctx)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// A refusal: one JSON-RPC error, with an HTTP error status.
		defer cancel()
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("listen: HTTP %d, %v", resp.StatusCode, err)
		}
		e, _ := m["error"].(map[string]any)
		if e == nil {
			t.Fatalf("listen: HTTP %d %v, want an event stream or an error", resp.StatusCode, m)
		}
		return nil, e
	}
	events := make(chan map[string]any, 64)
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					events <- m
				}
			}
		}
	}()
	l := &taskListener{events: events, cancel: cancel}
	t.Cleanup(cancel)
	first := l.next(t)
	if first["method"] != "notifications/subscriptions/acknowledged" {
		cancel()
		e, _ := first["error"].(map[string]any)
		if e == nil {
			t.Fatalf("listen: first message %v, want the acknowledgement or an error", first)
		}
		return nil, e
	}
	l.ack, _ = first["params"].(map[string]any)
	return l, nil
}

// next returns the stream's next message, within a generous deadline.
func (l *taskListener) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m, ok := <-l.events:
		if !ok {
			t.Fatal("the listen stream ended")
		}
		return m
	case <-time.After(15 * time.Second):
		t.Fatal("no message on the listen stream")
	}
	return nil
}

// agreed returns the task ids the acknowledgement names.
func (l *taskListener) agreed() []string {
	notes, _ := l.ack["notifications"].(map[string]any)
	raw, _ := notes["taskIds"].([]any)
	var ids []string
	for _, v := range raw {
		s, _ := v.(string)
		ids = append(ids, s)
	}
	return ids
}

// until reads task notifications until one of task id has status, and
// returns it with every notification read on the way.
func (l *taskListener) until(t *testing.T, id, status string) (last map[string]any, seen []map[string]any) {
	t.Helper()
	for {
		m := l.next(t)
		if m["method"] != "notifications/tasks" {
			t.Fatalf("unexpected message on the listen stream: %v", m)
		}
		p, _ := m["params"].(map[string]any)
		seen = append(seen, p)
		if p["taskId"] == id && p["status"] == status {
			return p, seen
		}
	}
}

func statuses(seen []map[string]any) []string {
	var out []string
	for _, p := range seen {
		out = append(out, p["taskId"].(string)[:4]+":"+p["status"].(string))
	}
	return out
}

// answerName answers the ask task's question.
func answerName(t *testing.T, url, token, id, name string) {
	t.Helper()
	if _, e := rpc(t, url, token, true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": name}}}}); e != nil {
		t.Fatal(e)
	}
}

// checkTaskNotifications is the scenario both tests run, with alice's task
// created on a and the listens and answers on b (a == b for one
// instance): alice hears of her task's every status, from its state when
// she listens to completed with the result, as tasks/get shows it; bob,
// listening for alice's task and his own, is agreed and told only his own.
func checkTaskNotifications(t *testing.T, w *taskWorld, a, b string) {
	id := startTask(t, a, "alice", "ask", map[string]any{})
	bobs := startTask(t, a, "bob", "work", map[string]any{"label": "b"})

	alice, e := listenTasks(t, b, "alice", true, []string{id})
	if e != nil {
		t.Fatal(e)
	}
	if got := alice.agreed(); len(got) != 1 || got[0] != id {
		t.Fatalf("alice's listen agreed to %v, want [%s]", got, id)
	}
	bob, e := listenTasks(t, b, "bob", true, []string{id, bobs})
	if e != nil {
		t.Fatal(e)
	}
	if got := bob.agreed(); len(got) != 1 || got[0] != bobs {
		t.Fatalf("bob's listen agreed to %v, want only his own task [%s]", got, bobs)
	}

	asked, _ := alice.until(t, id, "input_required")
	if _, ok := asked["inputRequests"].(map[string]any)["name"]; !ok {
		t.Fatalf("input_required notification without its question: %v", asked)
	}
	if meta, _ := asked["_meta"].(map[string]any); meta["io.modelcontextprotocol/subscriptionId"] == nil {
		t.Errorf("notification without its subscription id: %v", asked)
	}
	answerName(t, b, "alice", id, "Bea")
	done, seen := alice.until(t, id, "completed")
	if text, _ := json.Marshal(done["result"]); !strings.Contains(string(text), "hi Bea") {
		t.Errorf("completed notification's result = %s", text)
	}
	got, _ := getTask(t, b, "alice", id)
	delete(got, "resultType")
	delete(done, "_meta")
	if gb, _ := json.Marshal(got); string(gb) != mustJSON(t, done) {
		t.Errorf("the completed notification is not what tasks/get shows:\n%s\n%s", mustJSON(t, done), gb)
	}
	t.Logf("alice heard %v", statuses(seen))

	// Bob's task ends after alice's: his stream carries his own task only.
	close(w.release)
	_, bobSeen := bob.until(t, bobs, "completed")
	for _, p := range bobSeen {
		if p["taskId"] != bobs {
			t.Fatalf("bob was told of alice's task: %v", p)
		}
	}
	t.Logf("bob heard %v", statuses(bobSeen))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTaskNotificationsToTheOwnerOnly is checkTaskNotifications on one
// instance with the in-memory store.
func TestTaskNotificationsToTheOwnerOnly(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second})
	checkTaskNotifications(t, w, url, url)
}

// TestTaskNotificationsAcrossInstances is checkTaskNotifications on two
// instances sharing one redis-server: alice's task runs on a, its
// listeners are on b, where every change a makes reaches them.
func TestTaskNotificationsAcrossInstances(t *testing.T) {
	r := enginetest.Redis(t)
	store, closeFn, err := redistasks.Open(t.Context(), r.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	w := newTaskWorld(t)
	o := mcpexpose.TaskOptions{Store: store, Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second}
	a, b := w.instance(t, o), w.instance(t, o)
	checkTaskNotifications(t, w, a, b)
}

// TestTaskListenRefusals: a listen for tasks without the extension gets
// -32021 naming it, and one whose taskIds are not a list of at most 64
// strings of at most 128 bytes -32602; an unknown id is left out of the acknowledgement exactly
// like another principal's.
func TestTaskListenRefusals(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	if _, e := listenTasks(t, url, "alice", false, []string{"x"}); e == nil || e["code"] != float64(-32021) || !strings.Contains(mustJSON(t, e), mcpexpose.TasksExtension) {
		t.Errorf("without the extension: %v, want -32021 naming it", e)
	}
	many := make([]string, 65)
	for i := range many {
		many[i] = "t"
	}
	for _, bad := range []any{"x", []any{1}, many, []string{strings.Repeat("t", 129)}} {
		if _, e := listenTasks(t, url, "alice", true, bad); e == nil || e["code"] != float64(-32602) {
			t.Errorf("taskIds %.40v: %v, want -32602", bad, e)
		}
	}
	l, e := listenTasks(t, url, "alice", true, []string{"no-such-task"})
	if e != nil {
		t.Fatal(e)
	}
	if got := l.agreed(); len(got) != 0 {
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
	w := &taskWorld{snap: snap, release: release}
	url := w.instance(t, mcpexpose.TaskOptions{Heartbeat: 10 * time.Millisecond, HeartbeatLapse: 10 * time.Second})
	id := startTask(t, url, "alice", "halfway", map[string]any{})
	alice, e := listenTasks(t, url, "alice", true, []string{id})
	if e != nil {
		t.Fatal(e)
	}
	close(listening)
	for {
		p, _ := alice.until(t, id, "working")
		if msg, _ := p["statusMessage"].(string); strings.Contains(msg, "halfway there") {
			break
		}
	}
	close(release)
	alice.until(t, id, "completed")
}
