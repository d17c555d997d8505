package mcpexpose

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/agnara"
)

type enforcedOut struct {
	N int `json:"n"`
}

type looseOut struct {
	N int `json:"n" jsonschema:"maximum=5"`
}

// A tool whose output type guarantees its schema compiles no envelope
// validator: its successes are never validated, and compiling one per
// output type was half of a compile's cost. A tool whose schema says more
// than its type (a bound) keeps one, and so do raw outputs.
func TestOnlyUnenforcedToolsCompileAnEnvelopeValidator(t *testing.T) {
	app := agnara.New("app", nil)
	exp := New(app)
	exp.Tool(app.Capability(func(context.Context) (enforcedOut, error) { return enforcedOut{}, nil }, &agnara.CapabilityOptions{Name: "enforced", Description: "E."}), nil)
	exp.Tool(app.Capability(func(context.Context) (looseOut, error) { return looseOut{}, nil }, &agnara.CapabilityOptions{Name: "loose", Description: "L."}), nil)
	exp.Tool(app.Capability(func(context.Context) (json.RawMessage, error) { return nil, nil }, &agnara.CapabilityOptions{Name: "raw", Description: "R."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"app.enforced": false, "app.loose": true, "app.raw": true} {
		tl := snap.byName[name]
		if got := tl.output != nil; got != want {
			t.Errorf("%s: has an envelope validator = %v, want %v (enforced %v)", name, got, want, tl.enforced)
		}
		if tl.def.OutputSchema == nil {
			t.Errorf("%s publishes no output schema", name)
		}
	}
}
