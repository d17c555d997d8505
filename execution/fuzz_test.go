package execution_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// FuzzArguments feeds arbitrary bytes as arguments to a capability with a
// rich input struct. Validation and decoding must never panic or hang, must
// answer either success or invalid_input, and must agree with each other:
// whatever decodes must, encoded again, be accepted again with the same
// value.
func FuzzArguments(f *testing.F) {
	// The checked-in corpus is in testdata/fuzz/FuzzArguments.
	app := agnara.New("fuzz", nil)
	var got Everything
	c := app.Capability(func(in Everything) error { got = in; return nil }, &agnara.CapabilityOptions{Name: "e"})
	plans, err := execution.Compile(app)
	if err != nil {
		f.Fatal(err)
	}
	p, _ := plans.Plan(c)
	f.Fuzz(func(t *testing.T, args []byte) {
		got = Everything{}
		out, err := p.Invoke(bg, &execution.Invocation{Arguments: args})
		if err != nil {
			t.Fatalf("Invoke error: %v", err)
		}
		switch o := out.(type) {
		case execution.Success:
			first := got
			again, err := json.Marshal(first)
			if err != nil {
				t.Fatalf("decoded value does not encode: %v", err)
			}
			out, err := p.Invoke(bg, &execution.Invocation{Arguments: again})
			if _, ok := out.(execution.Success); !ok || err != nil {
				t.Fatalf("re-encoded arguments %s refused: %v %v", again, out, err)
			}
			if !reflect.DeepEqual(normalize(t, first), normalize(t, got)) {
				t.Fatalf("round trip changed the value:\n%+v\n%+v", first, got)
			}
		case *execution.Failure:
			if o.Code != execution.InvalidInput {
				t.Fatalf("failure %v, want invalid_input", o)
			}
			vs, ok := o.Details["violations"].([]execution.Violation)
			if !ok || len(vs) == 0 {
				t.Fatalf("invalid_input without violations: %v", o.Details)
			}
			for _, v := range vs {
				if v.Message == "" || (v.Path != "" && !strings.HasPrefix(v.Path, "/")) {
					t.Fatalf("malformed violation %+v", v)
				}
			}
		default:
			t.Fatalf("unexpected outcome %T", out)
		}
	})
}

// normalize compares decoded values through their JSON form, which is what
// a caller can observe (time zones and raw message spacing aside).
func normalize(t *testing.T, e Everything) any {
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v
}
