package mcpimport

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// documentCases are structured contents as upstreams send them: every JSON
// kind, the numbers encoding/json writes in each of its forms, unicode,
// nesting.
var documentCases = []string{
	`{}`, `[]`, `null`, `true`, `"s"`, `0`, `-0`, `1`, `-1.5`, `3.14159`,
	`{"n":12345678901234567890,"m":1e21,"k":1e20,"small":1e-6,"smaller":1e-7,"tiny":5e-324,"big":1.7976931348623157e308}`,
	`{"a":[1,2.5,-3e-9,"x",null,false,{"b":{}}],"c":"é\u2028\u00e9😀","d\u0000e":"<&>"}`,
	`{"lone":"\ud800","bad":"a\udc00b"}`,
	`{"nested":` + strings.Repeat(`[`, 200) + strings.Repeat(`]`, 200) + `}`,
	`{"dup":1,"dup":2}`,
	`{"message":"hello, world"}`,
}

// TestDocumentOfIsParse: the validator's form of a decoded structured
// content, built from the decoded tree, is the value schemacheck.Parse
// decodes from its encoding, for every kind of value.
func TestDocumentOfIsParse(t *testing.T) {
	for _, c := range documentCases {
		checkDocument(t, []byte(c))
	}
	for _, f := range []float64{0.1, 1e-7, 1.5e-10, 123456789e-15, 1e21, 1.5e300, -2e-8, 100, 1e6, 99999999999999999999.0, math.SmallestNonzeroFloat64, math.MaxFloat64} {
		b, _ := json.Marshal(f)
		checkDocument(t, b)
	}
	// What the SDK's decoder never makes (it repairs strings that are not
	// UTF-8), and the encoder would: built by hand.
	checkValue(t, "a string not UTF-8", map[string]any{"s": "a\xffb"})
	checkValue(t, "a key not UTF-8", map[string]any{"k\xfe": true})
	checkValue(t, "nil slice and map", map[string]any{"s": []any(nil), "m": map[string]any(nil)})
	checkValue(t, "other types", map[string]any{"i": 3, "f": float32(1.5), "n": json.Number("7")})
}

func checkDocument(t *testing.T, data []byte) {
	t.Helper()
	var v any
	if unmarshal(data, &v) != nil {
		return // the SDK's decoder refuses it: no result to check
	}
	checkValue(t, string(data), v)
}

func checkValue(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		return // project refuses it before checking
	}
	want, werr := schemacheck.Parse(b)
	got, gerr := documentOf(v, b)
	// reflect.DeepEqual: cmp takes exponential time on deep nesting.
	if (werr != nil) != (gerr != nil) || !reflect.DeepEqual(got, want) {
		t.Errorf("%s: documentOf = %#v, %v; Parse = %#v, %v", name, got, gerr, want, werr)
	}
}

// FuzzDocumentOf: the same, for generated structured contents.
func FuzzDocumentOf(f *testing.F) {
	for _, c := range documentCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkDocument(t, data) })
}
