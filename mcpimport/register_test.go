package mcpimport

import (
	"testing"

	"github.com/agnara-go/agnara/internal/registry"
)

// TestImportedToolsCheckTheirOwnResults: an imported read tool with an
// output schema is compiled as one that validates its structured results
// itself (project does, naming the failure result_invalid), so that an
// exposure does not parse and validate them a second time (ADR 81).
func TestImportedToolsCheckTheirOwnResults(t *testing.T) {
	standard := Binding{Title: "T", NoScopeValidator: true, ConcurrencySafe: true, Profile: ProfileStandard}
	echo, structured := standard, standard
	echo.Name, structured.Name = "echo", "structured"
	plans, _, _ := importBoth(t, agnaraUpstream(t), map[string]Binding{"up.echo": echo, "up.structured": structured})
	for _, name := range []string{"gw.echo", "gw.structured"} {
		p, ok := plans.Lookup(name)
		if !ok {
			t.Fatalf("no plan %s", name)
		}
		if !registry.Facts(p).StructuredChecked || p.OutputSchema() == nil {
			t.Errorf("%s: StructuredChecked %v with output schema %s, want true with one", name, registry.Facts(p).StructuredChecked, p.OutputSchema())
		}
	}
}
