//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them, so its test client answers them.
package agnaratest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type Month struct {
	Month string `json:"month" jsonschema:"minLength=1"`
}

// reports is an application whose tools run as tasks: build reports
// progress and runs until released or cancelled; draft asks a form,
// samples and lists roots while it runs; wipe needs a confirmation first.
type reports struct {
	snap      *mcpexpose.Snapshot
	release   chan struct{}
	cancelled chan struct{}
}

func compileReports(t *testing.T) *reports {
	t.Helper()
	r := &reports{release: make(chan struct{}), cancelled: make(chan struct{}, 1)}
	app := agnara.New("reports", nil)
	t.Cleanup(func() { app.Close() })
	build := app.Capability(func(ec *execution.Context, in Month) (string, error) {
		ec.Progress(1, 2, "half of "+in.Month)
		select {
		case <-r.release:
			return "report for " + in.Month, nil
		case <-ec.Done():
			r.cancelled <- struct{}{}
			return "", ec.Err()
		}
	}, &agnara.CapabilityOptions{Name: "build", Description: "Build a report."})
	draft := app.Capability(func(ec *execution.Context) (string, error) {
		topic, err := execution.Ask(ec, "topic", topicForm)
		if err != nil {
			return "", err
		}
		s, err := ec.Sample("draft", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "A report on " + topic.Topic}}, MaxTokens: 50})
		if err != nil {
			return "", err
		}
		roots, err := ec.Roots("roots")
		if err != nil {
			return "", err
		}
		return s.Text + " in " + roots[0].URI, nil
	}, &agnara.CapabilityOptions{Name: "draft", Description: "Draft a report.", Forms: []agnara.Form{topicForm}})
	wipe := app.Capability(func() (string, error) { return "wiped", nil },
		&agnara.CapabilityOptions{Name: "wipe", Description: "Wipe the reports.", Confirm: "Wipe every report?"})
	exp := mcpexpose.New(app)
	exp.Tool(build, &mcpexpose.ToolOptions{Task: mcpexpose.TaskOptional})
	exp.Tool(draft, &mcpexpose.ToolOptions{Task: mcpexpose.TaskRequired})
	exp.Tool(wipe, &mcpexpose.ToolOptions{Task: mcpexpose.TaskOptional})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	r.snap = snap
	return r
}

// quickTasks polls and heartbeats often (progress reaches the status
// message at a heartbeat), with lapse and renew deadlines far beyond a
// loaded machine's pauses.
var quickTasks = &mcpexpose.ServerOptions{Tasks: &mcpexpose.TaskOptions{
	PollInterval: 10 * time.Millisecond, Heartbeat: 10 * time.Millisecond, HeartbeatLapse: time.Minute, RenewDeadline: 30 * time.Second,
}}

func TestCallTaskCompletes(t *testing.T) {
	r := compileReports(t)
	c := agnaratest.NewClient(t, r.snap, &agnaratest.Options{Server: quickTasks})
	var once sync.Once
	run := c.Task(t, "reports.build", Month{Month: "2026-11"}, &agnaratest.TaskOptions{
		Observe: func(status, message string) {
			if message != "" {
				once.Do(func() { close(r.release) }) // the progress was seen: finish
			}
		},
	})
	if len(run.ID) < 24 {
		t.Errorf("task id %q", run.ID)
	}
	if diff := cmp.Diff([]string{"working", "completed"}, run.Statuses); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1/2: half of 2026-11"}, run.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(execution.Success{Value: json.RawMessage(`"report for 2026-11"`)}, run.Outcome); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	// Without the extension declared, the same tool runs directly.
	var got string
	c.CallValue(t, "reports.build", Month{Month: "2026-12"}, &got)
	if got != "report for 2026-12" {
		t.Errorf("a direct call = %q", got)
	}
}

// TestCallTaskAnswers: the questions a task asks while it runs are
// answered as Options say (a form, sampling, roots), and a confirmation
// asked before the task exists too.
func TestCallTaskAnswers(t *testing.T) {
	r := compileReports(t)
	c := agnaratest.NewClient(t, r.snap, &agnaratest.Options{
		Server: quickTasks,
		Answer: agnaratest.Accept(map[string]any{"topic": "tea", "confirm": true}),
		Sample: func(_ context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "drafted: " + p.Messages[0].Content.(*mcp.TextContent).Text}}, nil
		},
		Roots: []*mcp.Root{{URI: "file:///reports", Name: "reports"}},
	})
	run := c.Task(t, "reports.draft", nil, nil)
	if diff := cmp.Diff(execution.Success{Value: json.RawMessage(`"drafted: A report on tea in file:///reports"`)}, run.Outcome); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
	if run.Statuses[0] != "working" || !strings.Contains(strings.Join(run.Statuses, " "), "input_required") || run.Statuses[len(run.Statuses)-1] != "completed" {
		t.Errorf("statuses %v", run.Statuses)
	}
	if q := c.Questions(); len(q) != 1 || q[0].Message != "What about?" {
		t.Errorf("questions %v", q)
	}

	run = c.Task(t, "reports.wipe", nil, nil)
	if run.ID == "" || run.Outcome.(execution.Success).Value == nil || len(c.Questions()) != 2 || c.Questions()[1].Message != "Wipe every report?" {
		t.Errorf("wipe: %+v, questions %v", run, c.Questions())
	}
}

// TestCallTaskCancel: a call whose context ends while its task runs
// cancels the task (tasks/cancel), whose handler's context then ends.
func TestCallTaskCancel(t *testing.T) {
	r := compileReports(t)
	defer close(r.release) // ends a handler left running, before the client closes
	c := agnaratest.NewClient(t, r.snap, &agnaratest.Options{Server: quickTasks})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	run, err := c.CallTask(ctx, "reports.build", Month{Month: "2026-11"}, &agnaratest.TaskOptions{
		Observe: func(status, _ string) { cancel() },
	})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "it was cancelled with tasks/cancel") || run.ID == "" {
		t.Fatalf("CallTask = %+v, %v; want the cancellation", run, err)
	}
	select {
	case <-r.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the task's handler was not cancelled")
	}
}

// TestCallTaskDirect: a call answered without a task has no id; tasks
// need 2026-07-28.
func TestCallTaskDirect(t *testing.T) {
	r := compileReports(t)
	c := agnaratest.NewClient(t, r.snap, &agnaratest.Options{Server: quickTasks, Answer: agnaratest.Decline()})
	run := c.Task(t, "reports.wipe", nil, nil)
	f, ok := run.Outcome.(*execution.Failure)
	if run.ID != "" || run.Statuses != nil || !ok || f.Code != execution.Forbidden {
		t.Errorf("a declined confirmation: %+v", run)
	}
	legacy := agnaratest.NewClient(t, r.snap, &agnaratest.Options{ProtocolVersion: agnaratest.Handshake})
	if _, err := legacy.CallTask(t.Context(), "reports.build", nil, nil); err == nil || !strings.Contains(err.Error(), "tasks need protocol 2026-07-28") {
		t.Errorf("a task at %s: %v", agnaratest.Handshake, err)
	}
}
