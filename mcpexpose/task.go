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
	"slices"
	"sync"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	// task) and a handler still running is cancelled. Default: 1 hour; at
	// most 7 days.
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients.
	// Default: 1 second.
	PollInterval time.Duration
	// Heartbeat is how often the instance running a task records that it
	// is alive and looks in the store for a cancellation or answers sent
	// through another instance (requests through the running instance
	// itself act at once). Default: 1 second.
	Heartbeat time.Duration
	// HeartbeatLapse is how long without a heartbeat before any instance
	// declares the running instance dead and the task failed (ADR 0067).
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
	// returned and the task has ended. Default: 1000; negative: no
	// limit.
	MaxTasks int
	// MaxTasksPerPrincipal caps the tasks of one principal (issuer and id)
	// running on this server at once, refused the same way; anonymous
	// callers all count as one principal. Default: 32;
	// negative: no limit.
	MaxTasksPerPrincipal int
	// Now is the clock of task timestamps and heartbeats. Default:
	// time.Now.
	Now func() time.Time
}

// Task defaults and limits, stated in the doc comments of the
// [TaskOptions] fields they apply to (TestDocumentedDefaults).
const (
	defaultTaskTTL          = time.Hour
	defaultTaskPollInterval = time.Second
	defaultTaskHeartbeat    = time.Second
	// maxTaskTTL bounds [TaskOptions.TTL].
	maxTaskTTL = 7 * 24 * time.Hour
	// defaultMaxTasks and defaultMaxTasksPerPrincipal are the defaults of
	// TaskOptions.MaxTasks and MaxTasksPerPrincipal. A running task whose
	// handler waits costs about 12 KiB of live heap and two goroutines
	// with some 13 KiB of stack (TestTaskCapBoundsMemory, go-sdk v1.8.0),
	// so a full default cap holds some 25 MiB, and one principal 0.8 MiB.
	defaultMaxTasks             = 1000
	defaultMaxTasksPerPrincipal = 32
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
	case o.TTL < 0 || o.TTL > maxTaskTTL:
		return fmt.Errorf("mcpexpose: Tasks.TTL %v must be positive and at most %v", o.TTL, maxTaskTTL)
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
		o.TTL = defaultTaskTTL
	}
	if o.PollInterval == 0 {
		o.PollInterval = defaultTaskPollInterval
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = defaultTaskHeartbeat
	}
	if o.HeartbeatLapse == 0 {
		o.HeartbeatLapse = 15 * o.Heartbeat
	}
	if o.RenewDeadline == 0 {
		o.RenewDeadline = o.HeartbeatLapse * 2 / 3
	}
	if o.MaxTasks == 0 {
		o.MaxTasks = defaultMaxTasks
	}
	if o.MaxTasksPerPrincipal == 0 {
		o.MaxTasksPerPrincipal = defaultMaxTasksPerPrincipal
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
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{mcpversion.TasksExtension: map[string]any{}}}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: what + " needs the client capability extensions[\"" + mcpversion.TasksExtension + "\"]", Data: data}
}

// declaresTasks reports whether a client declared the extension.
func declaresTasks(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[mcpversion.TasksExtension]
	return ok
}

// taskRunner holds the tasks side of one server.
type taskRunner struct {
	s        *server
	opts     TaskOptions
	store    tasks.Store
	instance string

	mu   sync.Mutex
	runs map[string]*localRun // tasks running in this process, known before their tools/call is answered
	// runStarts, in tests, runs as a task's run begins, in its goroutine.
	runStarts func()
	// live counts the slots of MaxTasks taken (tasks running here, and
	// calls that may start one), by holds the same per principal key.
	live int
	by   map[string]int

	refusals logRate // the "task refused" records

	// listeners are the streams listening for tasks' status, and changes
	// the store's telling of changes across instances, nil when it does
	// not (tasknotify.go).
	listeners taskListeners
	changes   tasks.Changes
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
		changes:  changesOf(o.Store),
	}
}

// changesOf is the store's telling of changes, nil when it has none.
func changesOf(st tasks.Store) tasks.Changes {
	c, _ := st.(tasks.Changes)
	return c
}

// owns reports whether t is p's: the one owner rule of tasks/get,
// tasks/update, tasks/cancel and the notifications of a listen. The task
// records its creator's issuer and id; p is its owner when it is the same
// caller (policy.Principal.Key).
func owns(t *tasks.Task, p policy.Principal) bool {
	return policy.NewPrincipal(t.PrincipalID, nil).WithIssuer(t.PrincipalIssuer).Key() == p.Key()
}

// reserve takes a slot for a call of p that may start a task, or returns
// the failure refusing it, logged within the rate. The slot is given back
// with release: by the call when it starts no task, else when the task's
// run ends. A task counts against its principal's key under
// MaxTasksPerPrincipal.
func (tr *taskRunner) reserve(ctx context.Context, p policy.Principal) (string, *execution.Failure) {
	key := p.Key()
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
// It never begins with '-', which a command line would take for a flag
// (`agnara tasks get URL -Ww...` failed one time in 64).
func randomID(n int) string {
	b := make([]byte, n)
	for {
		_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24)
		if id := base64.RawURLEncoding.EncodeToString(b); id[0] != '-' {
			return id
		}
	}
}

// hasTaskTools reports whether snap has a tool that runs as a task.
func hasTaskTools(snap *Snapshot) bool {
	return slices.ContainsFunc(snap.tools, func(t *tool) bool { return t.task != TaskNever })
}
