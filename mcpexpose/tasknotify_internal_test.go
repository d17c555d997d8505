package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
)

// stuckWriter is a client that stops reading after the acknowledgement:
// every write after the first blocks until unstuck.
type stuckWriter struct {
	header http.Header
	stuck  chan struct{}

	mu     sync.Mutex
	writes [][]byte
}

func (w *stuckWriter) Header() http.Header { return w.header }
func (w *stuckWriter) WriteHeader(int)     {}
func (w *stuckWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	first := len(w.writes) == 0
	w.writes = append(w.writes, bytes.Clone(p))
	w.mu.Unlock()
	if !first {
		<-w.stuck
	}
	return len(p), nil
}

// TestTaskStreamBoundedWhenNotRead offers a stream whose client stopped
// reading thousands of states of its two tasks: offering never blocks (the
// task's run would), and what waits is the latest state of each task
// only. The acknowledgement carries the agreed task ids.
func TestTaskStreamBoundedWhenNotRead(t *testing.T) {
	w := &stuckWriter{header: http.Header{}, stuck: make(chan struct{})}
	defer close(w.stuck)
	ts := newTaskStream(w, json.RawMessage(`7`))
	alice := policy.NewPrincipal("alice", nil)
	ts.agree(alice, []string{"a", "b"})
	ack := []byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/subscriptionId\":7},\"notifications\":{}}}\n\n")
	if _, err := ts.Write(ack); err != nil {
		t.Fatal(err)
	}
	if got := w.writes[0]; !bytes.Contains(got, []byte(`"taskIds":["a","b"]`)) || !bytes.HasSuffix(got, []byte("}\n\n")) {
		t.Fatalf("acknowledgement written as %q, want the agreed task ids in one event", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go ts.run(ctx)

	offered := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(offered)
		for i := range 5000 {
			for _, id := range []string{"a", "b"} {
				task := &tasks.Task{ID: id, PrincipalID: "alice", Status: tasks.Working, StatusMessage: strconv.Itoa(i), UpdatedAt: start.Add(time.Duration(i) * time.Millisecond)}
				ts.offer(task, taskWire{TaskID: id, Status: task.Status, StatusMessage: task.StatusMessage})
			}
		}
	}()
	select {
	case <-offered:
	case <-time.After(30 * time.Second):
		t.Fatal("offering to a stream whose client does not read blocked")
	}
	ts.pmu.Lock()
	waiting := len(ts.pending)
	var held int
	for _, b := range ts.pending {
		held += len(b)
	}
	ts.pmu.Unlock()
	if waiting > 2 || held > 2*512 {
		t.Errorf("%d notifications (%d bytes) wait for a client that does not read, want at most one per task", waiting, held)
	}
	// Another principal's task is never offered.
	ts.offer(&tasks.Task{ID: "a", PrincipalID: "bob", Status: tasks.Completed, UpdatedAt: start.Add(time.Hour)}, taskWire{TaskID: "a", Status: tasks.Completed})
	ts.pmu.Lock()
	if m := ts.marks["a"]; m.done {
		t.Error("bob's task was offered to alice's stream")
	}
	ts.pmu.Unlock()
}
