package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxListenTasks bounds the task ids one subscriptions/listen may name,
// and maxTaskIDLen each of them (a task id is 24 characters).
const (
	maxListenTasks = 64
	maxTaskIDLen   = 128
)

// methodTaskStatus is the tasks extension's status notification.
const methodTaskStatus = "notifications/tasks"

// errListenTasks refuses a listen whose notifications.taskIds is not a list
// of at most maxListenTasks strings of at most maxTaskIDLen bytes.
var errListenTasks = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "notifications.taskIds must be a list of at most 64 task ids of at most 128 bytes"}

// badListenTasks reports whether ids, read from a listen's taskIds, are
// past the bounds errListenTasks names.
func badListenTasks(ids []string) bool {
	if len(ids) > maxListenTasks {
		return true
	}
	for _, id := range ids {
		if len(id) > maxTaskIDLen {
			return true
		}
	}
	return false
}

// taskListen is the task part of a 2026-07-28 subscriptions/listen, read
// by the edge from its body: the task ids its notifications.taskIds names
// (nil for none), bad that it is not a list of at most maxListenTasks
// strings, and, once the edge forwards the listen, ts, the stream the edge
// wraps the listen's response in to add the tasks' notifications.
type taskListen struct {
	ids []string
	bad bool
	ts  *taskStream
}

// named reports whether the listen names tasks, well or badly.
func (tl *taskListen) named() bool { return tl.ids != nil || tl.bad }

// taskListenKey is the context key of a listen's task part: the SDK
// serves a 2026-07-28 listen in the context of its HTTP request, and its
// handler's signature has no room for the response's writer.
type taskListenKey struct{}

// withTaskListen returns ctx carrying tl.
func withTaskListen(ctx context.Context, tl *taskListen) context.Context {
	return context.WithValue(ctx, taskListenKey{}, tl)
}

// taskListenIn returns the task part ctx carries, or nil.
func taskListenIn(ctx context.Context) *taskListen {
	tl, _ := ctx.Value(taskListenKey{}).(*taskListen)
	return tl
}

// taskStream is a 2026-07-28 subscriptions/listen response that listens
// for the status of tasks (notifications.taskIds): the SDK writes the
// stream through it, and the tasks side adds notifications/tasks to it once
// the SDK has written its acknowledgement, into which it puts the task ids
// it agreed to. A notification waits in pending, the latest one per task
// only, until the stream's writer ([taskStream.run]) writes it, so that a
// client that does not read holds at most one notification per task it
// listens for (at most maxListenTasks) and never blocks the task's run.
// A listen the edge holds (listen.go) keeps one too, without w: its own
// loop takes what waits ([taskStream.take]) and writes it, and its
// acknowledgement goes through withTaskIDs as the SDK's does here. It is
// safe for concurrent use.
type taskStream struct {
	w   http.ResponseWriter
	sub json.RawMessage // the listen's request id: the subscription's

	wmu    sync.Mutex // serialises the writes to w
	agreed []string   // what the acknowledgement names, set before it is written
	acked  bool
	ended  bool // the SDK's handler returned: w is no longer written

	pmu     sync.Mutex
	owner   policy.Principal    // who listens: only their tasks are offered
	pending map[string][]byte   // task id -> the event to write
	marks   map[string]taskMark // task id -> the newest state offered
	wake    chan struct{}       // buffered 1

	watched bool // counted in taskListeners.streams; guarded by its mu
}

// taskMark is what a stream was last offered of a task: a state older
// than it, or any state after a terminal one, is not sent.
type taskMark struct {
	at   time.Time
	done bool
}

func newTaskStream(w http.ResponseWriter, sub json.RawMessage) *taskStream {
	return &taskStream{w: w, sub: sub, wake: make(chan struct{}, 1)}
}

// Header implements http.ResponseWriter.
func (ts *taskStream) Header() http.Header { return ts.w.Header() }

// WriteHeader implements http.ResponseWriter.
func (ts *taskStream) WriteHeader(code int) {
	ts.wmu.Lock()
	defer ts.wmu.Unlock()
	ts.w.WriteHeader(code)
}

// Write implements http.ResponseWriter. The SDK writes each event in one
// call; the first carrying its acknowledgement gets the agreed task ids.
func (ts *taskStream) Write(p []byte) (int, error) {
	ts.wmu.Lock()
	defer ts.wmu.Unlock()
	if ts.acked || !bytes.Contains(p, []byte(`"notifications/subscriptions/acknowledged"`)) {
		return ts.w.Write(p)
	}
	ts.acked = true
	ts.poke()
	q, ok := withTaskIDs(p, ts.agreed)
	if !ok {
		return ts.w.Write(p)
	}
	if _, err := ts.w.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush implements http.Flusher.
func (ts *taskStream) Flush() {
	ts.wmu.Lock()
	defer ts.wmu.Unlock()
	_ = http.NewResponseController(ts.w).Flush() // best effort, as the SDK's
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (ts *taskStream) Unwrap() http.ResponseWriter { return ts.w }

// agree records who listens and the task ids the acknowledgement names.
func (ts *taskStream) agree(owner policy.Principal, ids []string) {
	ts.pmu.Lock()
	ts.owner = owner
	ts.pmu.Unlock()
	ts.wmu.Lock()
	ts.agreed = ids
	ts.wmu.Unlock()
}

// end marks the SDK's handler returned: nothing is written after it.
func (ts *taskStream) end() {
	ts.wmu.Lock()
	defer ts.wmu.Unlock()
	ts.ended = true
}

func (ts *taskStream) poke() {
	select {
	case ts.wake <- struct{}{}:
	default:
	}
}

// offer queues t's state, as tasks/get shows it (v), for the stream when
// t is its owner's, replacing one not yet written; it never blocks.
func (ts *taskStream) offer(t *tasks.Task, v taskWire) {
	ts.pmu.Lock()
	m, seen := ts.marks[t.ID]
	if !owns(t, ts.owner) || (seen && (m.done || t.UpdatedAt.Before(m.at))) {
		ts.pmu.Unlock()
		return
	}
	b, err := json.Marshal(struct {
		JSONRPC string    `json:"jsonrpc"`
		Method  string    `json:"method"`
		Params  taskEvent `json:"params"`
	}{"2.0", methodTaskStatus, taskEvent{Meta: map[string]json.RawMessage{mcp.MetaKeySubscriptionID: ts.sub}, taskWire: v}})
	if err != nil {
		ts.pmu.Unlock()
		return // strings, times and raw JSON already encoded: cannot fail
	}
	if ts.pending == nil {
		ts.pending, ts.marks = map[string][]byte{}, map[string]taskMark{}
	}
	ts.marks[t.ID] = taskMark{at: t.UpdatedAt, done: t.Status.Terminal()}
	ts.pending[t.ID] = append(append([]byte("event: message\ndata: "), b...), "\n\n"...)
	ts.pmu.Unlock()
	ts.poke()
}

// taskEvent is the params of a notifications/tasks: the task as tasks/get
// shows it, and the subscription it belongs to.
type taskEvent struct {
	Meta map[string]json.RawMessage `json:"_meta"`
	taskWire
}

// run writes what is offered, once the acknowledgement is written, until
// ctx (the listen's) ends.
func (ts *taskStream) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-ts.wake:
		}
		if !ts.flushPending() {
			return
		}
	}
}

// flushPending writes the pending events, and reports whether the stream
// can still be written.
func (ts *taskStream) flushPending() bool {
	ts.wmu.Lock()
	defer ts.wmu.Unlock()
	if ts.ended {
		return false
	}
	if !ts.acked {
		return true
	}
	ts.pmu.Lock()
	pending := ts.pending
	ts.pending = nil
	if pending != nil {
		ts.pending = map[string][]byte{}
	}
	ts.pmu.Unlock()
	for _, b := range pending {
		if _, err := ts.w.Write(b); err != nil {
			return false
		}
	}
	_ = http.NewResponseController(ts.w).Flush()
	return true
}

// take returns the events waiting, in the order of their tasks' ids, and
// empties the queue: for a listen the edge holds, which writes them
// itself (listen.go) where the SDK's listen has run write them.
func (ts *taskStream) take() [][]byte {
	ts.pmu.Lock()
	defer ts.pmu.Unlock()
	out := make([][]byte, 0, len(ts.pending))
	for _, id := range slices.Sorted(maps.Keys(ts.pending)) {
		out = append(out, ts.pending[id])
	}
	clear(ts.pending)
	return out
}

// withTaskIDs returns the SDK's acknowledgement event p with ids as its
// notifications.taskIds, or false when p is not one SSE event of a
// JSON-RPC message or ids is empty.
func withTaskIDs(p []byte, ids []string) ([]byte, bool) {
	start := bytes.Index(p, []byte("data: "))
	if len(ids) == 0 || start < 0 {
		return nil, false
	}
	data := p[start+len("data: "):]
	end := bytes.IndexByte(data, '\n')
	if end < 0 {
		return nil, false
	}
	var msg, params, notes map[string]json.RawMessage
	if json.Unmarshal(data[:end], &msg) != nil || json.Unmarshal(msg["params"], &params) != nil {
		return nil, false
	}
	if raw, ok := params["notifications"]; ok && json.Unmarshal(raw, &notes) != nil {
		return nil, false
	}
	if notes == nil {
		notes = map[string]json.RawMessage{}
	}
	var err error
	if notes["taskIds"], err = json.Marshal(ids); err != nil {
		return nil, false
	}
	if params["notifications"], err = json.Marshal(notes); err != nil {
		return nil, false
	}
	if msg["params"], err = json.Marshal(params); err != nil {
		return nil, false
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, false
	}
	out := slices.Concat(p[:start+len("data: ")], b, data[end:])
	return out, true
}

// taskListeners are the task-listening streams of one server, by task id.
// While there is one and the store tells changes across instances
// ([tasks.Changes]), the server is subscribed to them. It is safe for
// concurrent use.
type taskListeners struct {
	mu      sync.Mutex
	by      map[string]map[*taskStream]bool
	streams int
	stop    context.CancelFunc // ends the subscription
}

// listenFor serves the task part of a subscriptions/listen (its
// notifications.taskIds, read by the edge into rec) of p: it refuses bad
// ids and a client that did not declare the extension (-32021, as the
// extension says), agrees to the ids of p's own tasks (others', and
// unknown ones, are left out alike), queues their state as tasks/get
// shows it, and from then on their state at each change (a stream that
// has not written a task's last state yet writes its latest), until ctx
// ends. It
// returns the function that stops listening, and whether it agreed to any
// task (the listen then lasts until the stream ends).
func (tr *taskRunner) listenFor(ctx context.Context, req mcp.Request, tl *taskListen, p policy.Principal) (stop func(), active bool, err error) {
	if tl.bad {
		return nil, false, errListenTasks
	}
	sr, _ := req.(*mcp.SubscriptionsListenRequest)
	if sr == nil || !declaresTasks(sr.ClientCapabilities()) {
		return nil, false, errTasksNotDeclared("listening for task status")
	}
	ts := tl.ts
	if ts == nil {
		return func() {}, false, nil // not over HTTP: no stream to write to
	}
	agreed, err := tr.follow(ctx, ts, tl.ids, p)
	if err != nil {
		tr.s.logger.LogAttrs(ctx, slog.LevelError, "task store unavailable", slog.Any("error", err))
		return nil, false, errTaskStore
	}
	go ts.run(ctx)
	return func() { tr.unwatch(ts, agreed) }, len(agreed) > 0, nil
}

// follow registers ts, a listen's stream, for the tasks ids that are p's
// own, and queues their state as tasks/get shows it; others', and unknown
// ones, are left out alike. It returns the ids it agreed to, sorted, each
// once, which ts's acknowledgement names; or the store's error, having
// registered nothing. Both the SDK's listen (listenFor) and the edge's
// (listen.go) agree so.
func (tr *taskRunner) follow(ctx context.Context, ts *taskStream, ids []string, p policy.Principal) ([]string, error) {
	ts.agree(p, nil)
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	// Watch first, then read: a change between the two is told, not missed.
	if err := tr.watch(ctx, ts, ids); err != nil {
		return nil, err
	}
	var agreed, others []string
	for _, id := range ids {
		t, err := tr.store.Get(ctx, id)
		if err == nil && owns(t, p) {
			t, err = tr.checkLapse(ctx, t)
		}
		switch {
		case err == nil && owns(t, p):
			agreed = append(agreed, id)
			ts.offer(t, tr.view(t))
		case err == nil, errors.Is(err, tasks.ErrNotFound), errors.Is(err, errUnknownTask):
			others = append(others, id)
		default:
			tr.unwatch(ts, ids)
			return nil, err
		}
	}
	tr.unwatch(ts, others)
	ts.agree(p, agreed)
	return agreed, nil
}

// watch registers ts for the tasks ids, subscribing to the store's
// changes first when ts is the first stream.
func (tr *taskRunner) watch(ctx context.Context, ts *taskStream, ids []string) error {
	l := &tr.listeners
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.streams == 0 && !ts.watched && tr.changes != nil {
		sub, stop := context.WithCancel(context.WithoutCancel(ctx))
		if err := tr.changes.Subscribe(sub, tr.told); err != nil {
			stop()
			return err
		}
		l.stop = stop
	}
	if !ts.watched {
		ts.watched = true
		l.streams++
	}
	if l.by == nil {
		l.by = map[string]map[*taskStream]bool{}
	}
	for _, id := range ids {
		if l.by[id] == nil {
			l.by[id] = map[*taskStream]bool{}
		}
		l.by[id][ts] = true
	}
	return nil
}

// unwatch drops ts's registration for ids; once ts is registered for
// nothing it no longer counts, and the last stream's going ends the
// subscription to the store's changes.
func (tr *taskRunner) unwatch(ts *taskStream, ids []string) {
	l := &tr.listeners
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		delete(l.by[id], ts)
		if len(l.by[id]) == 0 {
			delete(l.by, id)
		}
	}
	for _, m := range l.by {
		if m[ts] {
			return
		}
	}
	if !ts.watched {
		return
	}
	ts.watched = false
	l.streams--
	if l.streams == 0 && l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

// told is the store's report of a change made through any instance: this
// one's own were told to its listeners already (changed).
func (tr *taskRunner) told(from, id string) {
	if from != tr.instance {
		tr.tell(id)
	}
}

// changed tells the listeners of task id, here and, through the store,
// on every other instance, that it changed.
func (tr *taskRunner) changed(id string) {
	if tr.changes != nil {
		if err := tr.changes.Changed(context.Background(), tr.instance, id); err != nil {
			tr.s.logger.LogAttrs(context.Background(), slog.LevelWarn, "task change not told to other instances", slog.String("task", id), slog.Any("error", err))
		}
	}
	tr.tell(id)
}

// tell queues task id's state for its owner's streams here that listen
// for it, read from the store as tasks/get reads it.
func (tr *taskRunner) tell(id string) {
	l := &tr.listeners
	l.mu.Lock()
	var streams []*taskStream
	for ts := range l.by[id] {
		streams = append(streams, ts)
	}
	l.mu.Unlock()
	if len(streams) == 0 {
		return
	}
	ctx := context.Background()
	t, err := tr.store.Get(ctx, id)
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return
	case err != nil:
		tr.s.logger.LogAttrs(ctx, slog.LevelWarn, "task change not told: task store unavailable", slog.String("task", id), slog.Any("error", err))
		return
	}
	v := tr.view(t)
	for _, ts := range streams {
		ts.offer(t, v)
	}
}
