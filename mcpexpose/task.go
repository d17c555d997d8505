//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TasksExtension is the identifier of the MCP tasks extension (SEP-2663),
// under which servers advertise it and clients declare it.
const TasksExtension = "io.modelcontextprotocol/tasks"

// TaskSupport says whether a tool runs as a task of the tasks extension
// ([ToolOptions.Task]).
type TaskSupport uint8

const (
	// TaskNever: the tool is always called directly. A legacy "task"
	// parameter on its tools/call is ignored.
	TaskNever TaskSupport = iota
	// TaskOptional: a task for a client that declared the extension on
	// the request, a direct call for any other.
	TaskOptional
	// TaskRequired: a task for a client that declared the extension on
	// the request; any other is refused with -32021 (missing required
	// client capability) naming the extension, before anything runs.
	TaskRequired
)

// String returns "forbidden", "optional" or "required", the words of the
// tools' execution.taskSupport field of the 2025-11-25 revision.
func (t TaskSupport) String() string {
	switch t {
	case TaskNever:
		return "forbidden"
	case TaskOptional:
		return "optional"
	case TaskRequired:
		return "required"
	}
	return fmt.Sprintf("TaskSupport(%d)", uint8(t))
}

// TaskOptions configures the tasks of a server ([ServerOptions.Tasks]).
// Every zero field means its documented default.
type TaskOptions struct {
	// Store keeps the tasks. Default: in this process's memory
	// ([tasks.NewMemory]); instances behind a load balancer share one
	// (package redistasks), so that a task created through one is polled,
	// answered and cancelled through any.
	Store tasks.Store
	// TTL is how long a task is kept from its creation, finished or not:
	// after it, the task is forgotten (tasks/get answers as for an unknown
	// task) and a handler still running is cancelled. Default: one hour.
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients.
	// Default: one second.
	PollInterval time.Duration
	// Heartbeat is how often the instance running a task records that it
	// is alive and looks in the store for a cancellation or answers sent
	// through another instance (requests through the running instance
	// itself act at once). Default: one second.
	Heartbeat time.Duration
	// HeartbeatLapse is how long without a heartbeat before any instance
	// declares the running instance dead and the task failed (ADR 0024).
	// Default: fifteen times Heartbeat.
	HeartbeatLapse time.Duration
	// RenewDeadline is how long the running instance goes on when the
	// store does not record its heartbeats (it lost the store: a
	// partition, a failover, a long pause): past it, it cancels the
	// handler itself, so that the handler is stopped before another
	// instance may declare the task failed and the client calls again.
	// It must exceed Heartbeat and be shorter than HeartbeatLapse, by more
	// than the clocks of the instances differ. Default: two thirds of
	// HeartbeatLapse (10 s with the other defaults).
	RenewDeadline time.Duration
	// MaxTasks caps the tasks running on this server at once: a tools/call
	// that would start one past it is answered with the canonical
	// failure "unavailable", reason "task_limit" ([ReasonTaskLimit]),
	// naming the limit, before anything runs, and the refusal is logged at
	// most once a minute. A task's slot is freed when its handler has
	// returned and the task has ended. Default: DefaultMaxTasks;
	// negative: no limit.
	MaxTasks int
	// MaxTasksPerPrincipal caps the tasks of one principal (issuer and id)
	// running on this server at once, refused the same way; anonymous
	// callers all count as one principal. Default:
	// DefaultMaxTasksPerPrincipal; negative: no limit.
	MaxTasksPerPrincipal int
	// Now is the clock of task timestamps and heartbeats. Default:
	// time.Now.
	Now func() time.Time
}

// Task defaults and limits.
const (
	DefaultTaskTTL          = time.Hour
	DefaultTaskPollInterval = time.Second
	DefaultTaskHeartbeat    = time.Second
	// MaxTaskTTL bounds TaskOptions.TTL.
	MaxTaskTTL = 7 * 24 * time.Hour
	// DefaultMaxTasks and DefaultMaxTasksPerPrincipal are the defaults of
	// TaskOptions.MaxTasks and MaxTasksPerPrincipal. A running task whose
	// handler waits costs about 12 KiB of live heap and two goroutines
	// with some 13 KiB of stack (TestTaskCapBoundsMemory, go-sdk v1.8.0),
	// so a full default cap holds some 25 MiB, and one principal 0.8 MiB.
	DefaultMaxTasks             = 1000
	DefaultMaxTasksPerPrincipal = 32
)

// ReasonTaskLimit is the [execution.Reason] of the "unavailable" failure
// answering a tools/call that would start a task past
// TaskOptions.MaxTasks or MaxTasksPerPrincipal. Its details name the limit
// ("limit") and carry "retry_after_ms", a suggestion: a slot frees when a
// task ends.
const ReasonTaskLimit execution.Reason = "task_limit"

// taskRetryAfter is the retry hint of a refused task: how soon a slot
// frees is unknown (the caller's own tasks ending, or others'), as for a
// refused session.
const taskRetryAfter = sessionRetryAfter

// The limits named in a refusal, as the options that set them.
const (
	limitTasks             = "MaxTasks"
	limitTasksPerPrincipal = "MaxTasksPerPrincipal"
)

// check says which of the options (nil: the defaults) is out of range.
func (o *TaskOptions) check() error {
	if o == nil {
		return nil
	}
	switch {
	case o.TTL < 0 || o.TTL > MaxTaskTTL:
		return fmt.Errorf("mcpexpose: Tasks.TTL %v must be positive and at most %v", o.TTL, MaxTaskTTL)
	case o.PollInterval < 0, o.Heartbeat < 0, o.HeartbeatLapse < 0, o.RenewDeadline < 0:
		return errors.New("mcpexpose: negative Tasks duration")
	}
	d := o.withDefaults()
	switch {
	case d.HeartbeatLapse <= d.Heartbeat:
		return fmt.Errorf("mcpexpose: Tasks.HeartbeatLapse %v must exceed Tasks.Heartbeat %v", d.HeartbeatLapse, d.Heartbeat)
	case d.RenewDeadline <= d.Heartbeat:
		return fmt.Errorf("mcpexpose: Tasks.RenewDeadline %v must exceed Tasks.Heartbeat %v, or a running task would cancel itself between heartbeats", d.RenewDeadline, d.Heartbeat)
	case d.RenewDeadline >= d.HeartbeatLapse:
		// The running instance must give up before others may declare it
		// dead: otherwise a cut-off handler could finish its work behind a
		// task already failed, and the client's retry would do it twice.
		return fmt.Errorf("mcpexpose: Tasks.RenewDeadline %v must be shorter than Tasks.HeartbeatLapse %v", d.RenewDeadline, d.HeartbeatLapse)
	}
	return nil
}

// withDefaults returns the options (nil: none) with every zero field set
// to its default.
func (opts *TaskOptions) withDefaults() TaskOptions {
	var o TaskOptions
	if opts != nil {
		o = *opts
	}
	if o.TTL == 0 {
		o.TTL = DefaultTaskTTL
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultTaskPollInterval
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultTaskHeartbeat
	}
	if o.HeartbeatLapse == 0 {
		o.HeartbeatLapse = 15 * o.Heartbeat
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = o.HeartbeatLapse * 2 / 3
	}
	if o.MaxTasks == 0 {
		o.MaxTasks = DefaultMaxTasks
	}
	if o.MaxTasksPerPrincipal == 0 {
		o.MaxTasksPerPrincipal = DefaultMaxTasksPerPrincipal
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Store == nil {
		o.Store = tasks.NewMemory(&tasks.MemoryOptions{Now: o.Now})
	}
	return o
}

// Errors of the tasks surface.
var (
	errUnknownTask   = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown task"}
	errTaskStore     = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task store cannot be reached now; retry later"}
	errTaskInstance  = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the instance running this task stopped before it finished"}
	errTaskInternal  = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task ended without a result"}
	errTaskCancelled = errors.New("mcpexpose: task cancelled")
	errTaskLost      = errors.New("mcpexpose: task finished or forgotten elsewhere")
	errTaskCutOff    = errors.New("mcpexpose: task heartbeat not recorded within Tasks.RenewDeadline")
)

// errTasksNotDeclared is -32021 naming the extension.
func errTasksNotDeclared(what string) error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: what + " needs the client capability extensions[\"" + TasksExtension + "\"]", Data: data}
}

// declaresTasks reports whether a client declared the extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

// taskRunner holds the tasks side of one server.
type taskRunner struct {
	s        *server
	opts     TaskOptions
	store    tasks.Store
	instance string

	mu   sync.Mutex
	runs map[string]*localRun // tasks running in this process
	// live counts the slots of MaxTasks taken (tasks running here, and
	// calls that may start one), by holds the same per principal key.
	live int
	by   map[string]int

	refusals logRate // the "task refused" records
}

// localRun is a task running here: how a request through this instance
// reaches it without waiting for its next look at the store.
type localRun struct {
	wake     chan struct{} // buffered 1
	progress progressNote
}

func (r *localRun) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func newTaskRunner(s *server, opts *TaskOptions) *taskRunner {
	o := opts.withDefaults()
	return &taskRunner{
		s: s, opts: o, store: o.Store, instance: randomID(9),
		runs:     map[string]*localRun{},
		by:       map[string]int{},
		refusals: logRate{burst: 1, interval: time.Minute},
	}
}

// taskKey is who a task counts against under MaxTasksPerPrincipal: the
// principal's issuer and id, in a form no two principals share.
func taskKey(p policy.Principal) string {
	return strconv.Itoa(len(p.Issuer())) + ":" + p.Issuer() + p.ID()
}

// reserve takes a slot for a call of p that may start a task, or returns
// the failure refusing it, logged within the rate. The slot is given back
// with release: by the call when it starts no task, else when the task's
// run ends.
func (tr *taskRunner) reserve(ctx context.Context, p policy.Principal) (string, *execution.Failure) {
	key := taskKey(p)
	tr.mu.Lock()
	limit := ""
	switch {
	case tr.opts.MaxTasks >= 0 && tr.live >= tr.opts.MaxTasks:
		limit = limitTasks
	case tr.opts.MaxTasksPerPrincipal >= 0 && tr.by[key] >= tr.opts.MaxTasksPerPrincipal:
		limit = limitTasksPerPrincipal
	default:
		tr.live++
		tr.by[key]++
	}
	tr.mu.Unlock()
	if limit == "" {
		return key, nil
	}
	ok, held, since := tr.refusals.take()
	if held > 0 {
		tr.s.logger.LogAttrs(ctx, slog.LevelWarn, "more tasks refused than logged", slog.Int("count", held), slog.Time("since", since))
	}
	if ok {
		tr.s.logger.LogAttrs(ctx, slog.LevelWarn, "task refused: limit reached", slog.String("limit", limit))
	}
	msg := "too many tasks are running on this server; retry later"
	if limit == limitTasksPerPrincipal {
		msg = "too many tasks are running for this caller; wait for one to end, or cancel one, and retry"
	}
	f := execution.Fail(execution.Unavailable, fmt.Sprintf("%s (limit %s)", msg, limit), map[string]any{
		"limit":          limit,
		"retry_after_ms": taskRetryAfter.Milliseconds(),
	})
	return "", f.WithReason(ReasonTaskLimit)
}

// release gives back the slot of key.
func (tr *taskRunner) release(key string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.live--
	if tr.by[key]--; tr.by[key] <= 0 {
		delete(tr.by, key)
	}
}

// randomID returns n random bytes, base64url: task ids take 18 (144 bits).
func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hasTaskTools reports whether snap has a tool that runs as a task.
func hasTaskTools(snap *Snapshot) bool {
	return slices.ContainsFunc(snap.tools, func(t *tool) bool { return t.task != TaskNever })
}

// invoked is the end of one invocation.
type invoked struct {
	out execution.Outcome
	err error
}

// callTask runs a tools/call of a task tool for a client that declared the
// extension. Every check runs as for a direct call; the task is created
// when the invocation detaches (execution.Invocation.Detach), and the
// tools/call is answered with it. An invocation that ends before
// detaching — a refusal, a question asked before the task, a fast handler
// of a TaskAfterQuestions tool — is answered as a direct call is: the
// returned *mcp.CallToolResult, for the SDK to finish.
//
// A call past TaskOptions.MaxTasks or MaxTasksPerPrincipal is refused
// first, before its request state is opened or anything runs.
func (s *server) callTask(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, adm execution.Admission) (mcp.Result, *mcp.CallToolResult, agnara.Label, error) {
	tr := s.tasks
	slot, refused := tr.reserve(ctx, p)
	if refused != nil {
		return nil, failureResult(refused), execution.LabelOf(refused), nil
	}
	started := false // the slot passes to the task's run
	defer func() {
		if !started {
			tr.release(slot)
		}
	}()
	round, err := s.openRound(ctx, req, t, p)
	if err != nil {
		return nil, nil, agnara.LabelError, err
	}
	run := &localRun{wake: make(chan struct{}, 1)}
	inv := s.invocation(req, p, adm, round)
	inv.Progress, inv.DetachByHandler = &run.progress, t.askFirst
	// What the client supports, read now: the invocation, which may
	// outlive the request, keeps that and not the request itself.
	caps := req.ClientCapabilities()
	inv.Supports = func(k execution.InputKind) bool { return supports(caps, k) }
	// The invocation outlives the request once detached; until then the
	// request's end cancels it.
	taskCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	var rec *tasks.Task
	detached := make(chan error, 1)
	inv.Detach = func() {
		var err error
		if err = ctx.Err(); err == nil {
			rec, err = tr.create(taskCtx, t, p)
		}
		if err != nil {
			cancel(err)
		}
		detached <- err
	}
	done := make(chan invoked, 1)
	go func() {
		out, err := t.plan.Invoke(taskCtx, inv)
		done <- invoked{out, err}
	}()
	var first *invoked
	var derr error
	select {
	case r := <-done:
		select {
		case derr = <-detached: // detached, then finished at once
			first = &r
		default:
			cancel(nil)
			if r.err != nil {
				return nil, nil, execution.LabelOf(nil), r.err
			}
			if ir, ok := r.out.(*execution.InputRequired); ok {
				res, err := s.interact(ctx, req, t, round, ir.Requests)
				return nil, res, execution.LabelOf(r.out), err
			}
			res, label, err := s.result(ctx, t, r.out)
			return nil, res, label, err
		}
	case derr = <-detached:
	case <-ctx.Done():
		cancel(context.Cause(ctx))
		<-done // the handler's cleanup has run
		return nil, nil, execution.LabelOf(nil), ctx.Err()
	}
	if derr != nil {
		if first == nil {
			go func() { <-done }() // it ends: its context is cancelled
		}
		if errors.Is(derr, tasks.ErrUnavailable) {
			s.logger.LogAttrs(ctx, slog.LevelError, "task store unavailable", slog.Any("error", derr))
			return nil, nil, agnara.LabelError, errTaskStore
		}
		return nil, nil, execution.LabelOf(nil), derr
	}
	started = true
	go tr.run(taskCtx, cancel, slot, rec, t, inv, caps, run, done, first)
	return createdResult(tr.view(rec)), nil, agnara.LabelOK, nil
}

// create stores a new working task for p.
func (tr *taskRunner) create(ctx context.Context, t *tool, p policy.Principal) (*tasks.Task, error) {
	now := tr.opts.Now()
	rec := &tasks.Task{
		ID:              randomID(18),
		PrincipalID:     p.ID(),
		PrincipalIssuer: p.Issuer(),
		Tool:            t.name,
		Status:          tasks.Working,
		CreatedAt:       now,
		UpdatedAt:       now,
		ExpiresAt:       now.Add(tr.opts.TTL),
		PollInterval:    tr.pollInterval(),
		Instance:        tr.instance,
		Heartbeat:       now,
	}
	if err := tr.store.Create(ctx, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// pollInterval is the polling interval suggested to clients: the
// configured one, or the interval of the tasks/get rate limit when that is
// longer, so that a client that polls a task as suggested is never
// refused.
func (tr *taskRunner) pollInterval() time.Duration {
	poll := tr.opts.PollInterval
	if l := tr.s.opts.RateLimit; !l.IsZero() {
		every := math.Ceil(float64(time.Second) / l.Rate)
		if every >= float64(tr.opts.TTL) {
			return tr.opts.TTL
		}
		poll = max(poll, time.Duration(every))
	}
	return poll
}

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
	tr.mu.Lock()
	tr.runs[id] = local
	tr.mu.Unlock()
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
		if err := missingCapabilities(caps, ir.Requests); err != nil {
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
// they renew (ADR 0024, revised 2026-12-01). Every heartbeat the store
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
	_, err := tr.store.Update(ctx, id, func(t *tasks.Task) error {
		b = beat{}
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
		}
		if take && t.Status == tasks.Working && len(t.Responses) > 0 {
			b.taken, t.Responses = t.Responses, nil
		}
		return nil
	})
	if err != nil {
		return beat{err: err}
	}
	return b
}

// ask puts the questions of one round to the client through the task and
// waits for every answer. No handler runs meanwhile.
func (r *taskRun) ask(requests map[string]execution.InputRequest) (map[string]execution.Answer, error) {
	tr := r.tr
	asked := make(map[string]json.RawMessage, len(requests))
	for key, q := range requests {
		b, err := json.Marshal(mcp.InputRequestMap{key: inputRequestOf(q, modernVersion)})
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
			if a, ok := answerOf(m[key]); ok {
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
