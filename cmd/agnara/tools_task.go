package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/internal/taskclient"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskVersion is the first protocol revision with the tasks extension.
const taskVersion = "2026-07-28"

// taskTimeout is -timeout's default with -task: a task's default lifetime
// on an agnara server (mcpexpose.TaskOptions.TTL's default, 1 hour).
const taskTimeout = time.Hour

// errTimeout is the cause of a context that -timeout ended.
type errTimeout struct{ d time.Duration }

func (e errTimeout) Error() string { return fmt.Sprintf("-timeout %v passed", e.d) }

// callTask calls the tool name declaring the tasks extension and, when the
// server answers with a task, follows it: its status changes and progress
// on stderr, its questions answered as a direct call's are, its result
// printed as a direct call's is. An interrupt or -timeout cancels the task
// (tasks/cancel) before the command exits 1.
func (t *toolsCLI) callTask(ctx context.Context, cs *mcp.ClientSession, f *toolsFlags, rec *challengeRecorder, ask *asker, name string, arguments map[string]any) error {
	if arguments == nil {
		arguments = map[string]any{}
	}
	stop := t.spin("calling " + printable(name))
	ask.setSpinner(stop)
	res, task, err := taskclient.Call(ctx, cs, &mcp.CallToolParams{Name: name, Arguments: arguments}, &taskclient.Options{
		Answer: func(ctx context.Context, _ string, q mcp.InputRequest) (mcp.InputResponse, error) {
			p, ok := q.(*mcp.ElicitParams)
			if !ok {
				return nil, fmt.Errorf("the task asks for %T, which this command cannot answer", q)
			}
			return ask.elicit(ctx, &mcp.ElicitRequest{Params: p})
		},
		Observe: func(tk *taskclient.Task) {
			stop()
			t.printStatus(name, tk)
		},
	})
	stop()
	var cancelled *taskclient.CancelledError
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &cancelled):
		why := "interrupted"
		var te errTimeout
		if errors.As(cancelled.Cause, &te) {
			why = te.Error()
		}
		if cancelled.Err != nil {
			return fmt.Errorf("%s: task %s may still run: %s ('agnara tasks cancel URL %s' stops it)", why, printable(cancelled.TaskID), rec.explain("tasks/cancel", cancelled.Err), printable(cancelled.TaskID))
		}
		return fmt.Errorf("%s: task %s was cancelled (tasks/cancel)", why, printable(cancelled.TaskID))
	case err != nil && task != nil && task.Status == taskclient.Failed && errors.As(err, &rpcErr):
		return fmt.Errorf("task %s failed: %d %s", printable(task.TaskID), rpcErr.Code, printable(rpcErr.Message))
	case err != nil && task != nil:
		return rec.explain("task "+printable(task.TaskID), err)
	case err != nil:
		return t.callFailed(ctx, cs, rec, name, err)
	case task == nil:
		fmt.Fprintf(t.stderr, "%s was answered without a task\n", printable(name))
	}
	return t.show(name, f, res)
}

// printStatus prints a task's new status on stderr.
func (t *toolsCLI) printStatus(name string, tk *taskclient.Task) {
	if tk.ResultType == "task" {
		fmt.Fprintf(t.stderr, "%s runs as task %s (%s); Ctrl-C cancels it\n", printable(name), printable(tk.TaskID), printable(tk.Status))
		return
	}
	line := fmt.Sprintf("task %s: %s", printable(tk.TaskID), printable(tk.Status))
	if tk.StatusMessage != "" {
		line += ": " + printable(oneLine(tk.StatusMessage, 200))
	}
	fmt.Fprintln(t.stderr, line)
}

// unreachable says what to fix when the server could not be reached at
// all (nothing listens, no such host), or returns nil.
func unreachable(endpoint string, err error) error {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("cannot reach %s: connection refused; is the server running?", printable(endpoint))
	case errors.As(err, &dns):
		return fmt.Errorf("cannot reach %s: no such host %s; check the URL", printable(endpoint), printable(dns.Name))
	case errors.As(err, &op) && op.Op == "dial":
		return fmt.Errorf("cannot reach %s: %s; is the server running, and is the address right?", printable(endpoint), printable(op.Err.Error()))
	}
	return nil
}
