//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them, so its test client answers a task's questions of them too.
package agnaratest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/internal/taskclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TaskOptions configure [Client.CallTask]. A nil *TaskOptions and every
// zero field mean the documented default.
type TaskOptions struct {
	// Observe is told each status the task reaches, with its status
	// message (the handler's latest progress, for a working task), as
	// CallTask sees them: first "working" when the task is created, last
	// the status it ended with. It runs on CallTask's goroutine: a test
	// may cancel the call's context from it. Default: none.
	Observe func(status, message string)
}

// TaskRun is what [Client.CallTask] saw of a call.
type TaskRun struct {
	// ID is the task's id; empty when the server answered the call
	// directly (a refusal, a question asked before the task, a tool that
	// is not a task tool).
	ID string
	// Statuses are the statuses the task went through, in order, each
	// change once; the last is the one it ended with.
	Statuses []string
	// Messages are the status messages it showed, in order, each change
	// once.
	Messages []string
	// Outcome is the call's canonical outcome ([OutcomeOf]).
	Outcome execution.Outcome
}

// CallTask calls the tool name with args (as [Client.CallTool]), declaring
// the MCP tasks extension (io.modelcontextprotocol/tasks) on the call, so
// that a tool exposed with mcpexpose.TaskOptional or TaskRequired answers
// with a task. It then follows the task as a client would, polling
// tasks/get at the server's pollIntervalMs, answering its questions with
// tasks/update as [Options] say (Answer, recorded in [Client.Questions];
// Roots; Sample), until the task ends, and returns what it saw.
//
// A task that completed gives the outcome of its result, isError failures
// included. A task that failed returns its JSON-RPC error (wrapping a
// *jsonrpc.Error); one cancelled by the server, an error saying so. When
// ctx ends while the task runs, CallTask cancels it (tasks/cancel) and
// returns an error wrapping ctx's: errors.Is(err, context.Canceled). Tasks
// need the 2026-07-28 protocol ([Modern]).
func (c *Client) CallTask(ctx context.Context, name string, args any, opts *TaskOptions) (*TaskRun, error) {
	if c.ProtocolVersion() != Modern {
		return nil, fmt.Errorf("agnaratest: tasks need protocol %s; the client negotiated %s", Modern, c.ProtocolVersion())
	}
	var o TaskOptions
	if opts != nil {
		o = *opts
	}
	if args == nil {
		args = map[string]any{}
	}
	run := &TaskRun{}
	observe := func(t *taskclient.Task) { // on this goroutine
		run.ID = t.TaskID
		if n := len(run.Statuses); n == 0 || run.Statuses[n-1] != t.Status {
			run.Statuses = append(run.Statuses, t.Status)
		}
		if n := len(run.Messages); t.StatusMessage != "" && (n == 0 || run.Messages[n-1] != t.StatusMessage) {
			run.Messages = append(run.Messages, t.StatusMessage)
		}
		if o.Observe != nil {
			o.Observe(t.Status, t.StatusMessage)
		}
	}
	params := &mcp.CallToolParams{Name: name, Arguments: args, Meta: mcp.Meta{mcp.MetaKeyClientCapabilities: c.taskCaps}} // a new _meta: the SDK adds to it
	res, _, err := taskclient.Call(ctx, c.session, params, &taskclient.Options{Answer: c.answerTask, Observe: observe, Capabilities: c.taskCaps})
	if err != nil {
		return run, fmt.Errorf("agnaratest: task call %s: %w", name, err)
	}
	if run.Outcome, err = OutcomeOf(res); err != nil {
		return run, fmt.Errorf("agnaratest: task call %s: %w", name, err)
	}
	return run, nil
}

// Task is [Client.CallTask] in a test: an error fails it.
func (c *Client) Task(t testing.TB, name string, args any, opts *TaskOptions) *TaskRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), callTimeout)
	defer cancel()
	run, err := c.CallTask(ctx, name, args, opts)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// answerTask answers one question of a task as the SDK client answers a
// direct call's.
func (c *Client) answerTask(ctx context.Context, _ string, q mcp.InputRequest) (mcp.InputResponse, error) {
	switch q := q.(type) {
	case *mcp.ElicitParams:
		if c.answer != nil || c.open != nil {
			return c.elicit(ctx, q)
		}
	case *mcp.ListRootsParams:
		return &mcp.ListRootsResult{Roots: c.roots}, nil
	case *mcp.CreateMessageWithToolsParams:
		if c.sample != nil {
			// The SDK reads a task's sampling question in its with-tools
			// form; Options.Sample takes the plain one, which a question
			// without tools and with one content block a message is.
			if len(q.Tools) > 0 || q.ToolChoice != nil {
				return nil, errors.New("agnaratest: the task's sampling question offers tools, which Options.Sample cannot answer")
			}
			var plain mcp.CreateMessageParams
			b, err := json.Marshal(q)
			if err != nil || json.Unmarshal(b, &plain) != nil {
				return nil, errors.New("agnaratest: the task's sampling question does not fit Options.Sample (several content blocks a message)")
			}
			return c.sample(ctx, &plain)
		}
	}
	return nil, fmt.Errorf("agnaratest: the task asks with %T, and Options has nothing to answer it", q)
}

// taskCapabilities are the client capabilities a task call declares: the
// tasks extension and what the options answer, as the SDK declares them
// for a direct call.
func taskCapabilities(o Options) map[string]any {
	caps := map[string]any{
		"extensions": map[string]any{mcpversion.TasksExtension: map[string]any{}},
		"roots":      map[string]any{"listChanged": true},
	}
	if o.Answer != nil || o.OpenURL != nil {
		modes := map[string]any{}
		if o.Answer != nil {
			modes["form"] = map[string]any{}
		}
		if o.OpenURL != nil {
			modes["url"] = map[string]any{}
		}
		caps["elicitation"] = modes
	}
	if o.Sample != nil {
		caps["sampling"] = map[string]any{}
	}
	return caps
}
