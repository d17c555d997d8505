package schemacheck

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestCompile(t *testing.T) {
	tests := []struct {
		name, schema string
		valid        []string // instances that must pass
		invalid      []string // instances that must fail
		wantErr      string   // the schema itself is refused
	}{
		{name: "draft 2020-12 by default", schema: `{"prefixItems":[{"type":"string"}],"items":false}`,
			valid: []string{`["a"]`}, invalid: []string{`["a",1]`, `[1]`}},
		{name: "formats are asserted", schema: `{"type":"string","format":"email"}`,
			valid: []string{`"a@example.com"`}, invalid: []string{`"not an address"`}},
		{name: "date-time format", schema: `{"type":"string","format":"date-time"}`,
			valid: []string{`"2026-01-02T03:04:05Z"`}, invalid: []string{`"yesterday"`}},
		{name: "content encodings are asserted", schema: `{"type":"string","contentEncoding":"base64"}`,
			valid: []string{`"aGk="`}, invalid: []string{`"%%%"`}},
		{name: "big integers keep their precision", schema: `{"type":"integer","maximum":9007199254740993}`,
			valid: []string{`9007199254740993`}, invalid: []string{`9007199254740994`}},
		{name: "local references resolve", schema: `{"$defs":{"n":{"type":"integer"}},"$ref":"#/$defs/n"}`,
			valid: []string{`1`}, invalid: []string{`"1"`}},
		{name: "external references are not loaded", schema: `{"$ref":"https://example.com/s.json"}`, wantErr: "external schema references are not allowed"},
		{name: "file references are not loaded", schema: `{"$ref":"file:///etc/passwd"}`, wantErr: "external schema references are not allowed"},
		{name: "not JSON", schema: `{`, wantErr: "schema is not valid JSON"},
		{name: "trailing data", schema: `{} {}`, wantErr: "schema is not valid JSON"},
		{name: "breaks the meta-schema", schema: `{"type":"strin"}`, wantErr: "jsonschema"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := Compile([]byte(tt.schema))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Compile(%s) = %v, want an error containing %q", tt.schema, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Compile(%s) = %v", tt.schema, err)
			}
			for _, in := range tt.valid {
				doc, err := Parse([]byte(in))
				if err != nil {
					t.Fatal(err)
				}
				if err := v.Validate(doc); err != nil {
					t.Errorf("%s refused %s: %v", tt.schema, in, err)
				}
			}
			for _, in := range tt.invalid {
				doc, err := Parse([]byte(in))
				if err != nil {
					t.Fatal(err)
				}
				if v.Validate(doc) == nil {
					t.Errorf("%s accepted %s", tt.schema, in)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    any
		wantErr bool
	}{
		{in: `1.50`, want: json.Number("1.50")},
		{in: `9007199254740993`, want: json.Number("9007199254740993")},
		{in: ` "s" `, want: "s"},
		{in: `null`, want: nil},
		{in: `1 2`, wantErr: true},
		{in: `{"a":1}x`, wantErr: true},
		{in: ``, wantErr: true},
	}
	for _, tt := range tests {
		got, err := Parse([]byte(tt.in))
		if tt.wantErr {
			if err == nil {
				t.Errorf("Parse(%q) = %v, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", tt.in, got, err, tt.want)
		}
	}
}

// checkCases are schemas and the problems Check finds in them (Message is
// matched as a substring).
var checkCases = []struct {
	name, schema string
	want         []Problem
}{
	{"valid", `{"type":"object","properties":{"s":{"type":"string","minLength":1,"maxLength":3}}}`, nil},
	{"equal inclusive bounds are satisfiable", `{"minimum":3,"maximum":3,"minLength":2,"maxLength":2}`, nil},
	{"exclusive bounds with room", `{"exclusiveMinimum":1,"exclusiveMaximum":1.5}`, nil},
	{"negative maxLength", `{"properties":{"n":{"maxLength":-3}}}`, []Problem{{"/properties/n/maxLength", "minimum: got -3, want 0"}}},
	{"unknown type", `{"type":"strin"}`, []Problem{{"/type", "value must be one of"}}},
	{"bad pattern", `{"pattern":"("}`, []Problem{{"/pattern", "is not valid regex"}}},
	{"minimum as a string", `{"minimum":"3"}`, []Problem{{"/minimum", "want number"}}},
	{"required not a list", `{"required":"a"}`, []Problem{{"/required", "want array"}}},
	{"minimum above maximum", `{"minimum":10,"maximum":1}`, []Problem{{"/minimum", "minimum 10 is greater than maximum 1"}}},
	{"decimal bounds compared exactly", `{"minimum":0.30000000000000004,"maximum":0.3}`, []Problem{{"/minimum", "is greater than maximum"}}},
	{"minLength above maxLength", `{"minLength":5,"maxLength":2}`, []Problem{{"/minLength", "minLength 5 is greater than maxLength 2"}}},
	{"minItems above maxItems", `{"minItems":2,"maxItems":1}`, []Problem{{"/minItems", "minItems 2"}}},
	{"minProperties above maxProperties", `{"minProperties":2,"maxProperties":1}`, []Problem{{"/minProperties", "minProperties 2"}}},
	{"minContains above maxContains", `{"minContains":2,"maxContains":1}`, []Problem{{"/minContains", "minContains 2"}}},
	{"exclusiveMinimum at maximum", `{"exclusiveMinimum":5,"maximum":5}`, []Problem{{"/exclusiveMinimum", "exclusiveMinimum 5 is equal to maximum 5"}}},
	{"minimum at exclusiveMaximum", `{"minimum":5,"exclusiveMaximum":5}`, []Problem{{"/minimum", "equal to exclusiveMaximum 5"}}},
	{"equal exclusive bounds", `{"exclusiveMinimum":1,"exclusiveMaximum":1}`, []Problem{{"/exclusiveMinimum", "equal to exclusiveMaximum"}}},
	{"in properties", `{"properties":{"a/b":{"minimum":2,"maximum":1}}}`, []Problem{{"/properties/a~1b/minimum", "greater than"}}},
	{"in items", `{"items":{"minLength":2,"maxLength":1}}`, []Problem{{"/items/minLength", "greater than"}}},
	{"in additionalProperties", `{"additionalProperties":{"minLength":2,"maxLength":1}}`, []Problem{{"/additionalProperties/minLength", "greater than"}}},
	{"in anyOf", `{"anyOf":[{"type":"null"},{"minimum":2,"maximum":1}]}`, []Problem{{"/anyOf/1/minimum", "greater than"}}},
	{"in oneOf, allOf, prefixItems, not", `{"oneOf":[{"minimum":2,"maximum":1}],"allOf":[{"minItems":3,"maxItems":1}],"prefixItems":[{"minLength":9,"maxLength":1}],"not":{"minimum":5,"maximum":4}}`,
		[]Problem{{"/allOf/0/minItems", "greater"}, {"/not/minimum", "greater"}, {"/oneOf/0/minimum", "greater"}, {"/prefixItems/0/minLength", "greater"}}},
	{"in $defs", `{"$defs":{"x":{"minimum":2,"maximum":1}}}`, []Problem{{"/$defs/x/minimum", "greater than"}}},
	{"meta and bounds together, by pointer", `{"properties":{"a":{"minimum":2,"maximum":1},"b":{"maxLength":-1}}}`,
		[]Problem{{"/properties/a/minimum", "greater than"}, {"/properties/b/maxLength", "want 0"}}},
	{"bad $id", `{"$id":"%zz"}`, []Problem{{"/$id", "is not valid uri-reference"}}},
	{"bad $ref", `{"$ref":"#/%zz"}`, []Problem{{"/$ref", "is not valid uri-reference"}}},
	{"meta and bounds together, nested", `{"properties":{"a":{"type":"strin"},"b":{"minLength":3,"maxLength":1}}}`,
		[]Problem{{"/properties/a/type", "value must be one of"}, {"/properties/b/minLength", "greater than"}}},
}

func TestCheck(t *testing.T) {
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			wantProblems(t, Check(doc), tt.want)
		})
	}
}

func wantProblems(t *testing.T, got, want []Problem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("problems = %+v, want %d: %+v", got, len(want), want)
	}
	for i, w := range want {
		if got[i].Pointer != w.Pointer || !strings.Contains(got[i].Message, w.Message) {
			t.Errorf("problem %d = %+v, want pointer %q and a message containing %q", i, got[i], w.Pointer, w.Message)
		}
	}
}

// CompileChecked finds what Check finds, validating against the
// meta-schema once, and compiles the schemas without problems.
func TestCompileChecked(t *testing.T) {
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := Parse([]byte(tt.schema))
			if err != nil {
				t.Fatal(err)
			}
			v, got, err := CompileChecked([]byte(tt.schema), doc)
			if err != nil {
				t.Fatalf("CompileChecked(%s): %v", tt.schema, err)
			}
			wantProblems(t, got, tt.want)
			if (v == nil) != (len(tt.want) > 0) {
				t.Errorf("validator = %v with %d problems: want one exactly when there are none", v, len(tt.want))
			}
		})
	}
	// A schema the meta-schema accepts but that does not compile: its
	// error is returned.
	const remote = `{"$ref":"https://example.com/s.json"}`
	doc, _ := Parse([]byte(remote))
	if v, ps, err := CompileChecked([]byte(remote), doc); v != nil || len(ps) != 0 || err == nil || !strings.Contains(err.Error(), "external schema references are not allowed") {
		t.Errorf("CompileChecked(%s) = %v, %v, %v; want the compile's error", remote, v, ps, err)
	}
}

func TestCheckBoundsReadsEncodingJSONNumbers(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{"minimum":2,"maximum":1}`), &doc); err != nil {
		t.Fatal(err)
	}
	if got := CheckBounds(doc); len(got) != 1 || got[0].Pointer != "/minimum" {
		t.Errorf("CheckBounds = %+v, want the minimum above the maximum", got)
	}
}

func TestCompileShared(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"shared_test":{"type":"string"}}}`)
	first, err := CompileShared(schema)
	if err != nil {
		t.Fatal(err)
	}
	again, err := CompileShared([]byte(string(schema)))
	if err != nil || again != first {
		t.Errorf("CompileShared of the same text = %p, %v; want the validator compiled first, %p", again, err, first)
	}
	other, err := CompileShared([]byte(`{"type":"object","properties":{"shared_test":{"type":"integer"}}}`))
	if err != nil || other == first {
		t.Errorf("CompileShared of another schema = %p, %v; want a validator of its own", other, err)
	}
	if _, err := CompileShared([]byte(`{"$ref":"https://example.com/x"}`)); err == nil {
		t.Error("CompileShared accepted an external reference")
	}

	// Concurrent callers agree on one validator.
	concurrent := []byte(`{"type":"object","properties":{"concurrent_test":{"type":"string"}}}`)
	var (
		wg  sync.WaitGroup
		got [16]any
	)
	for i := range got {
		wg.Go(func() {
			v, err := CompileShared(concurrent)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("concurrent callers got different validators")
		}
	}
}

func TestCompileSharedIsBounded(t *testing.T) {
	for i := range maxShared + 10 {
		if _, err := CompileShared(fmt.Appendf(nil, `{"const":%d}`, i)); err != nil {
			t.Fatal(err)
		}
		shared.Lock()
		n := len(shared.m)
		shared.Unlock()
		if n > maxShared {
			t.Fatalf("the cache holds %d validators, more than %d", n, maxShared)
		}
	}
}
