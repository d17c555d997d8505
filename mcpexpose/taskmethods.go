package mcpexpose

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/tasks"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The methods of the tasks extension. tasks/result and tasks/list of the
// 2025-11-25 tasks are gone from it and stay "method not found".
const (
	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
)

// isTaskMethod reports whether method is one of the extension's.
func isTaskMethod(method string) bool {
	return method == methodTasksGet || method == methodTasksUpdate || method == methodTasksCancel
}

// taskParams are the params of tasks/get, tasks/update and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID         string          `json:"taskId"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
}

// taskResult is a result of the tasks surface, sent as encoded.
type taskResult struct {
	mcp.ResultBase
	body json.RawMessage
}

// MarshalJSON returns the encoded result.
func (r *taskResult) MarshalJSON() ([]byte, error) { return r.body, nil }

// ackResult is the empty acknowledgement of tasks/update and tasks/cancel.
var ackResult = json.RawMessage(`{"resultType":"complete"}`)

// registerTaskMethods lets the SDK accept the extension's methods; the
// middleware answers them (serveTask), so the handlers are never reached.
func registerTaskMethods(srv *mcp.Server) error {
	unrouted := func(context.Context, *mcp.ServerSession, *taskParams) (*taskResult, error) {
		return nil, errUnrouted
	}
	return errors.Join(
		mcp.AddReceivingCustomMethod(srv, methodTasksGet, unrouted),
		mcp.AddReceivingCustomMethod(srv, methodTasksUpdate, unrouted),
		mcp.AddReceivingCustomMethod(srv, methodTasksCancel, unrouted),
	)
}

// taskWire is a task as the extension sends it: a CreateTaskResult
// (resultType "task") or a tasks/get DetailedTask ("complete").
type taskWire struct {
	ResultType     string                     `json:"resultType,omitempty"`
	TaskID         string                     `json:"taskId"`
	Status         tasks.Status               `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          json.RawMessage            `json:"error,omitempty"`
}

// wireTime is an ISO 8601 timestamp in UTC, with milliseconds.
func wireTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// view is t as tasks/get and notifications/tasks show it.
func (tr *taskRunner) view(t *tasks.Task) taskWire {
	w := taskWire{
		TaskID:         t.ID,
		Status:         t.Status,
		StatusMessage:  t.StatusMessage,
		CreatedAt:      wireTime(t.CreatedAt),
		LastUpdatedAt:  wireTime(t.UpdatedAt),
		TTLMs:          t.ExpiresAt.Sub(t.CreatedAt).Milliseconds(),
		PollIntervalMs: t.PollInterval.Milliseconds(),
	}
	switch t.Status {
	case tasks.InputRequired:
		w.InputRequests = t.InputRequests
	case tasks.Completed:
		w.Result = t.Result
	case tasks.Failed:
		w.Error = t.Error
	}
	return w
}

// createdResult is the CreateTaskResult answering a tools/call.
func createdResult(w taskWire) mcp.Result {
	w.ResultType = "task"
	w.InputRequests, w.Result, w.Error = nil, nil, nil
	return encodedResult(w)
}

func encodedResult(v any) mcp.Result {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings, numbers and raw JSON already encoded: cannot fail.
		b = json.RawMessage(`{}`)
	}
	return &taskResult{body: b}
}

// serveTask answers tasks/get, tasks/update and tasks/cancel. A task is
// found only by the principal that created it (its id and issuer): for
// anyone else it is an unknown task, answered exactly as one that never
// existed. Each request is counted against ServerOptions.RateLimit before
// the store is read (limitRequest).
func (s *server) serveTask(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	tr := s.tasks
	sr, _ := req.(*mcp.ServerRequest[*taskParams])
	if sr == nil || sr.Params == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}
	}
	if !declaresTasks(sr.ClientCapabilities()) {
		return nil, errTasksNotDeclared(method)
	}
	if sr.Params.TaskID == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "taskId is required"}
	}
	p, err := s.callerOf(ctx, method, req)
	if err != nil {
		return nil, err
	}
	if f := s.limitRequest(ctx, method, p); f != nil {
		return nil, failureError(f, "taskId", sr.Params.TaskID)
	}
	rec, err := tr.lookup(ctx, sr.Params.TaskID, p)
	if err != nil {
		return nil, err
	}
	switch method {
	case methodTasksGet:
		rec, err = tr.checkLapse(ctx, rec)
		if err != nil {
			return nil, err
		}
		w := tr.view(rec)
		w.ResultType = "complete"
		return encodedResult(w), nil
	case methodTasksCancel:
		if !rec.Status.Terminal() {
			if err := tr.change(ctx, rec.ID, func(t *tasks.Task) error {
				if !t.Status.Terminal() {
					t.CancelRequested = true
				}
				return nil
			}); err != nil {
				return nil, err
			}
			tr.poke(rec.ID)
		}
		return &taskResult{body: ackResult}, nil
	default: // tasks/update
		var responses map[string]json.RawMessage
		if len(sr.Params.InputResponses) > 0 && json.Unmarshal(sr.Params.InputResponses, &responses) != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses must be an object of responses"}
		}
		readable := make(map[string]json.RawMessage, len(responses))
		for key, raw := range responses {
			var m mcp.InputResponseMap
			b, _ := json.Marshal(map[string]json.RawMessage{key: raw})
			if json.Unmarshal(b, &m) == nil {
				readable[key] = raw
			}
		}
		if len(readable) > 0 && rec.Status == tasks.InputRequired {
			resumed := false
			if err := tr.change(ctx, rec.ID, func(t *tasks.Task) error {
				resumed = false
				if t.Status != tasks.InputRequired {
					return nil
				}
				// Only answers to questions still outstanding count; the
				// others are ignored, as the extension says.
				for key, raw := range readable {
					if _, open := t.InputRequests[key]; !open {
						continue
					}
					if t.Responses == nil {
						t.Responses = map[string]json.RawMessage{}
					}
					t.Responses[key] = raw
					delete(t.InputRequests, key)
				}
				if len(t.InputRequests) == 0 {
					t.Status, t.InputRequests, t.UpdatedAt = tasks.Working, nil, tr.opts.Now()
					resumed = true
				}
				return nil
			}); err != nil {
				return nil, err
			}
			if resumed {
				s.notifyTask(rec.ID)
			}
			tr.poke(rec.ID)
		}
		return &taskResult{body: ackResult}, nil
	}
}

// lookup returns the task id of p, or the unknown-task error.
func (tr *taskRunner) lookup(ctx context.Context, id string, p policy.Principal) (*tasks.Task, error) {
	rec, err := tr.store.Get(ctx, id)
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return nil, errUnknownTask
	case err != nil:
		tr.s.logger.LogAttrs(ctx, slog.LevelError, "task store unavailable", slog.Any("error", err))
		return nil, errTaskStore
	case !owns(rec, p):
		return nil, errUnknownTask
	}
	return rec, nil
}

// change updates a task for a request, mapping store errors.
func (tr *taskRunner) change(ctx context.Context, id string, f func(*tasks.Task) error) error {
	_, err := tr.store.Update(ctx, id, f)
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return errUnknownTask
	case err != nil:
		tr.s.logger.LogAttrs(ctx, slog.LevelError, "task store unavailable", slog.Any("error", err))
		return errTaskStore
	}
	return nil
}

// poke wakes the task's runner when it runs in this process.
func (tr *taskRunner) poke(id string) {
	tr.mu.Lock()
	run := tr.runs[id]
	tr.mu.Unlock()
	if run != nil {
		run.poke()
	}
}

// checkLapse declares a running task failed when the instance running it
// has not heartbeat for HeartbeatLapse (ADR 0067): it died, or lost the
// store. A heartbeat that arrives meanwhile wins.
func (tr *taskRunner) checkLapse(ctx context.Context, rec *tasks.Task) (*tasks.Task, error) {
	if rec.Status.Terminal() || tr.opts.Now().Sub(rec.Heartbeat) <= tr.opts.HeartbeatLapse {
		return rec, nil
	}
	errBody, _ := json.Marshal(errTaskInstance)
	next, err := tr.store.Update(ctx, rec.ID, func(t *tasks.Task) error {
		now := tr.opts.Now()
		if t.Status.Terminal() || now.Sub(t.Heartbeat) <= tr.opts.HeartbeatLapse {
			return nil
		}
		t.Status, t.StatusMessage, t.UpdatedAt = tasks.Failed, errTaskInstance.Message, now
		t.Error, t.InputRequests, t.Responses = errBody, nil, nil
		return nil
	})
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return nil, errUnknownTask
	case err != nil:
		tr.s.logger.LogAttrs(ctx, slog.LevelError, "task store unavailable", slog.Any("error", err))
		return nil, errTaskStore
	}
	if next.Status == tasks.Failed {
		tr.s.logger.LogAttrs(ctx, slog.LevelWarn, "task failed: its instance stopped heartbeating", slog.String("task", rec.ID), slog.String("instance", rec.Instance))
		tr.s.notifyTask(rec.ID)
	}
	return next, nil
}

// notifyTask tells the clients listening for task id, on every instance,
// of its new status (tasknotify.go).
func (s *server) notifyTask(id string) { s.tasks.changed(id) }
