package execution_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

type DetachInput struct {
	N int `json:"n" jsonschema:"minimum=1"`
}

func TestDetachComesAfterTheChecks(t *testing.T) {
	app := agnara.New("d", nil)
	var handlerSawDetach bool
	var detached int
	c := app.Capability(func(ctx context.Context, in DetachInput) (int, error) {
		handlerSawDetach = detached == 1
		return in.N, nil
	}, &agnara.CapabilityOptions{Name: "d", Confirm: "Sure?"})
	plan := compileOne(t, app, c)
	detach := func() { detached++ }
	yes := map[string]execution.Answer{execution.ConfirmKey: {Kind: execution.Elicitation, Action: "accept", Content: json.RawMessage(`{"confirm":true}`)}}

	for _, tc := range []struct {
		name    string
		args    string
		answers map[string]execution.Answer
		want    int
	}{
		{"invalid input", `{"n":0}`, yes, 0},
		{"unconfirmed", `{"n":1}`, nil, 0},
		{"passed every check", `{"n":1}`, yes, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			detached, handlerSawDetach = 0, false
			_, err := plan.Invoke(t.Context(), &execution.Invocation{Arguments: json.RawMessage(tc.args), Answers: tc.answers, Detach: detach})
			if err != nil {
				t.Fatal(err)
			}
			if detached != tc.want {
				t.Errorf("Detach called %d times, want %d", detached, tc.want)
			}
			if tc.want == 1 && !handlerSawDetach {
				t.Error("the handler ran before Detach")
			}
		})
	}
}

func TestDetachByHandler(t *testing.T) {
	app := agnara.New("d", nil)
	c := app.Capability(func(ec *execution.Context, in DetachInput) (int, error) {
		if in.N > 1 {
			ec.Detach()
			ec.Detach() // idempotent
		}
		return in.N, nil
	}, &agnara.CapabilityOptions{Name: "d"})
	plan := compileOne(t, app, c)
	for n, want := range map[int]int{1: 0, 2: 1} {
		detached := 0
		args, _ := json.Marshal(DetachInput{N: n})
		if _, err := plan.Invoke(t.Context(), &execution.Invocation{Arguments: args, Detach: func() { detached++ }, DetachByHandler: true}); err != nil {
			t.Fatal(err)
		}
		if detached != want {
			t.Errorf("n=%d: Detach called %d times, want %d", n, detached, want)
		}
	}
	// A direct call (no Invocation.Detach) may call it too: nothing happens.
	if _, err := plan.Invoke(t.Context(), &execution.Invocation{Arguments: json.RawMessage(`{"n":2}`)}); err != nil {
		t.Fatal(err)
	}
}

// An adapter that cannot detach (it could not store the task) cancels the
// invocation: nothing after the detach point runs, for no one would learn
// what it did, and Invoke reports the cancellation.
func TestFailedDetachRunsNothing(t *testing.T) {
	app := agnara.New("d", nil)
	var ran int
	c := app.Capability(func(context.Context, DetachInput) (int, error) {
		ran++ // whatever its context says
		return 1, nil
	}, &agnara.CapabilityOptions{Name: "d"})
	plan := compileOne(t, app, c)
	ctx, cancel := context.WithCancel(t.Context())
	out, err := plan.Invoke(ctx, &execution.Invocation{Arguments: json.RawMessage(`{"n":1}`), Detach: cancel})
	if err == nil || out != nil || ran != 0 {
		t.Errorf("Invoke = %v, %v after a failed detach, handler ran %d times; want the cancellation and no run", out, err, ran)
	}
}
