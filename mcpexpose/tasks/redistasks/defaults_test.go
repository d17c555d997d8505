package redistasks

import (
	"testing"

	"github.com/agnara-go/agnara/internal/docdefault"
)

// TestDocumentedDefaults holds the default prefix to the value the doc
// comment of [Options.Prefix] states.
func TestDocumentedDefaults(t *testing.T) {
	docdefault.Check(t, ".", []docdefault.Stated{
		{Decl: "Options.Prefix", Says: "Default: %v", Value: defaultPrefix},
	})
}
