package execution

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/google/go-cmp/cmp"
)

// The types below exercise every decoder, including the kinds the schema
// derivation refuses (they can still sit under a type with its own
// JSONSchema method). diffAll is decoded by newInputDecoder and by
// encoding/json, and the two must agree.

type diffInner struct {
	A int    `json:"a"`
	B string `json:"b,omitempty"`
	P *int   `json:"p"`
}

type diffEmbedded struct {
	E int8 `json:"e"`
}

type diffUnexported struct {
	PE uint8 `json:"pe"`
}

type DiffPromoted struct {
	PP int `json:"pp"`
}

// diffText upper-cases its text; "bad" is an error.
type diffText string

func (t *diffText) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("bad text")
	}
	*t = diffText(strings.ToUpper(string(b)))
	return nil
}

// diffJSON keeps its bytes; "bad" is an error, "ute" a type error.
type diffJSON struct{ raw string }

func (j *diffJSON) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"bad"`:
		return errors.New("bad json")
	case `"ute"`:
		return &json.UnmarshalTypeError{Value: "string", Type: reflect.TypeFor[diffJSON](), Field: "inner"}
	}
	j.raw = string(b)
	return nil
}

// diffKey is a map key decoded by UnmarshalText; "bad" is an error.
type diffKey string

func (k *diffKey) UnmarshalText(b []byte) error {
	if string(b) == "bad" {
		return errors.New("bad key")
	}
	*k = diffKey("k:" + string(b))
	return nil
}

// diffBothKey has both methods: encoding/json decodes a key by its
// UnmarshalJSON, quoted.
type diffBothKey string

func (k *diffBothKey) UnmarshalText(b []byte) error {
	*k = diffBothKey("text:" + string(b))
	return nil
}
func (k *diffBothKey) UnmarshalJSON(b []byte) error {
	if string(b) == `"bad"` {
		return errors.New("bad key")
	}
	*k = diffBothKey("json:" + string(b))
	return nil
}

type diffAll struct {
	diffEmbedded
	*diffUnexported
	*DiffPromoted
	S      string                 `json:"s"`
	I      int                    `json:"i"`
	I8     int8                   `json:"i8"`
	U      uint                   `json:"u"`
	U16    uint16                 `json:"u16"`
	F32    float32                `json:"f32"`
	F64    float64                `json:"f64"`
	B      bool                   `json:"b"`
	N      json.Number            `json:"n"`
	Any    any                    `json:"any"`
	AnyMap map[string]any         `json:"anymap"`
	Bytes  []byte                 `json:"bytes"`
	Arr    [2]int                 `json:"arr"`
	BArr   [3]byte                `json:"barr"`
	Slice  []diffInner            `json:"slice"`
	PSlice *[]int                 `json:"pslice"`
	PP2    **int                  `json:"pp2"`
	M      map[string]int         `json:"m"`
	MK     map[diffKey]string     `json:"mk"`
	MJ     map[diffBothKey]int    `json:"mj"`
	MI     map[int]string         `json:"mi"`
	MU     map[uint8]bool         `json:"mu"`
	MS     map[string][]diffInner `json:"ms"`
	T      time.Time              `json:"t"`
	PT     *time.Time             `json:"pt"`
	Raw    json.RawMessage        `json:"raw"`
	Text   diffText               `json:"text"`
	PText  *diffText              `json:"ptext"`
	J      diffJSON               `json:"j"`
	PJ     *diffJSON              `json:"pj"`
	Inner  diffInner              `json:"inner"`
	PInner *diffInner             `json:"pinner"`
	Iface  fmt.Stringer           `json:"iface"`
	C      complex64              `json:"c"`
	Ch     chan int               `json:"ch"`
	Skip   string                 `json:"-"`
	Hidden string                 `json:"hidden" jsonschema:"-"`
	Dotted int                    `json:"a.b"`
	Slash  int                    `json:"c/d"`
	Untag  int
}

// diffNames are the JSON names of diffAll's structs, to recognize the keys
// encoding/json would match by case folding.
var diffNames = []string{"e", "pe", "pp", "s", "i", "i8", "u", "u16", "f32", "f64", "b", "n", "any", "anymap",
	"bytes", "arr", "barr", "slice", "pslice", "pp2", "m", "mk", "mj", "mi", "mu", "ms", "t", "pt", "raw",
	"text", "ptext", "j", "pj", "inner", "pinner", "iface", "c", "ch", "hidden", "a.b", "c/d", "Untag", "a", "p"}

// referenceDecode is what agnara decoded arguments with before ADR 38: a
// strict encoding/json decoder, its error worded by decodeViolation.
func referenceDecode(args []byte, t reflect.Type) (reflect.Value, *Violation) {
	ptr := reflect.New(t)
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(ptr.Interface()); err != nil {
		v := decodeViolation(err)
		return reflect.Value{}, &v
	}
	return ptr.Elem(), nil
}

// keyShapes reports whether the JSON text b has an object with a repeated
// key, or a key that differs from one of names only by case.
func keyShapes(b []byte, names []string) (repeated, folded bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return repeated, folded
		}
		top := func() *frame {
			if len(stack) == 0 {
				return nil
			}
			return stack[len(stack)-1]
		}
		if f := top(); f != nil && f.object && f.key {
			if s, ok := tok.(string); ok {
				f.key = false
				if f.keys[s] {
					repeated = true
				}
				f.keys[s] = true
				for _, n := range names {
					if s != n && strings.EqualFold(s, n) {
						folded = true
					}
				}
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if f := top(); f != nil && f.object {
			f.key = true // a value ended
		}
	}
}

// checkAgainstReference decodes args with d and with encoding/json and
// fails t where they disagree.
func checkAgainstReference(t *testing.T, d *inputDecoder, typ reflect.Type, args []byte) {
	t.Helper()
	refDoc, refErr := schemacheck.Parse(args)
	doc, v, failure, ok := d.pass(args)
	if ok != (refErr == nil) {
		t.Fatalf("%q: pass ok = %v, schemacheck.Parse error = %v", args, ok, refErr)
	}
	if !ok {
		return
	}
	// reflect.DeepEqual first: cmp.Diff is slow on deeply nested arrays.
	if !reflect.DeepEqual(refDoc, doc) {
		t.Fatalf("%q: document differs from schemacheck.Parse's (-want +got):\n%s", args, cmp.Diff(refDoc, doc))
	}
	parsed, err := parseDocumentOrErr(args)
	if err != nil || !reflect.DeepEqual(parsed, refDoc) {
		t.Fatalf("%q: parseDocument = %v, %v; want %v", args, parsed, err, refDoc)
	}
	repeated, folded := keyShapes(args, diffNames)
	if folded {
		return // encoding/json matches by case folding; agnara does not
	}
	refV, refFailure := referenceDecode(args, typ)
	if diff := cmp.Diff(refFailure, failure); diff != "" {
		t.Fatalf("%q: failure differs from encoding/json's (-want +got):\n%s", args, diff)
	}
	if failure != nil || repeated {
		return // a repeated object is merged by encoding/json, replaced here
	}
	if !reflect.DeepEqual(refV.Interface(), v.Interface()) {
		t.Fatalf("%q: decoded\n%#v\nencoding/json decoded\n%#v", args, v.Interface(), refV.Interface())
	}
}

func parseDocumentOrErr(b []byte) (any, error) {
	doc, ok := parseDocument(b)
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	return doc, nil
}

// decodeCases are the seeds of the differential tests: each decoder, with
// values that fit and values that do not, and the syntax encoding/json
// refuses or bends (invalid UTF-8, lone surrogates).
var decodeCases = []string{
	`{}`, ` {} `, `null`, `[]`, `1`, `"x"`, ``, ` `, `{} {}`, `{}x`, `{"s":"a"`, `{"s" "a"}`, `{"s":"a",}`, `[1,]`,
	`{"s":"hello","i":-42,"i8":127,"u":7,"u16":65535,"f32":1.5,"f64":-2.5e-3,"b":true,"n":12.50}`,
	`{"i":1e2}`, `{"i":1.0}`, `{"i":-0}`, `{"i":9223372036854775808}`, `{"i8":128}`, `{"u":-1}`, `{"u16":65536}`,
	`{"f32":1e39}`, `{"f64":1e400}`, `{"f64":1e-400}`, `{"n":"12"}`, `{"n":"x"}`, `{"n":true}`, `{"s":1}`, `{"b":"true"}`,
	`{"i":"1"}`, `{"s":null,"i":null,"b":null,"f64":null,"n":null}`, `{"s":"\u00e9\ud83d\ude00\n\t\"\\\/\b\f\r"}`,
	`{"s":"\ud800"}`, `{"s":"\udc00\ud800\udc00"}`, `{"s":"\ud800\u0041"}`, "{\"s\":\"\xff\xfe\"}", "{\"s\":\"a\x01\"}",
	`{"s":"\x"}`, `{"s":"\u12"}`, `{"any":{"a":[1,"x",true,null,{"b":2.5}]}}`, `{"any":1e400}`, `{"any":[1e400,{"x":1e999}]}`,
	`{"anymap":{"a":1,"b":null}}`, `{"anymap":[]}`, `{"bytes":"AQID"}`, `{"bytes":"!!!"}`, `{"bytes":[1,2,255]}`,
	`{"bytes":[256]}`, `{"bytes":null}`, `{"arr":[1,2,3]}`, `{"arr":[1]}`, `{"arr":"x"}`, `{"barr":"AQID"}`,
	`{"barr":[1,2]}`, `{"slice":[{"a":1,"p":2},{"a":"x","b":"y"}]}`, `{"slice":[]}`, `{"slice":{}}`, `{"slice":[null]}`,
	`{"pslice":[1,2]}`, `{"pslice":null}`, `{"pp2":3}`, `{"pp2":null}`, `{"m":{"a":1,"b":2}}`, `{"m":{"a":"x"}}`,
	`{"m":null}`, `{"m":[]}`, `{"mk":{"x":"1","y":"2"}}`, `{"mk":{"bad":"1"}}`, `{"mj":{"x":1}}`, `{"mj":{"bad":1}}`,
	`{"mi":{"1":"a","-2":"b"}}`, `{"mi":{"x":"a"}}`, `{"mu":{"255":true}}`, `{"mu":{"256":true}}`,
	`{"ms":{"a":[{"a":1}],"b":[{"a":"x"}]}}`, `{"t":"2026-01-02T03:04:05Z"}`, `{"t":"yesterday"}`, `{"t":null}`, `{"t":1}`,
	`{"t":"2026-01-02T03:04:05\u005a"}`, `{"pt":"2026-01-02T03:04:05+02:00"}`, `{"pt":null}`,
	`{"raw":{"x" : [1, 2]}}`, `{"raw":null}`, `{"text":"abc"}`, `{"text":"bad"}`, `{"text":1}`, `{"text":null}`,
	`{"ptext":"abc"}`, `{"ptext":null}`, `{"j":"ok"}`, `{"j":"bad"}`, `{"j":"ute"}`, `{"j":null}`, `{"pj":{"a":1}}`,
	`{"inner":{"a":1,"b":"x","p":null}}`, `{"inner":{"a":1,"zz":2}}`, `{"inner":[]}`, `{"inner":null}`, `{"pinner":{"p":5}}`,
	`{"iface":null}`, `{"iface":"x"}`, `{"c":1}`, `{"ch":null}`, `{"ch":[]}`, `{"Skip":"x"}`, `{"hidden":"x"}`,
	`{"a.b":"x"}`, `{"c/d":"x"}`, `{"Untag":1}`, `{"e":1,"pp":2}`, `{"e":"x"}`, `{"pp":"x"}`, `{"pe":1}`, `{"pe":1,"i":"x"}`,
	`{"nope":1}`, `{"nope":1,"i":"x"}`, `{"i":"x","nope":1}`, `{"a\"b":1}`, `{"S":"folded"}`, `{"I":1}`,
	`{"s":"a","s":"b"}`, `{"inner":{"a":1,"p":2},"inner":{"b":"x"}}`, `{"i":1e2,"i":1}`, `{"i":1,"i":1e2}`,
	`{"text":"bad","i":"x"}`, `{"i":"x","text":"bad"}`, `{"j":"bad","text":"bad"}`, `{"slice":[{"a":"x"}],"j":"ute"}`,
	`{"inner":{"a":"x"},"mk":{"bad":"1"},"j":"ok"}`, `{"any":{"a":1,"a":[2]}}`, `{"m":{"a":1,"a":2}}`,
	`{"\u0073":"escaped key"}`, "{\"\xff\":1}", `{"s":"\u0000"}`, "\xef\xbb\xbf{}", `{"m":{"\ud83d\ude00":1}}`,
	`{"i":` + strings.Repeat("9", 400) + `}`, `{"s":"a"}` + "\n\t\r ", "\f{}", `tru`, `nul`, `{"b":fals}`, `-`, `01`, `1.`, `.5`, `1e`, `+1`, `-0.0e+00`,
}

// deepCases are at encoding/json's nesting limit and one past it. They are
// left out of the fuzz seeds, which the fuzzer would spend its time
// minimizing.
var deepCases = []string{
	`{"any":` + strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1) + `}`,
	`{"any":` + strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth) + `}`,
	strings.Repeat(`{"a":`, maxDepth) + "1" + strings.Repeat("}", maxDepth),
	strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1),
}

func TestDecodeAgreesWithEncodingJSON(t *testing.T) {
	typ := reflect.TypeFor[diffAll]()
	d, err := newInputDecoder(typ)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(decodeCases, deepCases...) {
		t.Run(fmt.Sprintf("%.40q", c), func(t *testing.T) {
			checkAgainstReference(t, d, typ, []byte(c))
		})
	}
}

// FuzzDecodeAgreesWithEncodingJSON is the differential fuzz target of the
// argument decoder: on any bytes, the document it builds is
// schemacheck.Parse's, and the value or failure is encoding/json's (keys
// repeated or differing in case aside, where agnara keeps to the document).
func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	typ := reflect.TypeFor[diffAll]()
	d, err := newInputDecoder(typ)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		checkAgainstReference(t, d, typ, args)
	})
}

func TestDecodeRepeatedKeys(t *testing.T) {
	type address struct {
		Street string `json:"street"`
		Zip    string `json:"zip,omitempty"`
	}
	type in struct {
		Name  string            `json:"name"`
		Home  address           `json:"home"`
		Work  *address          `json:"work"`
		Tags  []string          `json:"tags"`
		Attrs map[string]string `json:"attrs"`
	}
	tests := []struct {
		name, args string
		want       in
	}{
		{"a scalar: the last wins, as before", `{"name":"a","name":"b"}`, in{Name: "b"}},
		{"an object: the last replaces the first", `{"home":{"street":"s","zip":"bad!"},"home":{"street":"t"}}`, in{Home: address{Street: "t"}}},
		{"a pointer to an object", `{"work":{"zip":"bad!"},"work":{"street":"t"}}`, in{Work: &address{Street: "t"}}},
		{"a nested key", `{"home":{"zip":"1","zip":"2"}}`, in{Home: address{Zip: "2"}}},
		{"an array", `{"tags":["a","b"],"tags":["c"]}`, in{Tags: []string{"c"}}},
		{"a map", `{"attrs":{"x":"1"},"attrs":{"y":"2"}}`, in{Attrs: map[string]string{"y": "2"}}},
	}
	d, err := newInputDecoder(reflect.TypeFor[in]())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, v, failure, ok := d.pass([]byte(tt.args))
			if !ok || failure != nil {
				t.Fatalf("pass(%s) = ok %v, failure %v", tt.args, ok, failure)
			}
			if diff := cmp.Diff(tt.want, v.Interface()); diff != "" {
				t.Errorf("pass(%s) (-want +got):\n%s", tt.args, diff)
			}
			// The value is what the validated document says.
			var fromDoc in
			b, _ := json.Marshal(doc)
			if err := json.Unmarshal(b, &fromDoc); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fromDoc, v.Interface()); diff != "" {
				t.Errorf("pass(%s): value and validated document differ (-doc +value):\n%s", tt.args, diff)
			}
		})
	}
}

func TestParseDocument(t *testing.T) {
	for _, c := range append(decodeCases, deepCases...) {
		want, err := schemacheck.Parse([]byte(c))
		got, ok := parseDocument([]byte(c))
		if ok != (err == nil) || !reflect.DeepEqual(want, got) {
			t.Errorf("parseDocument(%.60q) = %v, %v; schemacheck.Parse = %v, %v", c, got, ok, want, err)
		}
	}
}

// FuzzParseDocument: parseDocument is schemacheck.Parse, on any bytes.
func FuzzParseDocument(f *testing.F) {
	for _, c := range decodeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err := schemacheck.Parse(b)
		got, ok := parseDocument(b)
		if ok != (err == nil) {
			t.Fatalf("parseDocument(%q) ok = %v, schemacheck.Parse error = %v", b, ok, err)
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("parseDocument(%q) (-schemacheck.Parse +got):\n%s", b, cmp.Diff(want, got))
		}
	})
}

// TestReadInputAllocations bounds what reading one echo call's arguments
// allocates (validation included): one pass, no encoding/json decoder. Two
// decoders, as before ADR 38, cost 14 allocations more.
func TestReadInputAllocations(t *testing.T) {
	type echo struct {
		Message string `json:"message"`
	}
	app := agnara.New("allocs", nil)
	c := app.Capability(func(echo) error { return nil }, &agnara.CapabilityOptions{Name: "echo"})
	plans, err := Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Plan(c)
	args := json.RawMessage(`{"message":"hello, world"}`)
	n := testing.AllocsPerRun(100, func() {
		if _, f := p.readInput(args); f != nil {
			t.Fatal(f)
		}
	})
	t.Logf("%v allocations", n)
	const most = 16
	if n > most {
		t.Errorf("reading the arguments allocates %v times, want at most %d", n, most)
	}
}
