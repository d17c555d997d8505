//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// run follows one detached invocation to its end, and every later round
// of it: questions go to the store for tasks/get, answers come back
// through it, the final result or error is stored. It heartbeats meanwhile
// and cancels the invocation when the task is cancelled, forgotten or
// declared dead elsewhere, or when the store has not recorded its
// heartbeats for RenewDeadline (taskRun's lease). It gives back the task's
// slot, key, when it ends.
func (tr *taskRunner) run(ctx context.Context, cancel context.CancelCauseFunc, key string, rec *tasks.Task, t *tool, inv *execution.Invocation, caps *mcp.ClientCapabilities, local *localRun, done chan invoked, first *invoked) {
	defer tr.release(key)
	defer cancel(nil)
	id := rec.ID
	if tr.runStarts != nil {
		tr.runStarts()
	}
	defer func() {
		tr.mu.Lock()
		delete(tr.runs, id)
		tr.mu.Unlock()
	}()
	r := &taskRun{
		tr: tr, ctx: ctx, cancel: cancel, id: id, local: local,
		tick:    time.NewTicker(tr.opts.Heartbeat),
		renewed: rec.Heartbeat, // the store recorded it with the task
		beats:   make(chan beat, 1),
	}
	r.fence = time.NewTimer(max(r.left(), 0))
	defer r.tick.Stop()
	defer r.fence.Stop()
	answers := maps.Clone(inv.Answers)
	for {
		var res invoked
		if first != nil {
			res, first = *first, nil
		} else {
			res = r.await(done)
		}
		if res.err != nil {
			tr.ended(id, context.Cause(ctx))
			return
		}
		ir, ok := res.out.(*execution.InputRequired)
		if !ok {
			result, _, _ := tr.s.result(ctx, t, res.out)
			tr.complete(ctx, id, result)
			return
		}
		if err := missingCapabilities(caps, ir.Requests, "request"); err != nil {
			tr.fail(id, err)
			return
		}
		got, err := r.ask(ir.Requests)
		if err != nil {
			tr.ended(id, err)
			return
		}
		if answers == nil {
			answers = map[string]execution.Answer{}
		}
		maps.Copy(answers, got)
		// The next round runs the whole pipeline again: answers carry no
		// authority of their own, and policies decide anew. It is the same
		// logical call, counted against its rate limit once, in its first
		// round.
		next := *inv
		next.Answers, next.Unsolicited, next.Detach, next.DetachByHandler = answers, nil, nil, false
		next.RoundState = ir.RoundState
		next.Counted = true
		done = make(chan invoked, 1)
		go func() {
			out, err := t.plan.Invoke(ctx, &next)
			done <- invoked{out, err}
		}()
	}
}

// taskRun is the running instance's side of one task, used by its run's
// goroutine only: the heartbeats, at most one in flight, and the lease
// they renew (ADR 0067). Every heartbeat the store
// records renews the lease; when none has for RenewDeadline the instance
// cancels the invocation itself, whether or not the store answers at all.
// Other instances declare the task failed only after HeartbeatLapse, which
// is longer, measured from a heartbeat at least as recent as the last one
// this instance knows recorded: so a handler cut off from the store is
// cancelled before any instance can tell the client the task failed.
type taskRun struct {
	tr     *taskRunner
	ctx    context.Context
	cancel context.CancelCauseFunc
	id     string
	local  *localRun
	tick   *time.Ticker

	renewed time.Time   // the Heartbeat of the last write the store recorded
	fence   *time.Timer // wakes the run when the lease may have run out
	cut     bool        // the invocation was cancelled for it

	beats   chan beat // the outcome of the heartbeat in flight
	beating bool      // one is in flight
	again   bool      // another was asked for meanwhile
	asking  bool      // questions are out: heartbeats take the answers
}

// beat is the outcome of one heartbeat.
type beat struct {
	at        time.Time // the heartbeat written, when err is nil
	err       error
	cancelled bool                       // a tasks/cancel is waiting
	taken     map[string]json.RawMessage // the answers taken, when asked to
}

// left is how long the lease has left, by the tasks' clock.
func (r *taskRun) left() time.Duration {
	return r.tr.opts.RenewDeadline - r.tr.opts.Now().Sub(r.renewed)
}

// checkLease cancels the invocation when the lease has run out, and
// otherwise sets the fence to wake the run when it may have.
func (r *taskRun) checkLease() {
	if r.cut {
		return
	}
	if left := r.left(); left > 0 {
		r.fence.Reset(left)
		return
	}
	r.cut = true
	r.tr.s.logger.LogAttrs(r.ctx, slog.LevelError, "task cancelled: the task store has not recorded its heartbeat within the renew deadline",
		slog.String("task", r.id), slog.Duration("renew_deadline", r.tr.opts.RenewDeadline))
	r.cancel(errTaskCutOff)
}

// await waits for the invocation's end, heartbeating.
func (r *taskRun) await(done chan invoked) invoked {
	for {
		select {
		case res := <-done:
			return res
		case <-r.tick.C:
			r.beat()
		case <-r.local.wake:
			r.beat()
		case b := <-r.beats:
			r.settle(b)
		case <-r.fence.C:
			r.checkLease()
		}
	}
}

// beat starts a heartbeat, or asks for another once the one in flight
// has settled. While questions are out it takes the answers waiting in the
// store once every question is answered. A heartbeat is given until the
// lease runs out to be recorded; the run does not wait for it meanwhile.
func (r *taskRun) beat() {
	if r.ctx.Err() != nil {
		return // the invocation is ending: nothing to hold on to
	}
	if r.beating {
		r.again = true
		return
	}
	left := r.left()
	if left <= 0 {
		r.checkLease()
		return
	}
	r.beating = true
	msg, take := r.local.progress.message(), r.asking
	go func() {
		ctx, stop := context.WithTimeout(r.ctx, left)
		defer stop()
		r.beats <- r.tr.heartbeat(ctx, r.id, msg, take)
	}()
}

// settle acts on a heartbeat's outcome and returns the answers it took.
func (r *taskRun) settle(b beat) map[string]json.RawMessage {
	r.beating = false
	switch {
	case errors.Is(b.err, errTaskLost), errors.Is(b.err, tasks.ErrNotFound):
		r.cancel(errTaskLost)
	case b.err != nil:
		// Not recorded: try again next beat, unless the lease ran out.
		r.tr.s.logger.LogAttrs(r.ctx, slog.LevelWarn, "task heartbeat failed", slog.String("task", r.id), slog.Any("error", b.err))
		r.checkLease()
	case b.cancelled:
		r.cancel(errTaskCancelled)
	default:
		if b.at.After(r.renewed) {
			r.renewed = b.at
		}
		if !r.cut {
			r.fence.Reset(max(r.left(), 0))
		}
	}
	if r.again && b.taken == nil {
		r.again = false
		r.beat()
	}
	return b.taken
}

// heartbeat records a heartbeat (and the latest progress) of task id, if
// it is still this instance's and not ended, and reports a cancellation
// waiting for it; with take, it also takes the answers waiting once every
// question is answered, removing them from the store.
func (tr *taskRunner) heartbeat(ctx context.Context, id, msg string, take bool) beat {
	var b beat
	progressed := false
	_, err := tr.store.Update(ctx, id, func(t *tasks.Task) error {
		b, progressed = beat{}, false
		if t.Status.Terminal() || t.Instance != tr.instance {
			return errTaskLost
		}
		if t.CancelRequested {
			b.cancelled = true
			return nil
		}
		b.at = tr.opts.Now()
		t.Heartbeat = b.at
		if msg != "" && t.StatusMessage != msg && t.Status == tasks.Working {
			t.StatusMessage = msg
			t.UpdatedAt = t.Heartbeat
			progressed = true
		}
		if take && t.Status == tasks.Working && len(t.Responses) > 0 {
			b.taken, t.Responses = t.Responses, nil
		}
		return nil
	})
	if err != nil {
		return beat{err: err}
	}
	if progressed {
		tr.s.notifyTask(id) // the progress shows in the status message
	}
	return b
}

// ask puts the questions of one round to the client through the task and
// waits for every answer. No handler runs meanwhile.
func (r *taskRun) ask(requests map[string]execution.InputRequest) (map[string]execution.Answer, error) {
	tr := r.tr
	asked := make(map[string]json.RawMessage, len(requests))
	for key, q := range requests {
		b, err := json.Marshal(mcp.InputRequestMap{key: inputRequestOf(q, modernVersion, "")})
		if err != nil {
			return nil, err
		}
		var one map[string]json.RawMessage
		if err := json.Unmarshal(b, &one); err != nil {
			return nil, err
		}
		asked[key] = one[key]
	}
	_, err := tr.store.Update(r.ctx, r.id, func(t *tasks.Task) error {
		if t.Status.Terminal() || t.Instance != tr.instance {
			return errTaskLost
		}
		t.Status, t.StatusMessage, t.UpdatedAt = tasks.InputRequired, "", tr.opts.Now()
		t.InputRequests, t.Responses = maps.Clone(asked), nil
		return nil
	})
	if err != nil {
		if errors.Is(err, tasks.ErrNotFound) {
			return nil, errTaskLost
		}
		return nil, err
	}
	tr.s.notifyTask(r.id)
	r.asking = true
	defer func() { r.asking = false }()
	for {
		var got map[string]json.RawMessage
		select {
		case <-r.ctx.Done():
			return nil, context.Cause(r.ctx)
		case <-r.tick.C:
			r.beat()
		case <-r.local.wake:
			r.beat()
		case b := <-r.beats:
			got = r.settle(b)
		case <-r.fence.C:
			r.checkLease()
		}
		if got == nil {
			continue
		}
		answers := make(map[string]execution.Answer, len(got))
		for key, raw := range got {
			var m mcp.InputResponseMap
			b, _ := json.Marshal(map[string]json.RawMessage{key: raw})
			if json.Unmarshal(b, &m) != nil {
				continue // tasks/update took only readable answers
			}
			if a, ok := answerOf(m[key], requests[key].Kind); ok {
				answers[key] = a
			}
		}
		return answers, nil
	}
}

// complete stores the final result.
func (tr *taskRunner) complete(ctx context.Context, id string, res *mcp.CallToolResult) {
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	b, err := json.Marshal(res)
	if err != nil {
		tr.s.logger.LogAttrs(ctx, slog.LevelError, "task result does not encode", slog.String("task", id), slog.Any("error", err))
		tr.fail(id, errTaskInternal)
		return
	}
	tr.finish(id, tasks.Completed, b, nil, "")
}

// fail stores a JSON-RPC error as the task's end.
func (tr *taskRunner) fail(id string, err error) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		je = errTaskInternal
	}
	b, _ := json.Marshal(je)
	tr.finish(id, tasks.Failed, nil, b, je.Message)
}

// ended records how an invocation whose context ended finished: cancelled
// on request, nothing when the task is gone or finished elsewhere, failed
// as a dead instance's task when its lease ran out, else failed.
func (tr *taskRunner) ended(id string, cause error) {
	switch {
	case errors.Is(cause, errTaskLost):
	case errors.Is(cause, errTaskCancelled):
		tr.finish(id, tasks.Cancelled, nil, nil, "cancelled by the client")
	case errors.Is(cause, errTaskCutOff):
		tr.fail(id, errTaskInstance)
	default:
		tr.fail(id, errTaskInternal)
	}
}

// finish moves the task to a terminal status, only if it is still this
// instance's and not terminal yet: in one atomic update (a compare on the
// stored record), so that a result arriving for a task another instance
// has already declared failed is never reported; that is logged, for the
// handler's effect happened unreported.
func (tr *taskRunner) finish(id string, st tasks.Status, result, rpcErr json.RawMessage, msg string) {
	// The invocation's context may be cancelled: the store gets its own.
	ctx := context.Background()
	_, err := tr.store.Update(ctx, id, func(t *tasks.Task) error {
		if t.Status.Terminal() || t.Instance != tr.instance {
			return errTaskLost
		}
		t.Status, t.StatusMessage, t.UpdatedAt = st, msg, tr.opts.Now()
		t.Result, t.Error, t.InputRequests, t.Responses = result, rpcErr, nil, nil
		return nil
	})
	switch {
	case errors.Is(err, errTaskLost) || errors.Is(err, tasks.ErrNotFound):
		if st == tasks.Completed {
			tr.s.logger.LogAttrs(ctx, slog.LevelWarn, "task result dropped: the task had already ended elsewhere", slog.String("task", id))
		}
		return
	case err != nil:
		tr.s.logger.LogAttrs(ctx, slog.LevelError, "task end not recorded", slog.String("task", id), slog.Any("error", err))
		return
	}
	tr.s.notifyTask(id)
}

// progressNote keeps a running task's latest progress, written to its
// status message at the next heartbeat.
type progressNote struct {
	mu  sync.Mutex
	msg string
}

// ReportProgress implements execution.ProgressReporter.
func (n *progressNote) ReportProgress(_ context.Context, done, total float64, msg string) {
	s := fmt.Sprintf("%g", done)
	if total > 0 {
		s += fmt.Sprintf("/%g", total)
	}
	if msg != "" {
		s += ": " + msg
	}
	n.mu.Lock()
	n.msg = s
	n.mu.Unlock()
}

func (n *progressNote) message() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.msg
}
