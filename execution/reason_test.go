package execution_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// hostError is an error of another package that names its reason, as
// mcpimport's and approval's errors do.
type hostError struct{ reason execution.Reason }

func (e *hostError) Error() string                   { return "host: " + string(e.reason) }
func (e *hostError) FailureReason() execution.Reason { return e.reason }

// failures invokes one real plan per way the pipeline fails and returns
// each failure, by name.
func failures(t *testing.T) map[string]*execution.Failure {
	t.Helper()
	app := agnara.New("reasons", nil)
	guarded := app.Capability(func(context.Context) error { return nil },
		&agnara.CapabilityOptions{Name: "guarded", Scopes: []string{"reasons:use"}})
	get := app.Capability(func(ctx context.Context, in GetUserInput) (User, error) {
		switch in.ID {
		case "missing":
			return User{}, execution.Fail(execution.NotFound, "no such user", nil)
		case "broken":
			return User{}, errors.New("the database is on fire")
		case "slow":
			<-ctx.Done() // the plan's deadline
			return User{}, ctx.Err()
		}
		return User{ID: in.ID}, nil
	}, &agnara.CapabilityOptions{Name: "get_user"})
	denied := app.Capability(func(context.Context) error { return nil },
		&agnara.CapabilityOptions{Name: "denied", Policies: []policy.Policy{policy.Func(func(context.Context, policy.Request) error {
			return policy.Deny("not on weekends")
		})}})
	limited := app.Capability(func(context.Context) error { return nil },
		&agnara.CapabilityOptions{Name: "limited", RateLimit: agnara.RateLimit{Rate: 0.001, Burst: 1}})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	plan := func(c *agnara.Capability) *execution.Plan {
		p, ok := plans.Plan(c)
		if !ok {
			t.Fatalf("no plan for %s", c)
		}
		return p
	}
	ada := policy.NewPrincipal("ada", nil)
	invoke := func(c *agnara.Capability, inv *execution.Invocation) *execution.Failure {
		t.Helper()
		if inv.Principal.IsAnonymous() {
			inv.Principal = ada
		}
		out, err := plan(c).Invoke(bg, inv)
		if err != nil {
			t.Fatalf("%s: Invoke error %v, want a failure", c, err)
		}
		f, ok := out.(*execution.Failure)
		if !ok {
			t.Fatalf("%s: outcome %#v, want a failure", c, out)
		}
		return f
	}
	if _, err := plan(limited).Invoke(bg, &execution.Invocation{Principal: ada}); err != nil {
		t.Fatal(err) // the one call the burst admits
	}
	return map[string]*execution.Failure{
		"scope guard":   invoke(guarded, &execution.Invocation{}),
		"invalid input": invoke(get, &execution.Invocation{Arguments: json.RawMessage(`{"id":7}`)}),
		"handler fails": invoke(get, &execution.Invocation{Arguments: json.RawMessage(`{"id":"missing"}`)}),
		"handler error": invoke(get, &execution.Invocation{Arguments: json.RawMessage(`{"id":"broken"}`)}),
		"deadline":      invoke(get, &execution.Invocation{Arguments: json.RawMessage(`{"id":"slow"}`), Timeout: 1}),
		"policy denial": invoke(denied, &execution.Invocation{}),
		"rate limit":    invoke(limited, &execution.Invocation{}),
	}
}

// TestReasonOfEveryFailure: ReasonOf answers a stable name for every
// failure the pipeline makes and every code, through wrapping, and for
// other packages' errors that name their reason; nothing for errors that
// are no failure.
func TestReasonOfEveryFailure(t *testing.T) {
	real := failures(t)
	type row struct {
		name string
		err  error
		want execution.Reason
	}
	rows := []row{
		{"scope guard", real["scope guard"], "forbidden"},
		{"invalid input", real["invalid input"], "invalid_input"},
		{"handler fails", real["handler fails"], "not_found"},
		{"handler error", real["handler error"], "internal_failure"},
		{"deadline", real["deadline"], "timeout"},
		{"policy denial", real["policy denial"], "forbidden"},
		{"rate limit", real["rate limit"], execution.ReasonRateLimited},
		{"limiter down", execution.LimiterUnavailable(), "unavailable"},
		{"finer reason", execution.Fail(execution.Conflict, "busy", nil).WithReason("approval_in_progress"), "approval_in_progress"},
		{"internal keeps no reason", execution.Fail(execution.InternalFailure, "", nil).WithReason("x"), "internal_failure"},
		{"another package's error", &hostError{"mcp_schema_unsupported"}, "mcp_schema_unsupported"},
		{"joined", errors.Join(io.EOF, execution.Fail(execution.Timeout, "late", nil)), "timeout"},
		{"joined, first wins", errors.Join(&hostError{"approval_expired"}, execution.Fail(execution.Timeout, "late", nil)), "approval_expired"},
		{"nil", nil, ""},
		{"no failure", io.EOF, ""},
		{"cancelled", context.Canceled, ""},
	}
	codes := []execution.Code{execution.InternalFailure, execution.InvalidInput, execution.Forbidden, execution.NotFound,
		execution.Conflict, execution.Timeout, execution.InteractionRequired, execution.Unavailable}
	if next := execution.Code(len(codes)); next.String() != "internal_failure" {
		t.Fatalf("code %d is %s: add it here", next, next)
	}
	for _, c := range codes {
		rows = append(rows, row{"code " + c.String(), execution.Fail(c, "m", nil), execution.Reason(c.String())})
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			if got := execution.ReasonOf(tc.err); got != tc.want {
				t.Errorf("ReasonOf = %q, want %q", got, tc.want)
			}
			if tc.err == nil {
				return
			}
			wrapped := fmt.Errorf("host: %w", fmt.Errorf("step: %w", tc.err))
			if got := execution.ReasonOf(wrapped); got != tc.want {
				t.Errorf("ReasonOf(wrapped) = %q, want %q", got, tc.want)
			}
			if !errors.Is(wrapped, tc.err) {
				t.Error("errors.Is no longer finds the error through the wrapping")
			}
			if f, ok := tc.err.(*execution.Failure); ok {
				if g := (*execution.Failure)(nil); !errors.As(wrapped, &g) || g != f {
					t.Errorf("errors.As(wrapped) found %v; want the failure", g)
				}
				if f.Code != execution.InternalFailure && f.Reason == "" && tc.want != execution.Reason(f.Code.String()) {
					t.Errorf("a failure without a reason answers %q, not its code %s", tc.want, f.Code)
				}
			}
		})
	}
}

// TestFailureReasonLeavesTheWireAlone: a failure without a reason still
// has none of its own (mcpexpose projects Failure.Reason, so "reason" stays
// off the wire); only ReasonOf falls back to the code.
func TestFailureReasonLeavesTheWireAlone(t *testing.T) {
	f := execution.Fail(execution.NotFound, "no such user", nil)
	if f.Reason != "" || f.FailureReason() != "not_found" || f.Error() != "not_found: no such user" {
		t.Errorf("Reason %q, FailureReason %q, Error %q", f.Reason, f.FailureReason(), f.Error())
	}
}

// BenchmarkReasonOf reads the reason of a failure wrapped twice, as a
// host's error handling does, against errors.As on the same error.
func BenchmarkReasonOf(b *testing.B) {
	err := fmt.Errorf("host: %w", fmt.Errorf("step: %w", execution.Fail(execution.Conflict, "busy", nil).WithReason("approval_in_progress")))
	b.Run("ReasonOf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if execution.ReasonOf(err) == "" {
				b.Fatal("no reason")
			}
		}
	})
	b.Run("errors.As", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var f *execution.Failure
			if !errors.As(err, &f) {
				b.Fatal("no failure")
			}
		}
	})
}
