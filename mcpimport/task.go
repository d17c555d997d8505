package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskOptions let a bound remote tool answer a call with a task (the MCP
// tasks extension, io.modelcontextprotocol/tasks): the call then declares the
// extension, follows the task with tasks/get until it ends, and cancels it
// with tasks/cancel when the caller goes away or the timeout passes. A nil
// *TaskOptions in a binding means no tasks (a task answer then fails with
// [ReasonProtocolError]); a non-nil one with zero fields means the defaults.
//
// TaskOptions are plain values, copied at discovery.
type TaskOptions struct {
	// Timeout bounds the whole call, from tools/call to the task's end.
	// Default: [Limits].CallTimeout; at most [MaxCallTimeout].
	Timeout time.Duration
	// Polls is the most tasks/get requests one call sends. Default and
	// ceiling [MaxTaskPolls]. Past it, the call fails with [ReasonTimeout]
	// and the task is cancelled.
	Polls int
}

// MaxTaskPolls is the most tasks/get requests one call of a task-answering
// tool sends, and the default of [TaskOptions].Polls: one every
// [MinTaskPollInterval] for [MaxCallTimeout].
const MaxTaskPolls = int(MaxCallTimeout / MinTaskPollInterval)

// MinTaskPollInterval and MaxTaskPollInterval bound the wait between two
// tasks/get requests of one call. The remote's pollIntervalMs hint is
// honoured within them; without a hint, the wait starts at the minimum and
// doubles after every poll up to the maximum.
const (
	MinTaskPollInterval = 100 * time.Millisecond
	MaxTaskPollInterval = 5 * time.Second
)

// taskCancelTimeout bounds the best-effort tasks/cancel a call sends when it
// gives up on a task.
const taskCancelTimeout = 2 * time.Second

// taskIDBytes bounds a remote task id.
const taskIDBytes = 256

// resolve fills in the defaults and checks the bounds.
func (o *TaskOptions) resolve(remote string, limits Limits) (TaskOptions, *Error) {
	r := *o
	switch {
	case r.Timeout == 0:
		r.Timeout = limits.CallTimeout
	case r.Timeout < 0 || r.Timeout > MaxCallTimeout:
		return r, newError(BindingInvalid, remote, "Task.Timeout = %s: want a positive duration of at most %s", r.Timeout, MaxCallTimeout)
	}
	switch {
	case r.Polls == 0:
		r.Polls = MaxTaskPolls
	case r.Polls < 0 || r.Polls > MaxTaskPolls:
		return r, newError(BindingInvalid, remote, "Task.Polls = %d: want 1..%d", r.Polls, MaxTaskPolls)
	}
	return r, nil
}

// taskDeclaration is the _meta of a request that declares the tasks
// extension: the per-request client capabilities hold the extension and
// the questions the importer relays (questions.go). The SDK keeps a
// declaration it finds instead of injecting its own.
func taskDeclaration() mcp.Meta {
	return mcp.Meta{mcp.MetaKeyClientCapabilities: map[string]any{
		"extensions":  map[string]any{mcpversion.TasksExtension: map[string]any{}},
		"elicitation": map[string]any{"form": map[string]any{}},
		"sampling":    map[string]any{},
	}}
}

// callerDeclaration is the _meta of a 2026-07-28 tools/call: per-request
// client capabilities that declare what the caller can answer, so that an
// upstream asks only what the caller could be asked (a tool that asks
// only when it may then does without), and the tasks extension when the
// binding follows tasks.
func callerDeclaration(ec *execution.Context, tasks bool) mcp.Meta {
	i := 0
	if tasks {
		i |= 1
	}
	if ec.CanAsk(execution.Elicitation) {
		i |= 2
	}
	if ec.CanAsk(execution.Sampling) {
		i |= 4
	}
	if ec.CanAsk(execution.URLElicitation) {
		i |= 8
	}
	// A new _meta per call (the SDK adds to it), the capabilities shared.
	return mcp.Meta{mcp.MetaKeyClientCapabilities: declarations[i]}
}

// declarations are the sixteen capability sets callerDeclaration
// declares, built once: bit 1 the tasks extension, 2 elicitation in form
// mode, 4 sampling, 8 elicitation in url mode. They are never changed.
var declarations = func() (d [16]map[string]any) {
	for i := range d {
		caps := map[string]any{}
		if i&1 != 0 {
			caps["extensions"] = map[string]any{mcpversion.TasksExtension: map[string]any{}}
		}
		if i&10 != 0 {
			modes := map[string]any{}
			if i&2 != 0 {
				modes["form"] = map[string]any{}
			}
			if i&8 != 0 {
				modes["url"] = map[string]any{}
			}
			caps["elicitation"] = modes
		}
		if i&4 != 0 {
			caps["sampling"] = map[string]any{}
		}
		d[i] = caps
	}
	return d
}()

// taskRef is the params of tasks/get and tasks/cancel.
type taskRef struct {
	mcp.ParamsBase
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"` // tasks/update
}

// taskState is a CreateTaskResult (the answer to tools/call) or the
// DetailedTask a tasks/get answers with; CancelTaskResult decodes into it
// too and is not read.
type taskState struct {
	mcp.ResultBase
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	PollIntervalMs *int64          `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *jsonrpc.Error  `json:"error,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
}

// The task statuses of the extension.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// registerTaskMethods lets client send tasks/get and tasks/cancel, which
// the SDK does not know.
func registerTaskMethods(client *mcp.Client) error {
	return errors.Join(
		mcp.AddSendingCustomMethod[*taskRef, *taskState](client, "tasks/get"),
		mcp.AddSendingCustomMethod[*taskRef, *taskState](client, "tasks/cancel"),
		mcp.AddSendingCustomMethod[*taskRef, *taskState](client, "tasks/update"),
	)
}

// isTaskAnswer reports whether a tools/call result the SDK decoded is a
// CreateTaskResult. The SDK v1.8.0 keeps its resultType private and drops
// the task's fields; its encoder writes resultType back. A task answer has
// neither content nor structured content, so other results are not
// re-encoded.
func isTaskAnswer(res *mcp.CallToolResult) bool {
	if res == nil || len(res.Content) > 0 || res.StructuredContent != nil || res.IsError {
		return false
	}
	b, err := json.Marshal(res)
	if err != nil {
		return false
	}
	var rt struct {
		ResultType string `json:"resultType"`
	}
	return json.Unmarshal(b, &rt) == nil && rt.ResultType == "task"
}

// followTask follows the remote task a tools/call answered with (captured
// as raw) until it ends, and returns the final tools/call result, or the
// reason it has none. ctx carries the call's deadline; ec is the caller's.
//
// resumed, when not empty, is the id of the task an earlier round of this
// call followed until it asked the caller (ADR 41): it is followed again
// from a tasks/get, raw unused. A task that asks has its questions relayed
// to the caller through q; when the caller has yet to answer, the task is
// left waiting, its id kept as the call's round state, and the error is
// errAsked.
func (t *tool) followTask(ctx context.Context, ec *execution.Context, q *asker, raw json.RawMessage, oversized bool, resumed string) (*mcp.CallToolResult, execution.Reason, error) {
	limits, opts := t.cat.limits, t.sel.task
	if oversized {
		return nil, ReasonResultTooLarge, nil
	}
	var st taskState
	switch {
	case resumed != "":
		st = taskState{ResultType: "task", TaskID: resumed, Status: taskWorking}
	case raw == nil || json.Unmarshal(raw, &st) != nil || st.ResultType != "task" || !validTaskID(st.TaskID) || !knownStatus(st.Status):
		return nil, ReasonProtocolError, errors.New("malformed task handle")
	}
	id := st.TaskID
	reg := t.cat.tasks
	if !reg.claim(id) {
		// Another call follows a task with this id: a remote that hands one
		// task to two callers. Nothing is cancelled: it is not this call's.
		return nil, ReasonProtocolError, errors.New("the remote answered with a task id another call is following")
	}
	defer reg.release(id)

	cs := t.cat.session
	wait := MinTaskPollInterval
	for polls := 0; ; polls++ {
		switch st.Status {
		case taskCompleted:
			var res mcp.CallToolResult
			if st.Result == nil || json.Unmarshal(st.Result, &res) != nil {
				return nil, ReasonProtocolError, errors.New("a completed task without a readable result")
			}
			return &res, "", nil
		case taskFailed:
			if st.Error != nil && st.Error.Code == jsonrpc.CodeInvalidParams {
				return nil, ReasonInvalidArguments, st.Error
			}
			if st.Error != nil {
				return nil, ReasonProtocolError, st.Error // its message is logged for the operator
			}
			return nil, ReasonProtocolError, errors.New("the remote task failed")
		case taskCancelled:
			return nil, ReasonTaskCancelled, nil
		case taskInputRequired:
			responses, err := q.answerAll(st.InputRequests)
			switch {
			case errors.Is(err, errAsked):
				if ec.SetRoundState(heldTaskState(id)) != nil {
					t.cancelTask(ec, id)
					return nil, ReasonTaskInputRequired, nil
				}
				return nil, "", errAsked // the task waits for the caller's next round
			case err != nil:
				t.cancelTask(ec, id)
				return nil, ReasonTaskInputRequired, err
			}
			if _, err := mcp.CallCustomMethod[*taskRef, *taskState](withTaskName(ctx, id), cs, "tasks/update", &taskRef{ParamsBase: mcp.ParamsBase{Meta: taskDeclaration()}, TaskID: id, InputResponses: responses}); err != nil {
				t.cancelTask(ec, id)
				return nil, classify(ctx, err), err
			}
			st.Status = taskWorking // polled again at once
			polls--
		}
		if polls >= opts.Polls {
			t.cancelTask(ec, id)
			return nil, ReasonTimeout, errors.New("the task outlasted the poll limit")
		}
		wait = nextWait(wait, st.PollIntervalMs, polls)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			t.cancelTask(ec, id)
			return nil, ReasonTimeout, ctx.Err()
		case <-timer.C:
		}
		next, err := mcp.CallCustomMethod[*taskRef, *taskState](withTaskName(ctx, id), cs, "tasks/get", &taskRef{ParamsBase: mcp.ParamsBase{Meta: taskDeclaration()}, TaskID: id})
		if err != nil {
			if ctx.Err() != nil {
				t.cancelTask(ec, id)
				return nil, ReasonTimeout, err
			}
			var wire *jsonrpc.Error
			if errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams {
				return nil, ReasonTaskLost, err // unknown to the remote: expired, or forgotten
			}
			return nil, classify(ctx, err), err
		}
		if code := checkTaskState(next, id, limits); code != "" {
			if code != ReasonResultTooLarge {
				t.cancelTask(ec, id)
			}
			return nil, code, errors.New("malformed or oversized tasks/get answer")
		}
		st = *next
	}
}

// heldTaskState is the round state of a call whose remote task waits for
// the caller's answers.
func heldTaskState(id string) []byte {
	b, _ := json.Marshal(map[string]string{"task": id}) // cannot fail
	return b
}

// heldTask is the remote task an earlier round of this call left waiting
// for the caller's answers, or "".
func heldTask(ec *execution.Context) string {
	var st struct {
		Task string `json:"task"`
	}
	if json.Unmarshal(ec.RoundState(), &st) != nil || !validTaskID(st.Task) {
		return ""
	}
	return st.Task
}

// checkTaskState checks a tasks/get answer for task id against the limits.
func checkTaskState(st *taskState, id string, limits Limits) execution.Reason {
	switch {
	case st == nil || st.TaskID != id || !knownStatus(st.Status):
		return ReasonProtocolError // another task's state, or none
	case len(st.Result) > 2*limits.ResultBytes, len(st.InputRequests) > limits.ObjectBytes, len(st.StatusMessage) > limits.DescriptionBytes:
		// The result as JSON: base64 data and framing may take twice the
		// bytes the result limit counts once decoded.
		return ReasonResultTooLarge
	case st.PollIntervalMs != nil && *st.PollIntervalMs < 0:
		return ReasonProtocolError
	}
	return ""
}

// nextWait is the wait before the next tasks/get: the remote's hint within
// the bounds, else exponential backoff from prev.
func nextWait(prev time.Duration, hintMs *int64, polls int) time.Duration {
	if hintMs != nil {
		d := MaxTaskPollInterval
		if *hintMs < int64(MaxTaskPollInterval/time.Millisecond) {
			d = time.Duration(*hintMs) * time.Millisecond
		}
		return min(max(d, MinTaskPollInterval), MaxTaskPollInterval)
	}
	if polls == 0 {
		return MinTaskPollInterval
	}
	return min(2*prev, MaxTaskPollInterval)
}

// cancelTask sends tasks/cancel for id, best effort, within
// taskCancelTimeout, even when the caller's context is done: the remote
// should stop working for a caller that is gone.
func (t *tool) cancelTask(ec *execution.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ec), taskCancelTimeout)
	defer cancel()
	_, err := mcp.CallCustomMethod[*taskRef, *taskState](withTaskName(ctx, id), t.cat.session, "tasks/cancel", &taskRef{ParamsBase: mcp.ParamsBase{Meta: taskDeclaration()}, TaskID: id})
	if err != nil && t.cat.logger.Enabled(ctx, slog.LevelDebug) {
		t.cat.logger.DebugContext(ctx, "mcpimport: tasks/cancel failed", "server", t.cat.snap.serverID, "tool", t.entry.RemoteName, "cause", err.Error())
	}
}

func validTaskID(id string) bool {
	return id != "" && len(id) <= taskIDBytes && utf8.ValidString(id) &&
		!strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

func knownStatus(s string) bool {
	switch s {
	case taskWorking, taskInputRequired, taskCompleted, taskFailed, taskCancelled:
		return true
	}
	return false
}

// taskRegistry holds the ids of the tasks the calls of one session follow.
type taskRegistry struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func (r *taskRegistry) claim(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.ids[id]; dup {
		return false
	}
	if r.ids == nil {
		r.ids = map[string]struct{}{}
	}
	r.ids[id] = struct{}{}
	return true
}

func (r *taskRegistry) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.ids, id)
}
