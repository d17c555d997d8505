// Package taskclient drives the tasks of the MCP tasks extension
// (io.modelcontextprotocol/tasks, SEP-2663, revision 2026-07-28) from the
// official SDK client over streamable HTTP: it creates a task with
// tools/call, follows it with tasks/get at the server's pollIntervalMs,
// answers its questions with tasks/update and cancels it with tasks/cancel
// when the caller gives up. `agnara tools call -task` and agnaratest's
// CallTask are built on it.
//
// The SDK v1.8.0 client decodes every tools/call answer into an
// mcp.CallToolResult, which has no place for a task handle: its taskId is
// dropped before CallTool returns, and no custom method may replace
// tools/call. So the HTTP client [Wrap] returns keeps a bounded copy of the
// answer to each tools/call that [Call] sends (ADR 0025 made the same
// choice for mcpimport), and names the task in the Mcp-Name header of
// tasks/* requests, which the SDK sets only for the methods it knows.
package taskclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The statuses of a task.
const (
	Working       = "working"
	InputRequired = "input_required"
	Completed     = "completed"
	Failed        = "failed"
	Cancelled     = "cancelled"
)

// handleLimit bounds the copy of a tools/call answer: a task handle is a
// few hundred bytes, so a longer answer is a direct result, not a task.
const handleLimit = 64 << 10

// Poll bounds: the server's pollIntervalMs is honoured within them.
const (
	MinPoll = 10 * time.Millisecond
	MaxPoll = 5 * time.Second
)

// cancelTimeout bounds the tasks/cancel sent when the caller gives up.
const cancelTimeout = 5 * time.Second

// Task is a task as tasks/get shows it.
type Task struct {
	mcp.ResultBase
	ResultType     string              `json:"resultType,omitempty"`
	TaskID         string              `json:"taskId"`
	Status         string              `json:"status"`
	StatusMessage  string              `json:"statusMessage,omitempty"`
	CreatedAt      string              `json:"createdAt,omitempty"`
	LastUpdatedAt  string              `json:"lastUpdatedAt,omitempty"`
	TTLMs          int64               `json:"ttlMs,omitempty"`
	PollIntervalMs int64               `json:"pollIntervalMs,omitempty"`
	InputRequests  mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result         json.RawMessage     `json:"result,omitempty"`
	Error          *jsonrpc.Error      `json:"error,omitempty"`
}

// ref is the params of tasks/get, tasks/update and tasks/cancel.
type ref struct {
	mcp.ParamsBase
	TaskID         string               `json:"taskId"`
	InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
}

// Register lets c send tasks/get, tasks/update and tasks/cancel. A client
// that follows tasks also declares the tasks extension
// (mcpversion.TasksExtension) in its capabilities
// (ClientOptions.Capabilities), so that a TaskOptional tool answers it with
// a task.
func Register(c *mcp.Client) error {
	return errors.Join(
		mcp.AddSendingCustomMethod[*ref, *Task](c, "tasks/get"),
		mcp.AddSendingCustomMethod[*ref, *Task](c, "tasks/update"),
		mcp.AddSendingCustomMethod[*ref, *Task](c, "tasks/cancel"),
	)
}

// Wrap returns a copy of hc (nil: http.DefaultClient) whose transport
// keeps the answers [Call] asks for and names tasks in Mcp-Name.
func Wrap(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = roundTripper{base: base}
	return &c
}

// Options are how [Call] answers and reports. Every zero field means its
// documented default.
type Options struct {
	// Answer answers one question of a task waiting for input (key is the
	// question's key in inputRequests). Default: none, and a task that
	// asks is cancelled and the call fails.
	Answer func(ctx context.Context, key string, q mcp.InputRequest) (mcp.InputResponse, error)
	// Observe is told the task when it is created and each time its
	// status or status message changes.
	Observe func(*Task)
	// Capabilities, when set, are the client capabilities declared on
	// each tasks/* request (_meta), as the caller declared them on the
	// tools/call: the server answers tasks/* only to a request that
	// declares the tasks extension (mcpversion.TasksExtension). Default:
	// the client's own.
	Capabilities map[string]any
}

// meta is the _meta of one request: a new map each time, since the SDK
// adds to it.
func (o *Options) meta() mcp.Meta {
	if o.Capabilities == nil {
		return nil
	}
	return mcp.Meta{mcp.MetaKeyClientCapabilities: o.Capabilities}
}

// CancelledError is the error of a [Call] whose context ended while its task
// ran: the task was cancelled with tasks/cancel (Err is nil) or that
// request failed (Err says why).
type CancelledError struct {
	TaskID string
	Cause  error // the context's
	Err    error // the tasks/cancel's, or nil
}

func (e *CancelledError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("gave up on task %s (%v), and tasks/cancel failed: %v", e.TaskID, e.Cause, e.Err)
	}
	return fmt.Sprintf("gave up on task %s (%v); it was cancelled with tasks/cancel", e.TaskID, e.Cause)
}

func (e *CancelledError) Unwrap() error { return e.Cause }

// Call calls a tool on cs, a session of a client made with [Register] over
// an HTTP client from [Wrap]. When the server answers with a task, Call
// follows it until it ends and returns the result it completed with, and
// the task as last seen; a direct answer is returned as it is, with a nil
// task. A task that failed returns its JSON-RPC error (a *jsonrpc.Error),
// one cancelled by the server an error saying so. When ctx ends first the
// task is cancelled (tasks/cancel, bounded apart from ctx) and the error is
// a *CancelledError.
func Call(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams, opts *Options) (*mcp.CallToolResult, *Task, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	cp := &capture{}
	res, err := cs.CallTool(context.WithValue(ctx, captureKey{}, cp), params)
	if err != nil || !isTaskAnswer(res) {
		return res, nil, err
	}
	raw := cp.result()
	var t Task
	if raw == nil || json.Unmarshal(raw, &t) != nil || t.ResultType != "task" || t.TaskID == "" {
		return nil, nil, errors.New("the server answered with a task handle that cannot be read")
	}
	return follow(ctx, cs, &t, o)
}

// follow polls t until it ends.
func follow(ctx context.Context, cs *mcp.ClientSession, t *Task, o Options) (*mcp.CallToolResult, *Task, error) {
	id := t.TaskID
	observe := func(t *Task) {
		if o.Observe != nil {
			o.Observe(t)
		}
	}
	observe(t)
	last := *t
	for {
		switch t.Status {
		case Completed:
			var res mcp.CallToolResult
			if t.Result == nil || json.Unmarshal(t.Result, &res) != nil {
				return nil, t, fmt.Errorf("task %s completed without a readable result", id)
			}
			return &res, t, nil
		case Failed:
			if t.Error != nil {
				return nil, t, t.Error
			}
			return nil, t, fmt.Errorf("task %s failed without an error", id)
		case Cancelled:
			return nil, t, fmt.Errorf("task %s was cancelled", id)
		case InputRequired:
			if err := answer(ctx, cs, t, o); err != nil {
				if ctx.Err() != nil {
					return nil, t, giveUp(ctx, cs, id, o)
				}
				cerr := cancel(ctx, cs, id, o)
				return nil, t, errors.Join(fmt.Errorf("task %s asked: %w", id, err), cerr)
			}
		}
		wait := min(max(time.Duration(t.PollIntervalMs)*time.Millisecond, MinPoll), MaxPoll)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, t, giveUp(ctx, cs, id, o)
		case <-timer.C:
		}
		next, err := send(ctx, cs, "tasks/get", &ref{ParamsBase: mcp.ParamsBase{Meta: o.meta()}, TaskID: id})
		if err != nil {
			if ctx.Err() != nil {
				return nil, t, giveUp(ctx, cs, id, o)
			}
			// Nobody follows the task now: stop it.
			return nil, t, errors.Join(err, cancel(ctx, cs, id, o))
		}
		if next.TaskID != id {
			return nil, t, errors.Join(fmt.Errorf("tasks/get of task %s answered for task %q", id, next.TaskID), cancel(ctx, cs, id, o))
		}
		t = next
		if t.Status != last.Status || t.StatusMessage != last.StatusMessage {
			observe(t)
			last = *t
		}
	}
}

// answer answers every question of t and sends the answers.
func answer(ctx context.Context, cs *mcp.ClientSession, t *Task, o Options) error {
	if len(t.InputRequests) == 0 {
		return nil // asked nothing readable: poll again
	}
	if o.Answer == nil {
		return errors.New("this client answers no questions")
	}
	responses := make(mcp.InputResponseMap, len(t.InputRequests))
	for key, q := range t.InputRequests {
		r, err := o.Answer(ctx, key, q)
		if err != nil {
			return err
		}
		responses[key] = r
	}
	_, err := send(ctx, cs, "tasks/update", &ref{ParamsBase: mcp.ParamsBase{Meta: o.meta()}, TaskID: t.TaskID, InputResponses: responses})
	return err
}

// giveUp cancels the task of a call whose ctx ended.
func giveUp(ctx context.Context, cs *mcp.ClientSession, id string, o Options) error {
	return &CancelledError{TaskID: id, Cause: context.Cause(ctx), Err: cancel(ctx, cs, id, o)}
}

// cancel sends tasks/cancel, bounded apart from ctx (which may have ended).
func cancel(ctx context.Context, cs *mcp.ClientSession, id string, o Options) error {
	ctx, stop := context.WithTimeout(context.WithoutCancel(ctx), cancelTimeout)
	defer stop()
	_, err := send(ctx, cs, "tasks/cancel", &ref{ParamsBase: mcp.ParamsBase{Meta: o.meta()}, TaskID: id})
	return err
}

// Get returns the task id as tasks/get shows it, for a client that
// declares the tasks extension (mcpversion.TasksExtension) in its own
// capabilities.
func Get(ctx context.Context, cs *mcp.ClientSession, id string) (*Task, error) {
	return send(ctx, cs, "tasks/get", &ref{TaskID: id})
}

// Cancel asks the server to cancel the task id (tasks/cancel), for a
// client that declares the tasks extension (mcpversion.TasksExtension) in
// its own capabilities.
func Cancel(ctx context.Context, cs *mcp.ClientSession, id string) error {
	_, err := send(ctx, cs, "tasks/cancel", &ref{TaskID: id})
	return err
}

// send sends a tasks/* request about r.TaskID.
func send(ctx context.Context, cs *mcp.ClientSession, method string, r *ref) (*Task, error) {
	return mcp.CallCustomMethod[*ref, *Task](named(ctx, r.TaskID), cs, method, r)
}

// isTaskAnswer reports whether a tools/call result the SDK decoded is a
// CreateTaskResult: the SDK keeps the resultType, which its encoder writes
// back, and drops the rest. A task handle has no content.
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

type captureKey struct{}

type nameKey struct{}

// named carries the task id for the Mcp-Name header.
func named(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, nameKey{}, id)
}

// capture holds the body of the last POST of one tools/call, bounded.
type capture struct {
	mu   sync.Mutex
	body bytes.Buffer
	over bool
}

func (c *capture) reset() {
	c.mu.Lock()
	c.body.Reset()
	c.over = false
	c.mu.Unlock()
}

func (c *capture) write(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over || c.body.Len()+len(p) > handleLimit {
		c.over = true
		return
	}
	c.body.Write(p)
}

// result is the result of the JSON-RPC response captured, or nil.
func (c *capture) result() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return nil
	}
	return resultOf(c.body.Bytes())
}

// resultOf finds the result of the JSON-RPC response in an HTTP body: one
// JSON message, or the data of server-sent events.
func resultOf(body []byte) json.RawMessage {
	var messages [][]byte
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '{' {
		messages = append(messages, trimmed)
	} else {
		var data bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 4096), handleLimit+1)
		flush := func() {
			if data.Len() > 0 {
				messages = append(messages, bytes.Clone(data.Bytes()))
				data.Reset()
			}
		}
		for sc.Scan() {
			line := sc.Text()
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(d, " "))
			} else if line == "" {
				flush()
			}
		}
		flush()
	}
	for _, m := range messages {
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Result != nil {
			return msg.Result
		}
	}
	return nil
}

// roundTripper copies the body of a POST whose context holds a capture,
// and sets Mcp-Name for a request whose context names a task.
type roundTripper struct{ base http.RoundTripper }

func (rt roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if id, ok := req.Context().Value(nameKey{}).(string); ok && req.Method == http.MethodPost && req.Header.Get("Mcp-Name") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("Mcp-Name", id)
	}
	cp, _ := req.Context().Value(captureKey{}).(*capture)
	if cp == nil || req.Method != http.MethodPost {
		return rt.base.RoundTrip(req)
	}
	// Each POST's answer replaces the one before: the SDK retries a call
	// that asked (an input-required round) on the same context, and the
	// last answer is the call's.
	cp.reset()
	resp, err := rt.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Body = &tee{ReadCloser: resp.Body, cp: cp}
	return resp, nil
}

type tee struct {
	io.ReadCloser
	cp *capture
}

func (b *tee) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.cp.write(p[:n])
	}
	return n, err
}
