package execution_test

import (
	"testing"

	"github.com/agnara-go/agnara/execution"
)

func TestWithReasonCopies(t *testing.T) {
	f := execution.Fail(execution.Conflict, "busy", nil)
	g := f.WithReason("approval_in_progress")
	if f.Reason != "" || g.Reason != "approval_in_progress" || execution.ReasonOf(g) != "approval_in_progress" {
		t.Errorf("f.Reason = %q, g.Reason = %q", f.Reason, g.Reason)
	}
	if got := g.Error(); got != "conflict (approval_in_progress): busy" {
		t.Errorf("Error() = %q", got)
	}
	if r := execution.Fail(execution.InternalFailure, "", nil).WithReason("x"); r.Reason != "" {
		t.Errorf("internal failure got reason %q", r.Reason)
	}
}
