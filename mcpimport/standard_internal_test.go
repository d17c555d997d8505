package mcpimport

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// Schemas shaped like those widely used public servers publish: generators
// such as zod-to-json-schema (draft-07 "$schema", "definitions"), pydantic
// (FastMCP; "$defs", "default", "title", open objects) and hand-written
// TypeScript servers (no "$schema", no additionalProperties).
var standardAccepted = []struct{ name, schema string }{
	{"draft-07 open object with defaults", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"path":{"type":"string","description":"File path"},"limit":{"type":"integer","default":10,"minimum":1}},"required":["path"]}`},
	{"draft-07 without fragment", `{"$schema":"http://json-schema.org/draft-07/schema","type":"object"}`},
	{"2020-12 over http with fragment", `{"$schema":"http://json-schema.org/draft/2020-12/schema#","type":"object"}`},
	{"zod-to-json-schema closed, definitions", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"owner":{"$ref":"#/definitions/name"},"repo":{"$ref":"#/definitions/name"}},"required":["owner","repo"],"additionalProperties":false,"definitions":{"name":{"type":"string","minLength":1}}}`},
	{"pydantic $defs", `{"type":"object","$defs":{"Item":{"type":"object","properties":{"name":{"type":"string","title":"Name"},"qty":{"type":"integer","default":1}},"required":["name"],"title":"Item"}},"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/Item"},"title":"Items"}},"required":["items"],"title":"createArguments"}`},
	{"pydantic optional anyOf null", `{"type":"object","properties":{"cursor":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null}},"title":"listArguments"}`},
	{"2019-09 with $defs and $anchor", `{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","$defs":{"id":{"$anchor":"id","type":"string"}},"properties":{"a":{"$ref":"#id"},"b":{"$ref":"#/$defs/id"}}}`},
	{"2020-12 recursive", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}}}`},
	{"boolean schemas, vendor keywords, conditionals", `{"type":"object","additionalProperties":true,"x-vendor":{"a":1},"properties":{"kind":{"enum":["a","b"]},"any":true},"if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["any"]},"allOf":[{"not":{"required":["forbidden"]}}],"patternProperties":{"^x_":{"type":"string"}}}`},
	{"draft-07 items array and dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"pair":{"type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false}},"dependencies":{"a":["b"],"c":{"required":["d"]}}}`},
	{"property names that look like keywords", `{"type":"object","properties":{"$id":{"type":"string"},"$ref":{"type":"string"},"$schema":{"type":"string"}}}`},
}

func TestStandardProfileAccepts(t *testing.T) {
	for _, tc := range standardAccepted {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkStandardSchema([]byte(tc.schema), profileTestLimit); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// The strict profile still refuses every one of them: opting in is per
// binding, and nothing changes for a binding that does not.
func TestStrictProfileStillRefusesStandardSchemas(t *testing.T) {
	for _, tc := range standardAccepted {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkSchema([]byte(tc.schema), profileTestLimit); err == nil {
				t.Fatal("the strict profile accepted it")
			}
		})
	}
}

func TestStandardProfileRefuses(t *testing.T) {
	deep := `{"type":"object","properties":{"a":` + strings.Repeat(`{"items":`, 65) + `{}` + strings.Repeat(`}`, 65) + `}}`
	var props []string
	for i := range 40 {
		props = append(props, `"a`+strconv.Itoa(i)+`":{"pattern":"[0-9]{1,1000}"}`)
	}
	manyPatterns := strings.Join(props, ",")
	nested := `{"type":"object","examples":[` + strings.Repeat(`[`, 520) + strings.Repeat(`]`, 520) + `]}`
	for _, tc := range []struct {
		name, schema string
		limit        int
		pointer      string // "-": not checked (long)
		reason       string // a substring of the reason
	}{
		{"http $ref", `{"type":"object","properties":{"a":{"$ref":"http://example.com/schema.json"}}}`, 0, "/properties/a", "external reference"},
		{"https $ref with fragment", `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json#/$defs/x"}}}`, 0, "/properties/a", "external reference"},
		{"file $ref", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, 0, "/properties/a", "external reference"},
		{"relative $ref", `{"type":"object","properties":{"a":{"$ref":"other.json#/a"}}}`, 0, "/properties/a", "external reference"},
		{"external $ref in $defs", `{"type":"object","$defs":{"x":{"$ref":"urn:example:x"}}}`, 0, "/$defs/x", "external reference"},
		{"external $dynamicRef", `{"type":"object","items":{"$dynamicRef":"https://example.com/meta#node"}}`, 0, "/items", "external reference"},
		{"non-string $ref", `{"type":"object","properties":{"a":{"$ref":5}}}`, 0, "/properties/a", "external reference"},
		{"$id", `{"$id":"https://example.com/tool.json","type":"object"}`, 0, "", `keyword "$id"`},
		{"nested $id", `{"type":"object","$defs":{"x":{"$id":"x.json"}}}`, 0, "/$defs/x", `keyword "$id"`},
		{"nested $schema", `{"type":"object","properties":{"a":{"$schema":"http://json-schema.org/draft-07/schema#"}}}`, 0, "/properties/a", `nested "$schema"`},
		{"draft-04", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`, 0, "", "unknown dialect"},
		{"draft-06", `{"$schema":"http://json-schema.org/draft-06/schema#","type":"object"}`, 0, "", "unknown dialect"},
		{"custom meta-schema", `{"$schema":"https://example.com/meta","type":"object"}`, 0, "", "unknown dialect"},
		{"non-string $schema", `{"$schema":7,"type":"object"}`, 0, "", "unknown dialect"},
		{"unresolvable fragment", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, 0, "", "does not resolve within the document"},
		{"unresolvable anchor", `{"type":"object","properties":{"a":{"$ref":"#nowhere"}}}`, 0, "", "does not resolve within the document"},
		{"latest meta-schema", `{"$schema":"https://json-schema.org/schema","type":"object"}`, 0, "", "unknown dialect"},
		{"root not an object schema", `{"type":"string"}`, 0, "", `root "type" must be "object"`},
		{"root boolean", `true`, 0, "", "must be a JSON object"},
		{"over the size limit", `{"type":"object","description":"` + strings.Repeat("x", 100) + `"}`, 64, "", "over the limit of 64"},
		{"subschemas too deep", deep, 0, "-", "nest deeper than 64"},
		{"JSON nested too deep", nested, 0, "-", "deeper than 512 levels"},
		{"duplicate key", `{"type":"object","type":"object"}`, 0, "", "duplicate key"},
		{"number out of range", `{"type":"object","default":1e999}`, 0, "/default", "out of range"},
		{"pattern budget", `{"type":"object","properties":{` + manyPatterns + `}}`, 0, "-", "too complex"},
		{"pattern budget in patternProperties", `{"type":"object","patternProperties":{"\\p{L}{1,1000}":{}}}`, 0, "", "too complex"},
		{"lookahead pattern", `{"type":"object","properties":{"a":{"type":"string","pattern":"^(?=a)"}}}`, 0, "/properties/a", "does not compile"},
		{"invalid keyword value", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"minLength":-1}}}`, 0, "/properties/a", "does not compile as JSON Schema draft-07"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			limit := tc.limit
			if limit == 0 {
				limit = profileTestLimit
			}
			err := checkStandardSchema([]byte(tc.schema), limit)
			var pe *profileError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v, want a *profileError", err)
			}
			if tc.pointer != "-" && pe.Pointer != tc.pointer || !strings.Contains(pe.Reason, tc.reason) {
				t.Fatalf("got %q at %q, want %q at %q", pe.Reason, pe.Pointer, tc.reason, tc.pointer)
			}
		})
	}
}
