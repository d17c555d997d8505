package approval

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agnara-go/agnara/execution"
)

// TestToolFailureForAnInvalidIdentity: an approver whose mapped identity
// the store refuses gets forbidden, not an internal failure, and the
// message does not echo the refused value.
func TestToolFailureForAnInvalidIdentity(t *testing.T) {
	err := toolFailure(fmt.Errorf("approver: %w", CheckIdentity("bob\x1b[2K", "")))
	var f *execution.Failure
	if !errors.As(err, &f) || f.Code != execution.Forbidden || f.Reason != ReasonNotAuthorized {
		t.Fatalf("toolFailure = %#v, want forbidden with %s", err, ReasonNotAuthorized)
	}
	if f.Message == "" {
		t.Fatalf("message %q", f.Message)
	}
	for _, r := range f.Message {
		if r == 0x1b {
			t.Fatalf("the message echoes the refused value: %q", f.Message)
		}
	}
}
