package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
)

// stageRecorder is an observer of stages only; requests are the
// exposure's business and are not made here.
type stageRecorder struct {
	events []string
}

type stageKey struct{}

func (r *stageRecorder) Request(ctx context.Context, _ agnara.RequestInfo) (context.Context, func(agnara.Label, error)) {
	r.events = append(r.events, "request")
	return ctx, func(agnara.Label, error) {}
}

func (r *stageRecorder) Stage(ctx context.Context, capability string, stage agnara.Stage) (context.Context, func(error)) {
	r.events = append(r.events, capability+" "+stage.String())
	return context.WithValue(ctx, stageKey{}, stage), func(err error) {
		r.events = append(r.events, fmt.Sprintf("%s done: %v", stage, err))
	}
}

// TestStagesAreObserved checks that every stage a capability has is
// reported in order, that each runs in the context the observer returned,
// and that a stage's failure reaches the observer as its error.
func TestStagesAreObserved(t *testing.T) {
	rec := &stageRecorder{}
	reg := di.NewRegistry()
	di.Provide(reg, func() *Config { return &Config{} })
	app := agnara.New("obs", &agnara.Options{Dependencies: reg, Observer: rec})
	var inPolicy, inHandler any
	gate := policy.Func(func(ctx context.Context, req policy.Request) error {
		inPolicy = ctx.Value(stageKey{})
		if req.Principal.ID() == "eve" {
			return execution.Fail(execution.Forbidden, "not eve", nil)
		}
		return nil
	})
	c := app.Capability(func(ctx context.Context, in EchoInput, _ *Config) (string, error) {
		inHandler = ctx.Value(stageKey{})
		return in.Message, nil
	}, &agnara.CapabilityOptions{Name: "echo", Policies: []policy.Policy{gate}})
	p := compileOne(t, app, c)

	args := json.RawMessage(`{"message":"hi"}`)
	invokeOK(t, p, &execution.Invocation{Principal: policy.NewPrincipal("dana", nil), Arguments: args})
	want := []string{
		"obs.echo policy", "policy done: <nil>",
		"obs.echo dependencies", "dependencies done: <nil>",
		"obs.echo handler", "handler done: <nil>",
	}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if inPolicy != agnara.StagePolicy || inHandler != agnara.StageHandler {
		t.Errorf("policy ran in stage %v, handler in %v: want each in its stage's context", inPolicy, inHandler)
	}

	rec.events = nil
	out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: policy.NewPrincipal("eve", nil), Arguments: args})
	mustFailure(t, out, err, execution.Forbidden)
	want = []string{"obs.echo policy", "policy done: forbidden: not eve"}
	if diff := cmp.Diff(want, rec.events); diff != "" {
		t.Errorf("refused stages (-want +got):\n%s", diff)
	}
}

// TestLabelNamesEveryOutcome ties execution's outcomes to agnara's labels:
// each failure code is its own failed label, distinct from the others.
func TestLabelNamesEveryOutcome(t *testing.T) {
	for _, tt := range []struct {
		out  execution.Outcome
		want agnara.Label
	}{
		{execution.Success{}, agnara.LabelOK},
		{&execution.InputRequired{}, agnara.LabelInputRequired},
		{nil, agnara.LabelCanceled},
	} {
		if got := execution.LabelOf(tt.out); got != tt.want {
			t.Errorf("LabelOf(%T) = %q, want %q", tt.out, got, tt.want)
		}
	}
	seen := map[agnara.Label]bool{agnara.LabelOK: true, agnara.LabelInputRequired: true, agnara.LabelCanceled: true, agnara.LabelError: true}
	for c := execution.Code(0); c == 0 || c.String() != execution.InternalFailure.String(); c++ {
		l := execution.LabelOf(&execution.Failure{Code: c})
		if l != agnara.Label(c.String()) || !l.Failed() || seen[l] {
			t.Errorf("Label of %s = %q (failed %t, seen %t): want its own failed label", c, l, l.Failed(), seen[l])
		}
		seen[l] = true
	}
}
