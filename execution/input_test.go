package execution_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// Sequenced is embedded: encoding/json names it in the path of a failure
// inside it, and so does agnara.
type Sequenced struct {
	Seq int `json:"seq"`
}

type Item struct {
	N int `json:"n"`
}

// WordsInput has fields whose valid-looking values can still fail to
// decode: the schema says integer or number, the Go type says less.
type WordsInput struct {
	Sequenced
	Level    Level            `json:"level"`
	Count    uint64           `json:"count,omitempty"`
	Ratio    float32          `json:"ratio,omitempty"`
	When     *time.Time       `json:"when,omitempty"`
	Any      any              `json:"any,omitempty"`
	Counters map[string]int64 `json:"counters,omitempty"`
	Items    []Item           `json:"items,omitempty"`
}

// TestDecodeFailureWording pins the invalid_input failures of arguments
// that pass validation and do not decode, word for word as they were when
// encoding/json decoded them (the paths keep its quirks: no array index,
// the Go name of an embedded struct).
func TestDecodeFailureWording(t *testing.T) {
	fails := func(path string) *execution.Failure {
		msg := "the arguments do not match the input schema: "
		if path != "" {
			msg += path + ": value does not fit this field"
		} else {
			msg += "arguments cannot be decoded"
		}
		v := execution.Violation{Path: path, Message: "value does not fit this field"}
		if path == "" {
			v.Message = "arguments cannot be decoded"
		}
		return &execution.Failure{Code: execution.InvalidInput, Message: msg, Details: map[string]any{"violations": []execution.Violation{v}}}
	}
	tests := []struct {
		name, args string
		want       *execution.Failure
	}{
		{"an integer written with an exponent", `{"seq":1,"level":1e2}`, fails("/level")},
		{"an integer written with a fraction", `{"seq":1.0,"level":1}`, fails("/Sequenced/seq")},
		{"the first failure in the document", `{"level":1e2,"seq":1.0}`, fails("/level")},
		{"the first failure, the other way", `{"seq":1.0,"level":1e2}`, fails("/Sequenced/seq")},
		{"beyond uint64", `{"seq":1,"level":1,"count":1e30}`, fails("/count")},
		{"beyond float32", `{"seq":1,"level":1,"ratio":1e39}`, fails("/ratio")},
		{"an escaped date-time", `{"seq":1,"level":1,"when":"2026-01-02T03:04:05\u005a"}`, fails("")},
		{"beyond float64 inside any", `{"seq":1,"level":1,"any":{"x":[1e400]}}`, fails("/any")},
		{"a map value", `{"seq":1,"level":1,"counters":{"a":1e30}}`, fails("/counters")},
		{"inside an array element", `{"seq":1,"level":1,"items":[{"n":1},{"n":1e2}]}`, fails("/items/n")},
		{"in a repeated key's first value", `{"seq":1,"level":1.5e0,"level":1}`, fails("/level")},
		{"in a repeated key's last value", `{"seq":1,"level":1,"level":1e1}`, fails("/level")},
	}
	app := agnara.New("words", nil)
	ran := 0
	c := app.Capability(func(WordsInput) error { ran++; return nil }, &agnara.CapabilityOptions{Name: "w"})
	p := compileOne(t, app, c)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran = 0
			out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(tt.args)})
			f := mustFailure(t, out, err, execution.InvalidInput)
			if diff := cmp.Diff(tt.want, f); diff != "" {
				t.Errorf("failure (-want +got):\n%s", diff)
			}
			if ran != 0 {
				t.Errorf("handler ran")
			}
		})
	}
}

type Addressed struct {
	Name string   `json:"name"`
	Home Address  `json:"home"`
	Work *Address `json:"work,omitempty"`
}

// TestRepeatedKeysDecodeAsValidated: the validator sees the last of a
// repeated key's values, and so does the handler. encoding/json merged a
// repeated object into the first, so a field the validator never saw (a
// zip breaking its pattern) reached the handler.
func TestRepeatedKeysDecodeAsValidated(t *testing.T) {
	tests := []struct {
		name, args string
		want       Addressed
	}{
		{"a repeated string: the last wins, as before",
			`{"name":"a","name":"b","home":{"street":"s","city":"c"}}`,
			Addressed{Name: "b", Home: Address{Street: "s", City: "c"}}},
		{"a repeated object: the last, not a merge",
			`{"name":"n","home":{"street":"s","city":"c","zip":"bad!"},"home":{"street":"t","city":"c"}}`,
			Addressed{Name: "n", Home: Address{Street: "t", City: "c"}}},
		{"a repeated pointer to an object",
			`{"name":"n","home":{"street":"s","city":"c"},"work":{"street":"w","city":"c","zip":"bad!"},"work":{"street":"v","city":"c"}}`,
			Addressed{Name: "n", Home: Address{Street: "s", City: "c"}, Work: &Address{Street: "v", City: "c"}}},
	}
	app := agnara.New("dups", nil)
	var got Addressed
	c := app.Capability(func(in Addressed) error { got = in; return nil }, &agnara.CapabilityOptions{Name: "d"})
	p := compileOne(t, app, c)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = Addressed{}
			invokeOK(t, p, &execution.Invocation{Arguments: json.RawMessage(tt.args)})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("handler got (-want +got):\n%s", diff)
			}
		})
	}
	// A repeated key whose last value is invalid is refused, as before.
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(
		`{"name":"n","home":{"street":"s","city":"c"},"home":{"street":"s","city":"c","zip":"bad!"}}`)})
	f := mustFailure(t, out, err, execution.InvalidInput)
	if diff := cmp.Diff([]execution.Violation{{Path: "/home/zip", Message: "does not match the pattern ^[0-9]{5}$"}}, violations(t, f)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}

// textCalls counts CountedText.UnmarshalText calls.
var textCalls atomic.Int32

// CountedText decodes itself, and counts that it did.
type CountedText string

func (c *CountedText) UnmarshalText(b []byte) error {
	textCalls.Add(1)
	*c = CountedText(b)
	return nil
}

type MethodsInput struct {
	Code CountedText `json:"code"`
	N    int         `json:"n" jsonschema:"maximum=3"`
}

// TestInputMethodsRunOnValidArgumentsOnly: an input type's own decoding
// methods see arguments only once they passed validation, as when
// validation and decoding were two steps.
func TestInputMethodsRunOnValidArgumentsOnly(t *testing.T) {
	app := agnara.New("methods", nil)
	var got MethodsInput
	c := app.Capability(func(in MethodsInput) error { got = in; return nil }, &agnara.CapabilityOptions{Name: "m"})
	p := compileOne(t, app, c)

	textCalls.Store(0)
	out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(`{"code":"x","n":9}`)})
	mustFailure(t, out, err, execution.InvalidInput)
	if n := textCalls.Load(); n != 0 {
		t.Errorf("UnmarshalText ran %d times on arguments that failed validation", n)
	}

	invokeOK(t, p, &execution.Invocation{Arguments: json.RawMessage(`{"code":"x","n":1}`)})
	if n := textCalls.Load(); n != 1 || got.Code != "x" {
		t.Errorf("UnmarshalText ran %d times, code = %q; want 1 and x", n, got.Code)
	}
}

// Open has its own, open, schema: the validator lets any key through.
type Open struct {
	Name string `json:"name"`
}

func (Open) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

type OpenInput struct {
	O Open `json:"o"`
}

// TestCaseVariantKeysRefusedUnderCustomSchemas: keys match field names
// exactly, also where a custom schema does not close the object.
// encoding/json matched "NAME" to Name by case folding.
func TestCaseVariantKeysRefusedUnderCustomSchemas(t *testing.T) {
	app := agnara.New("open", nil)
	var got OpenInput
	c := app.Capability(func(in OpenInput) error { got = in; return nil }, &agnara.CapabilityOptions{Name: "o"})
	p := compileOne(t, app, c)
	for _, args := range []string{`{"o":{"NAME":"x"}}`, `{"o":{"Name":"x"}}`, `{"o":{"nick":"x"}}`} {
		out, err := p.Invoke(bg, &execution.Invocation{Arguments: json.RawMessage(args)})
		f := mustFailure(t, out, err, execution.InvalidInput)
		key := strings.Split(args, `"`)[3]
		if diff := cmp.Diff([]execution.Violation{{Path: "/" + key, Message: "unknown field"}}, violations(t, f)); diff != "" {
			t.Errorf("%s: violations (-want +got):\n%s", args, diff)
		}
	}
	invokeOK(t, p, &execution.Invocation{Arguments: json.RawMessage(`{"o":{"name":"x"}}`)})
	if got.O.Name != "x" {
		t.Errorf("name = %q, want x", got.O.Name)
	}
}

type Hidden struct {
	ID string `json:"id"`
}

// Shadow's own ID hides Hidden's for encoding/json, which agnara's decoding
// does not model.
type Shadow struct {
	Hidden
	ID string `json:"id"`
}

func (Shadow) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

type ShadowInput struct {
	S Shadow `json:"s"`
}

func TestCustomSchemaTypesAgnaraCannotDecodeAreRefused(t *testing.T) {
	app := agnara.New("shadow", nil)
	app.Capability(func(ShadowInput) error { return nil }, &agnara.CapabilityOptions{Name: "s"})
	_, err := execution.Compile(app)
	if err == nil || !strings.Contains(err.Error(), `input ShadowInput cannot be decoded the way encoding/json decodes it: in Shadow, Hidden.ID and ID both have the JSON name "id"`) {
		t.Fatalf("Compile = %v, want the name clash in Shadow", err)
	}
}
