package tasktest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
)

// Listener is a client's subscriptions/listen stream for task status:
// the Go SDK client (v1.8.0) cannot name taskIds in a listen, nor take a
// notifications/tasks, so this is the listen as the extension writes it,
// over plain HTTP, read event by event.
type Listener struct {
	ack    map[string]any // the acknowledgement's params
	events chan map[string]any
	cancel context.CancelFunc
}

// Listen opens a listen for the task ids as token, declaring the tasks
// extension when ext. Refused, it returns nil and the JSON-RPC error.
func Listen(t *testing.T, url, token string, ext bool, ids any) (*Listener, map[string]any) {
	t.Helper()
	caps := map[string]any{}
	if ext {
		caps["extensions"] = map[string]any{mcpversion.TasksExtension: map[string]any{}}
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
	l := &Listener{events: events, cancel: cancel}
	t.Cleanup(cancel)
	first := l.Next(t)
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

// Next returns the stream's next message, within a generous deadline.
func (l *Listener) Next(t *testing.T) map[string]any {
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

// Agreed returns the task ids the acknowledgement names.
func (l *Listener) Agreed() []string {
	notes, _ := l.ack["notifications"].(map[string]any)
	raw, _ := notes["taskIds"].([]any)
	var ids []string
	for _, v := range raw {
		s, _ := v.(string)
		ids = append(ids, s)
	}
	return ids
}

// Until reads task notifications until one of task id has status, and
// returns it with every notification read on the way.
func (l *Listener) Until(t *testing.T, id, status string) (last map[string]any, seen []map[string]any) {
	t.Helper()
	for {
		m := l.Next(t)
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
	if _, e := RPC(t, url, token, true, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": name}}}}); e != nil {
		t.Fatal(e)
	}
}

// CheckNotifications is the scenario of the notification tests, with
// alice's task created on a and the listens and answers on b (a == b for
// one instance): alice hears of her task's every status, from its state
// when she listens to completed with the result, as tasks/get shows it;
// bob, listening for alice's task and his own, is agreed and told only
// his own.
func CheckNotifications(t *testing.T, w *World, a, b string) {
	t.Helper()
	id := StartTask(t, a, "alice", "ask", map[string]any{})
	bobs := StartTask(t, a, "bob", "work", map[string]any{"label": "b"})

	alice, e := Listen(t, b, "alice", true, []string{id})
	if e != nil {
		t.Fatal(e)
	}
	if got := alice.Agreed(); len(got) != 1 || got[0] != id {
		t.Fatalf("alice's listen agreed to %v, want [%s]", got, id)
	}
	bob, e := Listen(t, b, "bob", true, []string{id, bobs})
	if e != nil {
		t.Fatal(e)
	}
	if got := bob.Agreed(); len(got) != 1 || got[0] != bobs {
		t.Fatalf("bob's listen agreed to %v, want only his own task [%s]", got, bobs)
	}

	asked, _ := alice.Until(t, id, "input_required")
	if _, ok := asked["inputRequests"].(map[string]any)["name"]; !ok {
		t.Fatalf("input_required notification without its question: %v", asked)
	}
	if meta, _ := asked["_meta"].(map[string]any); meta["io.modelcontextprotocol/subscriptionId"] == nil {
		t.Errorf("notification without its subscription id: %v", asked)
	}
	answerName(t, b, "alice", id, "Bea")
	done, seen := alice.Until(t, id, "completed")
	if text, _ := json.Marshal(done["result"]); !strings.Contains(string(text), "hi Bea") {
		t.Errorf("completed notification's result = %s", text)
	}
	got, _ := GetTask(t, b, "alice", id)
	delete(got, "resultType")
	delete(done, "_meta")
	if gb, _ := json.Marshal(got); string(gb) != MustJSON(t, done) {
		t.Errorf("the completed notification is not what tasks/get shows:\n%s\n%s", MustJSON(t, done), gb)
	}
	t.Logf("alice heard %v", statuses(seen))

	// Bob's task ends after alice's: his stream carries his own task only.
	close(w.Release)
	_, bobSeen := bob.Until(t, bobs, "completed")
	for _, p := range bobSeen {
		if p["taskId"] != bobs {
			t.Fatalf("bob was told of alice's task: %v", p)
		}
	}
	t.Logf("bob heard %v", statuses(bobSeen))
}

// MustJSON returns v in JSON.
func MustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
