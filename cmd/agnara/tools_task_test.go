package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	framework "github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
)

type MonthInput struct {
	Month string `json:"month"`
}

type NameAnswer struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

// jobs is an agnara server with task tools: report reports progress and
// runs until released or cancelled; greet asks a name once it runs as a
// task; purge needs a confirmation before it runs; broken fails; quick is
// no task tool.
type jobs struct {
	url       string
	started   chan struct{} // report is running
	release   chan struct{} // report may finish
	cancelled chan struct{} // report's context was cancelled
}

func startJobs(t *testing.T) *jobs {
	t.Helper()
	j := &jobs{started: make(chan struct{}, 8), release: make(chan struct{}), cancelled: make(chan struct{}, 8)}
	nameForm := execution.NewForm[NameAnswer]("Who is it for?")
	app := framework.New("jobs", nil)
	report := app.Capability(func(ec *execution.Context, in MonthInput) (string, error) {
		ec.Progress(1, 2, "half way through "+in.Month)
		j.started <- struct{}{}
		select {
		case <-j.release:
			return "report for " + in.Month, nil
		case <-ec.Done():
			j.cancelled <- struct{}{}
			return "", ec.Err()
		}
	}, &framework.CapabilityOptions{Name: "report", Description: "Builds a report."})
	greet := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", nameForm)
		if err != nil {
			return "", err
		}
		return "hello " + v.Name, nil
	}, &framework.CapabilityOptions{Name: "greet", Description: "Asks a name.", Forms: []framework.Form{nameForm}})
	purge := app.Capability(func() (string, error) { return "purged", nil },
		&framework.CapabilityOptions{Name: "purge", Description: "Needs a yes.", Confirm: "Purge everything?"})
	broken := app.Capability(func() (string, error) { return "", execution.Fail(execution.NotFound, "no such month", nil) },
		&framework.CapabilityOptions{Name: "broken", Description: "Fails."})
	quick := app.Capability(func() (string, error) { return "quick", nil }, &framework.CapabilityOptions{Name: "quick", Description: "Direct."})
	exp := mcpexpose.New(app)
	exp.Tool(report, &mcpexpose.ToolOptions{Name: "report", Task: mcpexpose.TaskOptional})
	exp.Tool(greet, &mcpexpose.ToolOptions{Name: "greet", Task: mcpexpose.TaskRequired})
	exp.Tool(purge, &mcpexpose.ToolOptions{Name: "purge", Task: mcpexpose.TaskOptional})
	exp.Tool(broken, &mcpexpose.ToolOptions{Name: "broken", Task: mcpexpose.TaskOptional})
	exp.Tool(quick, &mcpexpose.ToolOptions{Name: "quick"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	// Quick polls and heartbeats (progress reaches the status message at a
	// heartbeat); lapse and renew deadlines far beyond a loaded machine's
	// pauses.
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Tasks: &mcpexpose.TaskOptions{
		PollInterval: 20 * time.Millisecond, Heartbeat: 20 * time.Millisecond, HeartbeatLapse: time.Minute, RenewDeadline: 30 * time.Second,
	}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	j.url = srv.URL
	return j
}

// runTools runs `agnara tools args...` in a goroutine with ctx as its
// base context; done yields its exit code.
func runTools(ctx context.Context, stdin string, args ...string) (stdout, stderr *mcptest.Buffer, done <-chan int) {
	stdout, stderr = &mcptest.Buffer{}, &mcptest.Buffer{}
	ch := make(chan int, 1)
	tc := &toolsCLI{stdout: stdout, stderr: stderr, stdin: strings.NewReader(stdin), getenv: os.Getenv, ctx: ctx}
	go func() { ch <- tc.run(args) }()
	return stdout, stderr, ch
}

// waitFor waits for ch within a generous deadline.
func waitFor[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// waitText waits until b holds s.
func waitText(t *testing.T, b *mcptest.Buffer, s string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(b.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %q in %q", s, b.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestToolsCallTaskToCompletion: -task creates the task, prints its status
// and progress on stderr as it changes, and prints its result as a direct
// call's.
func TestToolsCallTaskToCompletion(t *testing.T) {
	j := startJobs(t)
	out, errOut, done := runTools(t.Context(), "", "call", j.url, "report", `{"month":"2026-11"}`, "-task")
	waitFor(t, "the task to start", j.started)
	waitText(t, errOut, ": 1/2: half way through 2026-11\n")
	close(j.release)
	if code := waitFor(t, "the command to end", done); code != 0 {
		t.Fatalf("exit %d, %q %q", code, out, errOut)
	}
	if got, want := out.String(), "{\n  \"result\": \"report for 2026-11\"\n}\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "report runs as task ") || !strings.HasSuffix(lines[0], " (working); Ctrl-C cancels it") {
		t.Fatalf("stderr %q: want the task's creation first", errOut)
	}
	id := strings.Fields(lines[0])[4]
	if len(id) < 24 {
		t.Errorf("task id %q", id)
	}
	for _, want := range []string{"task " + id + ": working: 1/2: half way through 2026-11", "task " + id + ": completed"} {
		if !strings.Contains(errOut.String(), want+"\n") {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	// -json prints the CallToolResult the task completed with.
	j.release = make(chan struct{})
	close(j.release)
	out, errOut, done = runTools(t.Context(), "", "call", j.url, "report", `{"month":"2026-12"}`, "-task", "-json")
	if code := waitFor(t, "the command to end", done); code != 0 {
		t.Fatalf("-json: exit %d, %q %q", code, out, errOut)
	}
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.StructuredContent["result"] != "report for 2026-12" {
		t.Errorf("-json printed %q (%v)", out, err)
	}
}

// TestToolsCallTaskAnswersQuestions: a question the task asks while it
// runs is answered as in a direct call (prompted on a terminal, or from
// -answers), and a confirmation asked before the task exists too.
func TestToolsCallTaskAnswersQuestions(t *testing.T) {
	j := startJobs(t)
	for _, tc := range []struct {
		name, stdin string
		interactive bool
		args        []string
		code        int
		want        string // in stdout
		prompt      string // in stderr
	}{
		{"form -answers", "", false, []string{"greet", "-answers", `{"name":"Ada"}`}, 0, `"result": "hello Ada"`, "Answered the form with -answers: Who is it for?"},
		{"form on a terminal", "Bo\n", true, []string{"greet"}, 0, `"result": "hello Bo"`, "name (string, required): "},
		{"form declined", "", false, []string{"greet"}, 1, "", "Declined the server's form (not a terminal; pass -answers JSON to fill it in): Who is it for?"},
		{"confirmation -yes", "", false, []string{"purge", "-yes"}, 0, `"result": "purged"`, "Confirmed (-yes): Purge everything?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut mcptest.Buffer
			cli := &toolsCLI{stdout: &out, stderr: &errOut, stdin: strings.NewReader(tc.stdin), getenv: os.Getenv, interactive: tc.interactive}
			code := cli.run(append([]string{"call", j.url, "-task"}, tc.args...))
			if code != tc.code || !strings.Contains(out.String(), tc.want) || !strings.Contains(errOut.String(), tc.prompt) {
				t.Fatalf("exit %d, want %d\nstdout %q, want %q\nstderr %q, want %q", code, tc.code, out.String(), tc.want, errOut.String(), tc.prompt)
			}
			if tc.args[0] == "greet" && !strings.Contains(errOut.String(), ": input_required\n") {
				t.Errorf("stderr lacks the task's input_required status: %q", errOut.String())
			}
		})
	}
}

// TestToolsCallTaskCancel: an interrupt (the command's context ending)
// sends tasks/cancel, which cancels the handler, and the command exits 1
// saying so; so does -timeout.
func TestToolsCallTaskCancel(t *testing.T) {
	j := startJobs(t)
	ctx, interrupt := context.WithCancel(t.Context())
	defer interrupt()
	_, errOut, done := runTools(ctx, "", "call", j.url, "report", `{"month":"2026-11"}`, "-task")
	waitFor(t, "the task to start", j.started)
	waitText(t, errOut, "Ctrl-C cancels it\n")
	interrupt()
	waitFor(t, "the handler to be cancelled", j.cancelled)
	if code := waitFor(t, "the command to end", done); code != 1 || !regexp.MustCompile(`^agnara tools call: interrupted: task [\w-]{24} was cancelled \(tasks/cancel\)$`).MatchString(lastLine(errOut.String())) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}

	// -timeout ends the context with errTimeout as its cause; ended here
	// once the task runs, so that no clock decides where it ends.
	ctx, timeout := context.WithCancelCause(t.Context())
	defer timeout(nil)
	_, errOut, done = runTools(ctx, "", "call", j.url, "report", `{"month":"2026-11"}`, "-task", "-timeout", "1h")
	waitFor(t, "the task to start", j.started)
	waitText(t, errOut, "Ctrl-C cancels it\n")
	timeout(errTimeout{time.Hour})
	waitFor(t, "the handler to be cancelled", j.cancelled)
	if code := waitFor(t, "the command to end", done); code != 1 || !strings.Contains(errOut.String(), "agnara tools call: -timeout 1h0m0s passed: task ") {
		t.Errorf("-timeout: exit %d, stderr %q", code, errOut)
	}
}

// TestToolsCallTaskOutcomes: a task's failure exits 1 as a direct call's
// does; a tool the server does not run as a task is run directly and says
// so; -task needs 2026-07-28.
func TestToolsCallTaskOutcomes(t *testing.T) {
	j := startJobs(t)
	code, out, errOut := tools(t, "call", j.url, "broken", "-task")
	if code != 1 || out != "" || !strings.HasSuffix(errOut, "agnara tools call: broken failed: not_found: no such month\n") || !strings.Contains(errOut, ": completed\n") {
		t.Errorf("a failed task: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = tools(t, "call", j.url, "quick", "-task")
	if code != 0 || out != "{\n  \"result\": \"quick\"\n}\n" || errOut != "quick was answered without a task\n" {
		t.Errorf("a direct tool: exit %d, %q %q", code, out, errOut)
	}
	code, _, errOut = tools(t, "call", j.url, "report", "-task", "-era", "legacy")
	if code != 2 || !strings.Contains(errOut, "-task needs protocol 2026-07-28 or later, where tasks are an extension, not 2025-11-25") {
		t.Errorf("-task -era legacy: exit %d, %q", code, errOut)
	}
	// Without -task the same tool runs directly (TaskOptional), as before.
	close(j.release)
	code, out, errOut = tools(t, "call", j.url, "report", `{"month":"2027-01"}`)
	if code != 0 || !strings.Contains(out, "report for 2027-01") || strings.Contains(errOut, "task") {
		t.Errorf("without -task: exit %d, %q %q", code, out, errOut)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestTasksGetCancel: agnara tasks get shows a task's status and, once it
// completed, its result; agnara tasks cancel stops it.
func TestTasksGetCancel(t *testing.T) {
	j := startJobs(t)
	start := func() string {
		t.Helper()
		params := map[string]any{"name": "report", "arguments": map[string]any{"month": "2026-11"}, "_meta": mcptest.Meta(map[string]any{"extensions": map[string]any{mcpversion.TasksExtension: map[string]any{}}})}
		_, body, msg := mcptest.Do(t, mcptest.Request(t, j.url, "tools/call", params, ""))
		res, _ := msg["result"].(map[string]any)
		id, _ := res["taskId"].(string)
		if id == "" {
			t.Fatalf("no task: %s", body)
		}
		waitFor(t, "the task to start", j.started)
		return id
	}
	id := start()
	// The status, with the handler's progress once a heartbeat recorded it.
	var errOut string
	for deadline := time.Now().Add(30 * time.Second); ; {
		var code int
		var out string
		code, out, errOut = agnara(time.Time{}, "tasks", "get", j.url, id)
		if code != 0 || out != "" {
			t.Fatalf("tasks get: exit %d, %q %q", code, out, errOut)
		}
		if strings.Contains(errOut, "half way") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if errOut != "task "+id+": working: 1/2: half way through 2026-11\n" {
		t.Errorf("tasks get of a working task: %q", errOut)
	}
	code, out, errOut := agnara(time.Time{}, "tasks", "cancel", j.url, id)
	if code != 0 || out != "" || !strings.HasPrefix(errOut, "task "+id+": cancel requested") {
		t.Errorf("tasks cancel: exit %d, %q %q", code, out, errOut)
	}
	waitFor(t, "the handler to be cancelled", j.cancelled)

	close(j.release)
	id = start()
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, out, errOut = agnara(time.Time{}, "tasks", "get", j.url, id)
		if code != 0 || !strings.Contains(errOut, ": working") || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if code != 0 || errOut != "task "+id+": completed\n" || out != "{\n  \"result\": \"report for 2026-11\"\n}\n" {
		t.Errorf("tasks get of a completed task: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := agnara(time.Time{}, "tasks", "get", j.url, "no-such-task"); code != 1 || errOut != "agnara tasks get: tasks/get: unknown task (JSON-RPC error -32602)\n" {
		t.Errorf("an unknown task: exit %d, %q", code, errOut)
	}
	if code, _, errOut := agnara(time.Time{}, "tasks", "get", j.url, id, "-era", "legacy"); code != 2 || !strings.Contains(errOut, "tasks are an extension of protocol 2026-07-28, not 2025-11-25") {
		t.Errorf("tasks get -era legacy: exit %d, %q", code, errOut)
	}
}
