package execution

import (
	"testing"

	"github.com/agnara-go/agnara/internal/docdefault"
)

// MaxRoundState is the bound of [Context.SetRoundState], for the
// black-box test of it.
const MaxRoundState = maxRoundState

// TestDocumentedDefaults holds each default and bound to the value the doc
// comments state, and ErrRoundStateTooLarge's message to the bound.
func TestDocumentedDefaults(t *testing.T) {
	docdefault.Check(t, ".", []docdefault.Stated{
		{Decl: "LocalLimiterOptions.MaxKeys", Says: "Default: %v", Value: defaultLimiterKeys},
		{Decl: "Context.SetRoundState", Says: "State over %v", Value: docdefault.Bytes(maxRoundState)},
		{Decl: "ErrRoundStateTooLarge", Says: "over %v", Value: docdefault.Bytes(maxRoundState)},
	})
	if want := "execution: round state over " + docdefault.Format(docdefault.Bytes(maxRoundState)); ErrRoundStateTooLarge.Error() != want {
		t.Errorf("ErrRoundStateTooLarge says %q, want %q", ErrRoundStateTooLarge, want)
	}
}
