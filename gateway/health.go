package gateway

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/health"
)

// readiness is what /readyz checks (ADR 47): the approval store answers,
// and at least one upstream is up. Each upstream is named with its state;
// one not up leaves the gateway ready, since it still serves the others'
// tools (and answers its own with the reason they are not served): an
// upstream down everywhere must not take every instance out of the load
// balancer.
func (g *Gateway) readiness() []health.Check {
	st := g.Status()
	checks := make([]health.Check, 0, len(st)+2)
	if store := g.store; store != nil {
		checks = append(checks, health.Check{Name: "approvals", Probe: func(ctx context.Context) error {
			_, err := store.List(ctx, approval.Filter{Limit: 1})
			return err
		}})
	}
	up := 0
	for _, s := range st {
		if s.State == StateUp {
			up++
		}
		checks = append(checks, health.Check{Name: "upstream " + s.Name, Degrades: true, Probe: func(context.Context) error {
			if s.State != StateUp {
				return fmt.Errorf("%s (%s)", s.State, s.Reason)
			}
			return nil
		}})
	}
	if len(st) > 0 {
		checks = append(checks, health.Check{Name: "upstreams", Probe: func(context.Context) error {
			if up == 0 {
				return errors.New("no upstream is up")
			}
			return nil
		}})
	}
	return checks
}
