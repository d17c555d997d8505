package execution_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/jsonschema-go/jsonschema"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

type Address struct {
	Street string `json:"street" jsonschema:"minLength=1"`
	City   string `json:"city"`
	Zip    string `json:"zip,omitempty" jsonschema:"pattern=^[0-9]{5}$"`
}

// Audit is embedded: its fields are promoted into the object.
type Audit struct {
	CreatedBy string    `json:"created_by"`
	CreatedAt time.Time `json:"created_at"`
}

type Level int8

// Celsius encodes as text, so it is described as a string.
type Celsius float64

func (c Celsius) MarshalText() ([]byte, error) { return []byte("0C"), nil }

func (c *Celsius) UnmarshalText([]byte) error { return nil }

type Everything struct {
	Audit
	Name      string            `json:"name" jsonschema:"minLength=1,maxLength=64" jsonschema_description:"Display name."`
	Role      string            `json:"role" jsonschema:"enum=admin,enum=member,enum=guest"`
	Home      Address           `json:"home"`
	Work      *Address          `json:"work,omitempty"`
	Manager   *string           `json:"manager"`
	Tags      []string          `json:"tags,omitempty" jsonschema:"maxItems=8,uniqueItems=true"`
	Scores    []int             `json:"scores"`
	Labels    map[string]string `json:"labels,omitempty"`
	Counters  map[string]int64  `json:"counters"`
	Birthday  time.Time         `json:"birthday" jsonschema:"format=date-time"`
	Due       *time.Time        `json:"due,omitempty"`
	Level     Level             `json:"level"`
	Ratio     float64           `json:"ratio" jsonschema:"minimum=0,maximum=1"`
	Active    bool              `json:"active"`
	Avatar    []byte            `json:"avatar,omitempty"`
	Temp      Celsius           `json:"temp,omitempty"`
	Extra     json.RawMessage   `json:"extra,omitempty"`
	Anything  any               `json:"anything,omitempty"`
	Ignored   string            `json:"-"`
	Untagged  uint16            `json:"Untagged"` // a Go-cased name, declared
	Addresses []Address         `json:"addresses,omitempty"`
}

// Custom describes itself.
type Custom struct{ V string }

func (Custom) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "uuid"}
}

type WithCustom struct {
	ID Custom `json:"id"`
}

func TestGoldenSchemas(t *testing.T) {
	tests := []struct {
		name string
		fn   any
	}{
		{"everything", func(in Everything) (Everything, error) { return in, nil }},
		{"address", func(in Address) (*Address, error) { return &in, nil }},
		{"custom", func(in WithCustom) ([]Address, error) { return nil, nil }},
		{"no_input", func() (map[string]*Address, error) { return nil, nil }},
		{"error_only", func(in struct{}) error { return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := agnara.New("golden", nil)
			c := app.Capability(tt.fn, &agnara.CapabilityOptions{Name: tt.name})
			p := compileOne(t, app, c)
			golden(t, filepath.Join("testdata", "schema", tt.name+".input.json"), p.InputSchema())
			golden(t, filepath.Join("testdata", "schema", tt.name+".output.json"), p.OutputSchema())
		})
	}
}

// golden compares got, indented, with the file at path.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	if got == nil {
		buf.WriteString("null")
	} else if err := json.Indent(&buf, got, "", "  "); err != nil {
		t.Fatalf("%s: schema is not JSON: %v", path, err)
	}
	buf.WriteByte('\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(want, buf.Bytes()) {
		t.Errorf("%s differs (run go test -update and review the diff):\ngot:\n%s", path, buf.Bytes())
	}
}

// TestGeneratedSchemasAgreeWithDecoding checks that values the schema
// accepts decode, and that the schema refuses what Go would mangle.
func TestGeneratedSchemasAgreeWithDecoding(t *testing.T) {
	app := agnara.New("golden", nil)
	var got Everything
	c := app.Capability(func(in Everything) error { got = in; return nil }, &agnara.CapabilityOptions{Name: "e"})
	p := compileOne(t, app, c)
	valid := `{"created_by":"x","created_at":"2026-01-02T03:04:05Z","name":"n","role":"admin",
		"home":{"street":"s","city":"c"},"manager":null,"scores":[1,2],"counters":{"a":9007199254740993},
		"birthday":"2000-01-01T00:00:00Z","level":-128,"ratio":0.5,"active":true,"Untagged":65535,
		"temp":"21C","extra":{"free":[1]},"anything":[1,"x"]}`
	invokeOK(t, p, &execution.Invocation{Arguments: json.RawMessage(valid)})
	if got.CreatedBy != "x" || got.Home.Street != "s" || got.Counters["a"] != 9007199254740993 || got.Level != -128 || got.Untagged != 65535 {
		t.Errorf("decoded %+v", got)
	}
	for _, bad := range []struct{ name, patch, path string }{
		{"int8 overflow", `"level":128`, "/level"},
		{"uint16 overflow", `"Untagged":65536`, "/Untagged"},
		{"negative unsigned", `"Untagged":-1`, "/Untagged"},
		{"not a date-time", `"birthday":"yesterday"`, "/birthday"},
		{"fraction for integer", `"level":1.5`, "/level"},
		{"enum", `"role":"root"`, "/role"},
		{"closed nested object", `"home":{"street":"s","city":"c","planet":"mars"}`, "/home/planet"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(valid), &m); err != nil {
				t.Fatal(err)
			}
			var patch map[string]json.RawMessage
			if err := json.Unmarshal([]byte("{"+bad.patch+"}"), &patch); err != nil {
				t.Fatal(err)
			}
			for k, v := range patch {
				m[k] = v
			}
			args, _ := json.Marshal(m)
			out, err := p.Invoke(bg, &execution.Invocation{Arguments: args})
			f := mustFailure(t, out, err, execution.InvalidInput)
			vs := violations(t, f)
			if len(vs) != 1 || vs[0].Path != bad.path {
				t.Errorf("violations = %v, want one at %s", vs, bad.path)
			}
		})
	}
}

// byPointer describes itself through a pointer receiver.
type byPointer struct{ V string }

func (*byPointer) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Format: "date"}
}

// byRawJSON describes itself in JSON.
type byRawJSON int

func (byRawJSON) JSONSchema() json.RawMessage {
	return json.RawMessage(`{"type":"integer","minimum":1,"description":"one or more"}`)
}

// byAnything's JSONSchema returns something that is not a schema.
type byAnything struct{ V string }

func (byAnything) JSONSchema() string { return "a string" }

// byNothing's JSONSchema returns no schema.
type byNothing struct{ V string }

func (byNothing) JSONSchema() *jsonschema.Schema { return nil }

type SelfDescribed struct {
	Custom Custom     `json:"custom" jsonschema_description:"An id."`
	Ptr    *byPointer `json:"ptr"`
	Raw    byRawJSON  `json:"raw"`
}

// TestSelfDescribingTypes: a type with a JSONSchema method is described by
// what the method returns, encoded as JSON: the SDK's *jsonschema.Schema
// (github.com/google/jsonschema-go), the *jsonschema.Schema of
// invopop/jsonschema which agnara-go used before ADR 71, or JSON itself;
// the method may have a pointer receiver. A field's own description
// replaces the type's, as with invopop/jsonschema: raw's "one or more" is
// dropped, the field having none. A result that is not a schema is a
// compile error naming the type.
func TestSelfDescribingTypes(t *testing.T) {
	app := agnara.New("self", nil)
	c := app.Capability(func(SelfDescribed) error { return nil }, &agnara.CapabilityOptions{Name: "s"})
	p := compileOne(t, app, c)
	want := `{"type":"object","properties":{` +
		`"custom":{"type":"string","description":"An id.","format":"uuid"},` +
		`"ptr":{"type":["string","null"],"format":"date"},` +
		`"raw":{"type":"integer","minimum":1}},` +
		`"required":["custom","ptr","raw"],"additionalProperties":false}`
	if got := string(p.InputSchema()); got != want {
		t.Errorf("input schema\n got %s\nwant %s", got, want)
	}
	for _, tc := range []struct {
		name string
		fn   any
		want string
	}{
		{"not a schema", func(struct {
			V byAnything `json:"v"`
		}) error {
			return nil
		}, `execution_test.byAnything.JSONSchema() returned "a string", which is not a JSON Schema`},
		{"nil", func(struct {
			V byNothing `json:"v"`
		}) error {
			return nil
		}, `execution_test.byNothing.JSONSchema() returned null, which is not a JSON Schema`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := agnara.New("self", nil)
			app.Capability(tc.fn, &agnara.CapabilityOptions{Name: "s"})
			if _, err := execution.Compile(app); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Compile = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// Methods invopop/jsonschema called to change a schema, ignored now.
type (
	withAlias    struct{ V string }
	withExtend   struct{ V string }
	withProperty struct{ V string }
	withDocs     struct {
		V string `json:"v"`
	}
)

func (withAlias) JSONSchemaAlias() any                     { return "" }
func (withExtend) JSONSchemaExtend(*jsonschema.Schema)     {}
func (withProperty) JSONSchemaProperty(prop string) any    { return "" }
func (withDocs) GetFieldDocString(fieldName string) string { return "docs" }

// TestInvopopHooksAreRefused: a type with a method invopop/jsonschema
// called to change its schema (JSONSchemaAlias, JSONSchemaExtend,
// JSONSchemaProperty, GetFieldDocString) is a compile error naming the
// method: agnara-go no longer calls it (ADR 71), and ignoring it would
// change the published schema without a word.
func TestInvopopHooksAreRefused(t *testing.T) {
	for _, tc := range []struct {
		method string
		fn     any
	}{
		{"JSONSchemaAlias", func(struct {
			V withAlias `json:"v"`
		}) error {
			return nil
		}},
		{"JSONSchemaExtend", func(struct {
			V withExtend `json:"v"`
		}) error {
			return nil
		}},
		{"JSONSchemaProperty", func(struct {
			V withProperty `json:"v"`
		}) error {
			return nil
		}},
		{"GetFieldDocString", func(withDocs) error { return nil }},
	} {
		t.Run(tc.method, func(t *testing.T) {
			app := agnara.New("hooks", nil)
			app.Capability(tc.fn, &agnara.CapabilityOptions{Name: "h"})
			_, err := execution.Compile(app)
			if err == nil || !strings.Contains(err.Error(), "has a "+tc.method+" method, which agnara-go does not call") {
				t.Fatalf("Compile = %v, want the %s method refused", err, tc.method)
			}
		})
	}
}

type hiddenNumber int

// Members is what encoding/json encodes: a field tagged json:"-," is the
// member "-", an embedded unexported non-struct type is no member, a
// protobuf enum (EnumDescriptor) an integer.
type Members struct {
	hiddenNumber
	//lint:ignore SA5008 the member named "-" is the point
	Dash string    `json:"-,"`
	Enum protoEnum `json:"enum"`
}

var _ = Members{hiddenNumber: 0} // set, never encoded

type protoEnum int32

func (protoEnum) EnumDescriptor() ([]byte, []int) { return nil, nil }

// Values is named as url.Values is.
type Values struct {
	Query url.Values `json:"query"`
	N     int        `json:"n"`
}

// TestSchemaMembersAreEncodingJSONs: where invopop/jsonschema described
// other members than encoding/json encodes, the schema now follows
// encoding/json (ADR 71), and a type named as a type of another package
// it contains is described as itself (invopop/jsonschema described the
// other type in its place).
func TestSchemaMembersAreEncodingJSONs(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   any
		want string
	}{
		{"members", func() (Members, error) { return Members{}, nil },
			`{"type":"object","properties":{"-":{"type":"string"},"enum":{"type":"integer","minimum":-2147483648,"maximum":2147483647}},"required":["-","enum"],"additionalProperties":false}`},
		{"named as a type it contains", func() (Values, error) { return Values{}, nil },
			`{"type":"object","properties":{"query":{"type":["object","null"],"additionalProperties":{"type":["array","null"],"items":{"type":"string"}}},"n":{"type":"integer"}},"required":["query","n"],"additionalProperties":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			app := agnara.New("members", nil)
			c := app.Capability(tc.fn, &agnara.CapabilityOptions{Name: "m"})
			p := compileOne(t, app, c)
			if got := string(p.OutputSchema()); got != tc.want {
				t.Errorf("output schema\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}
