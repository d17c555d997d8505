package execution_test

import (
	"context"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
)

// A plan asks its caller only when it says so (registry.PlanFacts.Asks): it declares a
// confirmation, or its function takes *execution.Context. A function that
// takes context.Context cannot ask through the execution context it
// reaches with FromContext: the question fails the invocation
// (internal_failure) instead of reaching the caller, whatever the
// transport, so that an adapter may serve such a plan where no question
// could reach the caller.
func TestOnlyPlansThatSaySoAsk(t *testing.T) {
	app := agnara.New("asks", nil)
	var askErr error
	sneaky := app.Capability(func(ctx context.Context) (string, error) {
		ec, _ := execution.FromContext(ctx)
		_, askErr = ec.Confirm("sure", "Really?")
		if askErr != nil {
			return "", askErr
		}
		return "asked", nil
	}, &agnara.CapabilityOptions{Name: "sneaky"})
	sampler := app.Capability(func(ctx context.Context) (string, error) {
		ec, _ := execution.FromContext(ctx)
		if _, err := ec.Sample("s", execution.SamplingRequest{}); err != nil {
			return "", err
		}
		return "sampled", nil
	}, &agnara.CapabilityOptions{Name: "sampler"})
	rooter := app.Capability(func(ctx context.Context) (string, error) {
		ec, _ := execution.FromContext(ctx)
		if _, err := ec.Roots("r"); err != nil {
			return "", err
		}
		return "rooted", nil
	}, &agnara.CapabilityOptions{Name: "rooter"})
	declared := app.Capability(func(ec *execution.Context) (string, error) {
		ok, err := ec.Confirm("sure", "Really?")
		if err != nil {
			return "", err
		}
		if !ok {
			return "no", nil
		}
		return "yes", nil
	}, &agnara.CapabilityOptions{Name: "declared"})
	confirmed := app.Capability(func(context.Context) (string, error) { return "done", nil },
		&agnara.CapabilityOptions{Name: "confirmed", Confirm: "Go ahead?"})
	plain := app.Capability(func(context.Context) (string, error) { return "plain", nil }, &agnara.CapabilityOptions{Name: "plain"})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    *agnara.Capability
		asks bool
	}{{sneaky, false}, {sampler, false}, {rooter, false}, {declared, true}, {confirmed, true}, {plain, false}} {
		p, _ := plans.Plan(tc.c)
		if got := registry.Facts(p).Asks; got != tc.asks {
			t.Errorf("%s: Asks = %v, want %v", p.Identity(), got, tc.asks)
		}
	}
	everything := func(execution.InputKind) bool { return true }
	for _, c := range []*agnara.Capability{sneaky, sampler, rooter} {
		p, _ := plans.Plan(c)
		out, err := p.Invoke(bg, &execution.Invocation{Supports: everything})
		mustFailure(t, out, err, execution.InternalFailure)
	}
	if askErr == nil || askErr == execution.ErrInputRequired {
		t.Errorf("Confirm through FromContext returned %v, want a refusal naming the rule", askErr)
	}
	p, _ := plans.Plan(declared)
	out, err := p.Invoke(bg, &execution.Invocation{Supports: everything})
	if _, ok := out.(*execution.InputRequired); !ok || err != nil {
		t.Errorf("a plan taking *execution.Context asked: %v, %v; want input required", out, err)
	}
}
