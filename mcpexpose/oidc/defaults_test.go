package oidc

import (
	"testing"

	"github.com/agnara-go/agnara/internal/docdefault"
)

// TestDocumentedDefaults holds each default to the value the doc comment
// of its [Options] field states.
func TestDocumentedDefaults(t *testing.T) {
	docdefault.Check(t, ".", []docdefault.Stated{
		{Decl: "Options.Leeway", Says: "Zero means %v", Value: defaultLeeway},
		{Decl: "Options.KeyRefetchInterval", Says: "Zero means %v", Value: defaultKeyRefetchInterval},
	})
}
