package projection

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// oldCanonical is how the projection sorted a value's keys before
// canonicalJSON: decode, measure the nesting, encode again.
func oldCanonical(raw []byte) ([]byte, error) {
	v, err := schemacheck.Parse(raw)
	if err != nil {
		return nil, err
	}
	if Nesting(v, 0) > MaxDepth {
		return nil, errTooDeep
	}
	return marshalCompact(v)
}

var canonSeeds = []string{
	`null`, `true`, `1`, `-0.5e10`, `"x"`, `[]`, `{}`, `[[],{}]`,
	`{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"b":{"d":[1,{"z":0,"y":1}],"c":null},"a":"é"}`,
	`{"a\u003cb":1,"a":2,"":3}`, `"\u003cscript\u003e \u0026 \u2028 \u2029"`,
	`"\ufffd \u0001 \t \n \" \\ \/ \u00e9 \ud83d\ude00 \ud800"`, `{"\u0062":1,"a":{"b":2,"a":1}}`,
	`1e400`, `12345678901234567890`, `{"k":"` + strings.Repeat("x", 100) + `"}`,
	strings.Repeat("[", 128) + strings.Repeat("]", 128),
	strings.Repeat("[", 129) + strings.Repeat("]", 129),
	strings.Repeat(`{"a":`, 129) + "1" + strings.Repeat("}", 129),
}

// FuzzCanonicalJSON requires canonicalJSON to write exactly what the
// decode-and-encode it replaced writes, for any JSON json.Marshal can
// produce (a json.RawMessage keeps escapes, repeated keys and invalid
// UTF-8 as written, HTML-escaped).
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range canonSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("\"\xff\xfe\""))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		raw, err := json.Marshal(json.RawMessage(b))
		if err != nil {
			return
		}
		want, werr := oldCanonical(raw)
		got, gerr := canonicalJSON(nil, raw)
		if (werr != nil) != (gerr != nil) || (werr != nil && errors.Is(werr, errTooDeep) != errors.Is(gerr, errTooDeep)) {
			t.Fatalf("%s: errors differ: old %v, new %v", raw, werr, gerr)
		}
		if werr == nil && string(got) != string(want) {
			t.Fatalf("%s:\nnew %s\nold %s", raw, got, want)
		}
	})
}

// TestEncodeEnvelopeOnce checks the one-pass envelope against the
// envelope the validating path built, for Go values of every shape.
func TestEncodeEnvelopeOnce(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A []int  `json:"a"`
	}
	type outer struct {
		Name  string            `json:"name"`
		Inner *inner            `json:"inner"`
		M     map[string]inner  `json:"m"`
		Raw   json.RawMessage   `json:"raw"`
		Any   any               `json:"any"`
		Tags  map[string]string `json:"tags,omitempty"`
	}
	values := []any{
		nil, 1, "<&>", []string{"b", "a"},
		outer{Name: "x<y", Inner: &inner{Z: "\u2028", A: []int{3, 1}}, M: map[string]inner{"b": {}, "a": {Z: "é"}},
			Raw: json.RawMessage(`{"b":1,"a":"\u0041"}`), Any: map[string]any{"y": 1.5, "x": []any{nil, true}}},
		map[string]any{"k": strings.Repeat("[", 3)},
	}
	for _, v := range values {
		want, _, werr := oldEnvelopeDoc(v)
		got, gerr := Envelope(v)
		if (werr != nil) != (gerr != nil) || string(got) != string(want) {
			t.Errorf("%#v:\nonce %s (%v)\nold  %s (%v)", v, got, gerr, want, werr)
		}
	}
	deep := any(1)
	for range 200 {
		deep = []any{deep}
	}
	if _, err := Envelope(deep); !errors.Is(err, ErrProjection) {
		t.Errorf("200 levels: %v", err)
	}
	if _, err := Envelope(map[int]string{1: "a"}); !errors.Is(err, ErrProjection) {
		t.Errorf("int keys: %v", err)
	}
}
