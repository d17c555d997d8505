package projection

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/schemacheck"
)

// Output types with the constraints schema derivation writes from tags.

type chkAddress struct {
	Line     string `json:"line" jsonschema:"minLength=1,maxLength=12"`
	Country  string `json:"country" jsonschema:"enum=DE,enum=FR"`
	Postcode string `json:"postcode,omitempty" jsonschema:"pattern=^[0-9]{5}$"`
}

type chkLine struct {
	N     int            `json:"n" jsonschema:"minimum=1,maximum=10"`
	Cents uint64         `json:"cents" jsonschema:"maximum=100000"`
	Small int8           `json:"small"`
	Tags  []string       `json:"tags" jsonschema:"minItems=1,maxItems=3"`
	Kind  string         `json:"kind" jsonschema:"enum=a,enum=b"`
	Ship  *chkAddress    `json:"ship,omitempty"`
	Extra map[string]int `json:"extra"`
	Flag  bool           `json:"flag"`
	Ratio float64        `json:"ratio"`
	Fixed [2]int         `json:"fixed"`
}

type chkOut struct {
	ID      string     `json:"id" jsonschema:"pattern=^id-[a-z]+$"`
	Address chkAddress `json:"address"`
	Lines   []chkLine  `json:"lines" jsonschema:"maxItems=4"`
	Notes   []string   `json:"notes,omitempty"`
	Total   int        `json:"total" jsonschema:"minimum=0"`
	Ptr     *int       `json:"ptr"`
	Any     any        `json:"any"`
}

// derivedSchema is the output schema agnara-go derives for a capability
// returning T.
func derivedSchema[T any](t *testing.T) []byte {
	t.Helper()
	app := agnara.New("chk", nil)
	c := app.Capability(func(context.Context, struct{}) (T, error) { var z T; return z, nil }, &agnara.CapabilityOptions{Name: "chk", Description: "Check."})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Plan(c)
	return p.OutputSchema()
}

func genAddress(r *rand.Rand) chkAddress {
	return chkAddress{
		Line:     []string{"", "x", "Straße 1", "123456789012", "1234567890123", "\xff", "日本日本日本日本日本日本"}[r.IntN(7)],
		Country:  []string{"DE", "FR", "GB", "de", ""}[r.IntN(5)],
		Postcode: []string{"", "12345", "1234", "1234a", "123456"}[r.IntN(5)],
	}
}

func genLine(r *rand.Rand) chkLine {
	l := chkLine{
		N:     r.IntN(13) - 1,
		Cents: []uint64{0, 99999, 100000, 100001, math.MaxUint64}[r.IntN(5)],
		Small: int8(r.IntN(256) - 128),
		Kind:  []string{"a", "b", "c", ""}[r.IntN(4)],
		Flag:  r.IntN(2) == 0,
		Ratio: []float64{0, 0.5, -1e30}[r.IntN(3)],
	}
	switch r.IntN(4) {
	case 0:
		l.Tags = nil
	case 1:
		l.Tags = []string{}
	default:
		l.Tags = make([]string, 1+r.IntN(4))
	}
	if r.IntN(2) == 0 {
		a := genAddress(r)
		l.Ship = &a
	}
	if r.IntN(2) == 0 {
		l.Extra = map[string]int{"b": r.IntN(3), "a": -1}
	}
	return l
}

func genOut(r *rand.Rand) chkOut {
	o := chkOut{
		ID:      []string{"id-abc", "id-", "id-ABC", "x", "id-é"}[r.IntN(5)],
		Address: genAddress(r),
		Total:   r.IntN(5) - 2,
	}
	if r.IntN(3) > 0 {
		o.Lines = make([]chkLine, r.IntN(6))
		for i := range o.Lines {
			o.Lines[i] = genLine(r)
		}
	}
	if r.IntN(2) == 0 {
		o.Notes = []string{"n"}
	}
	if r.IntN(2) == 0 {
		n := 3
		o.Ptr = &n
	}
	if r.IntN(2) == 0 {
		o.Any = map[string]any{"k": []any{1, "x"}}
	}
	return o
}

// validates is the validator's verdict on v's one encoding, as the
// projection asks it when no Checker proves v.
func validates(t *testing.T, schema []byte, v any) bool {
	t.Helper()
	sch, err := schemacheck.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := appendCanonical(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := schemacheck.Parse(enc)
	if err != nil {
		t.Fatal(err)
	}
	return sch.Validate(doc) == nil
}

// TestCheckerAgrees holds the Checker to the validator: it never accepts
// a value whose encoding the validator rejects, for generated values of
// derived schemas and of hand-written ones; and it accepts the valid
// values of derived schemas itself (the point of it), so that the
// validator is asked only about values that fail.
func TestCheckerAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 87))
	derived := derivedSchema[chkOut](t)
	typ := reflect.TypeFor[chkOut]()
	c := NewChecker(typ, derived)
	accepted, valid := 0, 0
	for i := range 3000 {
		v := genOut(r)
		ok, want := c.Accepts(v), validates(t, derived, v)
		if ok && !want {
			t.Fatalf("value %d: the Checker accepts what the validator rejects: %#v", i, v)
		}
		if want && !ok && utf8Clean(v) {
			t.Errorf("value %d: valid, UTF-8, and not proved: %#v", i, v)
		}
		if ok {
			accepted++
		}
		if want {
			valid++
		}
	}
	if accepted == 0 || accepted == 3000 {
		t.Fatalf("accepted %d of 3000 (valid %d): the generator does not test both ways", accepted, valid)
	}

	// Hand-written schemas: each keyword the Checker knows, as the
	// validator reads it, and ones it leaves to the validator.
	for _, tc := range []struct {
		schema string
		proves bool // some valid value is proved
	}{
		{`{"type":"object","required":["id","nope"]}`, false},
		{`{"type":"object","required":["notes","id"],"properties":{"notes":{"maxItems":1}}}`, true},
		{`{"type":"object","properties":{"id":{"const":"x"}}}`, false},
		{`{"type":["object","null"],"additionalProperties":false,"properties":{"id":{},"address":{},"lines":{},"total":{},"ptr":{},"any":{}}}`, true},
		{`{"type":"object","additionalProperties":{"type":["string","integer","object","array","null"]}}`, false},
		{`{"type":"object","properties":{"total":{"exclusiveMinimum":-1,"exclusiveMaximum":2},"ptr":{"type":"integer"}}}`, true},
		{`{"type":"object","properties":{"total":{"minimum":0.5}}}`, false},
		{`{"type":"object","properties":{"lines":{"items":{"properties":{"extra":{"additionalProperties":{"maximum":1}},"fixed":{"items":{"minimum":0}}}}}}}`, true},
		{`{"type":"object","properties":{"lines":{"items":{"properties":{"extra":{"additionalProperties":false}}}}}}`, true},
		{`{"type":"object","properties":{"notes":{"type":"array","minItems":1,"items":{"enum":["n",1]}}}}`, true},
		{`{"type":"object","properties":{"address":{"properties":{"country":{"type":"integer"}}}}}`, false},
		{`{"type":"object","properties":{"id":{"pattern":"^id-\\p{Ll}+$","maxLength":5}}}`, true},
		{`{"type":"string"}`, false},
		{`{"title":"anything","description":"goes"}`, true},
		{`true`, true},
		{`false`, false},
	} {
		schema := []byte(tc.schema)
		c := NewChecker(typ, schema)
		proved := false
		for i := range 500 {
			v := genOut(r)
			ok, want := c.Accepts(v), validates(t, schema, v)
			if ok && !want {
				t.Fatalf("%s, value %d: the Checker accepts what the validator rejects: %#v", tc.schema, i, v)
			}
			proved = proved || ok
		}
		if proved != tc.proves {
			t.Errorf("%s: proved some: %v, want %v", tc.schema, proved, tc.proves)
		}
	}
	if NewChecker(typ, derived).Accepts(&chkOut{}) || NewChecker(nil, derived).Accepts(nil) {
		t.Error("a value of another type, or none, is proved")
	}
}

// utf8Clean reports whether every string v's encoding writes is UTF-8
// (a string that is not is left to the validator).
func utf8Clean(v any) bool {
	b, _ := json.Marshal(v)
	return !strings.Contains(string(b), `\ufffd`)
}
