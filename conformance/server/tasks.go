package main

import (
	"fmt"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// The fixtures of the tasks-* scenarios (the io.modelcontextprotocol/tasks
// extension, SEP-2663). Their handlers are ordinary capability functions;
// only their ToolOptions.Task makes them tasks, for a client that declares
// the extension on the request.
type (
	GreetInput struct {
		Name string `json:"name" jsonschema:"description=Who to greet"`
	}
	SlowComputeInput struct {
		Seconds float64 `json:"seconds" jsonschema:"minimum=0,maximum=600,description=How long to compute"`
		Label   string  `json:"label,omitempty" jsonschema:"description=A label echoed in the result"`
	}
	ConfirmDeleteInput struct {
		Filename string `json:"filename" jsonschema:"description=The file to delete"`
	}
	// MultiForm is the form of both questions of multi_input: the suite
	// answers each with both fields.
	MultiForm struct {
		Name    string `json:"name,omitempty"`
		Confirm bool   `json:"confirm,omitempty"`
	}
)

var (
	multiFirst  = execution.NewForm[MultiForm]("First input: your name?")
	multiSecond = execution.NewForm[MultiForm]("Second input: confirm?")
)

// taskTools are the tool options of the fixtures that run as tasks.
var taskTools = map[string]mcpexpose.ToolOptions{
	"slow_compute":        {Task: mcpexpose.TaskOptional},
	"failing_job":         {Task: mcpexpose.TaskRequired},
	"protocol_error_job":  {Task: mcpexpose.TaskOptional},
	"confirm_delete":      {Task: mcpexpose.TaskOptional},
	"multi_input":         {Task: mcpexpose.TaskOptional},
	"test_tool_with_task": {Task: mcpexpose.TaskRequired, TaskAfterQuestions: true},
}

func taskFixtures() []fixture {
	text := func(s string) []execution.Content { return []execution.Content{execution.Text{Text: s}} }
	return []fixture{
		{"greet", "Greets by name (never a task).", func(in GreetInput) ([]execution.Content, error) {
			return text("Hello, " + in.Name + "!"), nil
		}, agnara.CapabilityOptions{Annotations: agnara.ReadOnly}},
		{"slow_compute", "Computes for the given seconds (a task for clients that declare the extension).", func(ec *execution.Context, in SlowComputeInput) ([]execution.Content, error) {
			if err := sleep(ec, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				return nil, err // cancelled: the task settles to cancelled
			}
			return text(fmt.Sprintf("computed %q in %gs", in.Label, in.Seconds)), nil
		}, agnara.CapabilityOptions{Annotations: agnara.ReadOnly}},
		// failing_job requires a task: a client that does not declare the
		// extension is refused with -32021 before it runs.
		{"failing_job", "Fails after about a second, with a tool error.", func(ec *execution.Context) ([]execution.Content, error) {
			if err := sleep(ec, time.Second); err != nil {
				return nil, err
			}
			return nil, execution.Fail(execution.Conflict, "the job failed", nil)
		}, agnara.CapabilityOptions{}},
		// A panic is a tool result here (internal_failure), as for a
		// direct call; a task fails (status failed) with what a direct
		// call answers as a JSON-RPC error. This one asks for the client's
		// roots, which the suite's client does not offer: -32021.
		{"protocol_error_job", "Fails with a protocol error: it needs the roots capability.", func(ec *execution.Context) ([]execution.Content, error) {
			roots, err := ec.Roots("roots")
			if err != nil {
				return nil, err
			}
			return text(describeRoots(roots)), nil
		}, agnara.CapabilityOptions{}},
		{"confirm_delete", "Asks to confirm, then deletes (nothing, really).", func(ec *execution.Context, in ConfirmDeleteInput) ([]execution.Content, error) {
			ok, err := ec.Confirm("confirm", "Delete "+in.Filename+"?")
			if err != nil {
				return nil, err
			}
			if !ok {
				return text("kept " + in.Filename), nil
			}
			return text("deleted " + in.Filename), nil
		}, agnara.CapabilityOptions{}},
		{"multi_input", "Asks two questions at once, then completes.", func(ec *execution.Context) ([]execution.Content, error) {
			a, errA := execution.Ask(ec, "first", multiFirst)
			b, errB := execution.Ask(ec, "second", multiSecond)
			if err := firstErr(errA, errB); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("got %q and %q", a.Name, b.Name)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{multiFirst, multiSecond}}},
		// test_tool_with_task asks in rounds of the tools/call itself, then
		// detaches: the task starts only with the answer.
		{"test_tool_with_task", "Asks the user's name, then greets them from a task.", func(ec *execution.Context) ([]execution.Content, error) {
			v, err := execution.Ask(ec, "user_name", nameForm)
			if err != nil {
				return nil, err
			}
			ec.Detach()
			if err := sleep(ec, 500*time.Millisecond); err != nil {
				return nil, err
			}
			return text("Hello, " + v.Name + "!"), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{nameForm}}},
	}
}
