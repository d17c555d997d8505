package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/internal/portableschema"
)

const profileTestLimit = 64 << 10

// profileClosedRoot is a valid closed root with extra members (JSON object
// members without braces, may be empty).
func profileClosedRoot(members string) string {
	if members != "" {
		members = "," + members
	}
	return `{"type":"object","additionalProperties":false` + members + `}`
}

// profileInQ puts members into the property schema at /properties/q of a
// closed root.
func profileInQ(members string) string {
	return profileClosedRoot(`"properties":{"q":{` + members + `}}`)
}

// profileAcceptedKeywords has one sample per keyword of the profile, in the
// order the doc comment of checkSchema lists them.
var profileAcceptedKeywords = []struct{ keyword, members string }{
	{"type", `"type":"string"`},
	{"properties", `"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false`},
	{"required", `"type":"object","properties":{"a":{}},"required":["a"],"additionalProperties":false`},
	{"additionalProperties", `"type":"object","additionalProperties":{"type":"integer"}`},
	{"items", `"type":"array","items":{"type":"string"}`},
	{"enum", `"enum":["a",1,null]`},
	{"const", `"const":{"k":[1,2,{"default":3}]}`},
	{"format", `"type":"string","format":"date-time"`},
	{"pattern", `"type":"string","pattern":"^[a-z]+(-[a-z]+)*$"`},
	{"minLength", `"minLength":0`},
	{"maxLength", `"maxLength":10`},
	{"minimum", `"minimum":-1.5`},
	{"maximum", `"maximum":1e3`},
	{"exclusiveMinimum", `"exclusiveMinimum":0`},
	{"exclusiveMaximum", `"exclusiveMaximum":100`},
	{"multipleOf", `"multipleOf":0.5`},
	{"minItems", `"minItems":1`},
	{"maxItems", `"maxItems":3`},
	{"uniqueItems", `"uniqueItems":true`},
	{"title", `"title":"Query"`},
	{"description", `"description":"What to look for."`},
	{"examples", `"examples":["a",{"b":1}]`},
	{"deprecated", `"deprecated":true`},
	{"readOnly", `"readOnly":true`},
	{"writeOnly", `"writeOnly":false`},
	{"anyOf", `"anyOf":[{"type":"string"},{"type":"null"}]`},
	{"oneOf", `"oneOf":[{"type":"integer"},{"type":"string"}]`},
	{"contentEncoding", `"type":"string","contentEncoding":"base64"`},
	{"contentMediaType", `"type":"string","contentMediaType":"application/json"`},
}

// profileRefusedKeywords are keywords outside the profile, each with a value of its
// usual shape.
var profileRefusedKeywords = []struct{ keyword, value string }{
	{"$ref", `"#/$defs/x"`},
	{"$defs", `{"x":{"type":"string"}}`},
	{"definitions", `{"x":{"type":"string"}}`},
	{"$id", `"urn:example:x"`},
	{"$anchor", `"x"`},
	{"$dynamicRef", `"#x"`},
	{"$dynamicAnchor", `"x"`},
	{"$recursiveRef", `"#"`},
	{"$comment", `"note"`},
	{"$vocabulary", `{}`},
	{"default", `"d"`},
	{"x-fastmcp-wrap-result", `true`},
	{"x-order", `1`},
	{"allOf", `[{"type":"string"}]`},
	{"not", `{"type":"null"}`},
	{"if", `{"type":"string"}`},
	{"then", `{"minLength":1}`},
	{"else", `{"maxLength":0}`},
	{"patternProperties", `{"^a":{"type":"string"}}`},
	{"prefixItems", `[{"type":"string"}]`},
	{"dependentSchemas", `{"a":{"required":["b"]}}`},
	{"dependentRequired", `{"a":["b"]}`},
	{"unevaluatedProperties", `false`},
	{"unevaluatedItems", `false`},
	{"propertyNames", `{"pattern":"^a"}`},
	{"contains", `{"type":"string"}`},
	{"minContains", `1`},
	{"maxContains", `1`},
	{"minProperties", `1`},
	{"maxProperties", `1`},
	{"contentSchema", `{"type":"object"}`},
	{"nullable", `true`},
	{"example", `"x"`},
	{"discriminator", `{"propertyName":"kind"}`},
	{"id", `"x"`},
	{"Type", `"string"`},
}

type profileCase struct {
	name     string
	schema   string
	maxBytes int    // 0 means profileTestLimit
	pointer  string // want, for a refusal
	reason   string // a substring of the reason; "" means accepted
}

func profileCases() []profileCase {
	var cs []profileCase
	add := func(c ...profileCase) { cs = append(cs, c...) }

	// Realistic schemas as servers send them.
	add(
		profileCase{name: "Go SDK inferred struct", schema: `{"type":"object","properties":{"id":{"type":"string","description":"the user id"}},"required":["id"],"additionalProperties":false}`},
		profileCase{name: "root $schema 2020-12", schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"q":{"type":"string","minLength":1}},"required":["q"],"additionalProperties":false}`},
		profileCase{name: "Go SDK slice and map fields", schema: `{"type":"object","properties":{"tags":{"type":["null","array"],"items":{"type":"string"}},"labels":{"type":"object","additionalProperties":{"type":"string"}}},"additionalProperties":false}`},
		profileCase{name: "FastMCP wrapped output", schema: `{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"],"x-fastmcp-wrap-result":true}`,
			pointer: "", reason: `vendor keyword "x-fastmcp-wrap-result" is outside the profile`},
		profileCase{name: "pydantic $defs first", schema: `{"$defs":{"Item":{"type":"object","properties":{"n":{"type":"integer"}},"additionalProperties":false}},"type":"object","properties":{"item":{"$ref":"#/$defs/Item"}},"additionalProperties":false}`,
			pointer: "", reason: `keyword "$defs" is outside the profile`},
		profileCase{name: "pydantic optional with default", schema: profileInQ(`"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Q"`),
			pointer: "/properties/q", reason: `keyword "default" is outside the profile`},
		profileCase{name: "zod-to-json-schema draft-07", schema: `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"}`,
			pointer: "", reason: `"$schema" must be "https://json-schema.org/draft/2020-12/schema"`},
	)

	// Rule 4: the keyword set.
	for _, k := range profileAcceptedKeywords {
		add(profileCase{name: "keyword " + k.keyword, schema: profileInQ(k.members)})
	}
	add(profileCase{name: "keywords at the root", schema: profileClosedRoot(`"title":"T","description":"D","examples":[{}],"deprecated":false,"minLength":1`)})
	for _, k := range profileRefusedKeywords {
		member := `"` + k.keyword + `":` + k.value
		add(
			profileCase{name: "refused " + k.keyword + " at root", schema: profileClosedRoot(member),
				pointer: "", reason: `keyword "` + k.keyword + `" is outside the profile`},
			profileCase{name: "refused " + k.keyword + " nested", schema: profileInQ(`"type":"string",` + member),
				pointer: "/properties/q", reason: `keyword "` + k.keyword + `" is outside the profile`},
		)
	}
	add(
		profileCase{name: "refused in items", schema: profileInQ(`"type":"array","items":{"default":1}`),
			pointer: "/properties/q/items", reason: `keyword "default" is outside the profile`},
		profileCase{name: "refused in anyOf branch", schema: profileInQ(`"anyOf":[{"type":"null"},{"$ref":"#"}]`),
			pointer: "/properties/q/anyOf/1", reason: `keyword "$ref" is outside the profile`},
		profileCase{name: "refused in oneOf branch", schema: profileInQ(`"oneOf":[{"type":"null"},{"not":{}}]`),
			pointer: "/properties/q/oneOf/1", reason: `keyword "not" is outside the profile`},
		profileCase{name: "refused in map values", schema: profileInQ(`"type":"object","additionalProperties":{"type":"string","x-len":3}`),
			pointer: "/properties/q/additionalProperties", reason: `vendor keyword "x-len" is outside the profile`},
		profileCase{name: "refused keyword name truncated", schema: profileClosedRoot(`"` + strings.Repeat("k", 10<<10) + `":1`),
			pointer: "", reason: `keyword "` + strings.Repeat("k", 64) + `"... is outside the profile`},
		profileCase{name: "refused vendor keyword name truncated", schema: profileInQ(`"x-` + strings.Repeat("v", 10<<10) + `":1`),
			pointer: "/properties/q", reason: `vendor keyword "x-` + strings.Repeat("v", 62) + `"... is outside the profile`},
	)

	// Rule 9: property names are data.
	add(
		profileCase{name: "property names that look like keywords", schema: profileClosedRoot(`"properties":{"default":{"type":"string"},"$ref":{},"$schema":{},"x-foo":{},"properties":{},"":{}},"required":["default","$ref"]`)},
		profileCase{name: "pointer escapes ~ and /", schema: profileClosedRoot(`"properties":{"a/b~c":{"default":1}}`),
			pointer: "/properties/a~1b~0c", reason: `keyword "default" is outside the profile`},
	)

	// Rule 3: $schema.
	for _, c := range []struct{ name, value string }{
		{"http", `"http://json-schema.org/draft/2020-12/schema"`},
		{"trailing #", `"https://json-schema.org/draft/2020-12/schema#"`},
		{"draft-07", `"http://json-schema.org/draft-07/schema#"`},
		{"draft 2019-09", `"https://json-schema.org/draft/2019-09/schema"`},
		{"case", `"https://JSON-schema.org/draft/2020-12/schema"`},
		{"empty", `""`},
		{"number", `2020`},
		{"null", `null`},
		{"object", `{}`},
	} {
		add(profileCase{name: "root $schema " + c.name, schema: profileClosedRoot(`"$schema":` + c.value),
			pointer: "", reason: `"$schema" must be "https://json-schema.org/draft/2020-12/schema"`})
	}
	add(
		profileCase{name: "root $schema exact", schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","additionalProperties":false}`},
		profileCase{name: "nested $schema", schema: profileInQ(`"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"`),
			pointer: "/properties/q", reason: `nested "$schema"`},
		profileCase{name: "nested $schema in items", schema: profileInQ(`"type":"array","items":{"$schema":"http://json-schema.org/draft-07/schema#"}`),
			pointer: "/properties/q/items", reason: `nested "$schema"`},
		profileCase{name: "nested $schema in anyOf", schema: profileInQ(`"anyOf":[{"$schema":"https://json-schema.org/draft/2020-12/schema"}]`),
			pointer: "/properties/q/anyOf/0", reason: `nested "$schema"`},
	)

	// Rules 2 and 5: closed root, closed objects.
	add(
		profileCase{name: "root without additionalProperties", schema: `{"type":"object","properties":{"a":{"type":"string"}}}`,
			pointer: "", reason: `root must be a closed object`},
		profileCase{name: "root additionalProperties true", schema: `{"type":"object","additionalProperties":true}`,
			pointer: "", reason: `open object`},
		profileCase{name: "root typed map", schema: `{"type":"object","additionalProperties":{"type":"string"}}`,
			pointer: "", reason: `root must be a closed object`},
		profileCase{name: "root without type", schema: `{"properties":{},"additionalProperties":false}`,
			pointer: "", reason: `root "type" must be "object"`},
		profileCase{name: "root type array", schema: `{"type":"array","items":{},"additionalProperties":false}`,
			pointer: "", reason: `root "type" must be "object"`},
		profileCase{name: "root type as array of object", schema: `{"type":["object"],"additionalProperties":false}`,
			pointer: "", reason: `root "type" must be "object"`},
		profileCase{name: "root type nullable object", schema: `{"type":["object","null"],"additionalProperties":false}`,
			pointer: "", reason: `root "type" must be "object"`},
		profileCase{name: "nested object open", schema: profileInQ(`"type":"object","properties":{"a":{}}`),
			pointer: "/properties/q", reason: `open object`},
		profileCase{name: "nested empty object open", schema: profileInQ(`"type":"object"`),
			pointer: "/properties/q", reason: `open object`},
		profileCase{name: "nested additionalProperties true", schema: profileInQ(`"type":"object","additionalProperties":true`),
			pointer: "/properties/q", reason: `open object`},
		profileCase{name: "properties without type open", schema: profileInQ(`"properties":{"a":{}}`),
			pointer: "/properties/q", reason: `open object`},
		profileCase{name: "nullable object open", schema: profileInQ(`"type":["object","null"]`),
			pointer: "/properties/q", reason: `open object`},
		profileCase{name: "object in anyOf open", schema: profileInQ(`"anyOf":[{"type":"object"},{"type":"null"}]`),
			pointer: "/properties/q/anyOf/0", reason: `open object`},
		profileCase{name: "object in items open", schema: profileInQ(`"type":"array","items":{"type":"object","properties":{}}`),
			pointer: "/properties/q/items", reason: `open object`},
		profileCase{name: "object in map values open", schema: profileInQ(`"type":"object","additionalProperties":{"type":"object"}`),
			pointer: "/properties/q/additionalProperties", reason: `open object`},
		profileCase{name: "typed map", schema: profileInQ(`"type":"object","additionalProperties":{"type":"integer","minimum":0}`)},
		profileCase{name: "map of anything", schema: profileInQ(`"type":"object","additionalProperties":{}`)},
		profileCase{name: "nullable closed object", schema: profileInQ(`"type":["object","null"],"properties":{"a":{"type":"string"}},"additionalProperties":false`)},
		profileCase{name: "untyped any value", schema: profileInQ(``)},
	)

	// Rule 1: boolean schemas.
	add(
		profileCase{name: "root true", schema: `true`, pointer: "", reason: "boolean schema"},
		profileCase{name: "root false", schema: `false`, pointer: "", reason: "boolean schema"},
		profileCase{name: "property true", schema: profileClosedRoot(`"properties":{"q":true}`), pointer: "/properties/q", reason: "boolean schema"},
		profileCase{name: "property false", schema: profileClosedRoot(`"properties":{"q":false}`), pointer: "/properties/q", reason: "boolean schema"},
		profileCase{name: "items false", schema: profileInQ(`"type":"array","items":false`), pointer: "/properties/q/items", reason: "boolean schema"},
		profileCase{name: "anyOf true", schema: profileInQ(`"anyOf":[true]`), pointer: "/properties/q/anyOf/0", reason: "boolean schema"},
		profileCase{name: "oneOf false", schema: profileInQ(`"oneOf":[{},false]`), pointer: "/properties/q/oneOf/1", reason: "boolean schema"},
	)

	// Rule 1: one JSON object document.
	add(
		profileCase{name: "empty", schema: ``, pointer: "", reason: "not valid JSON"},
		profileCase{name: "not JSON", schema: `type: object`, pointer: "", reason: "not valid JSON"},
		profileCase{name: "truncated", schema: `{"type":"object","additionalProperties":false`, pointer: "", reason: "not valid JSON"},
		profileCase{name: "trailing comma", schema: `{"type":"object","additionalProperties":false,}`, pointer: "", reason: "not valid JSON"},
		profileCase{name: "two values", schema: profileClosedRoot(``) + ` {}`, pointer: "", reason: "more than one JSON value"},
		profileCase{name: "trailing garbage", schema: profileClosedRoot(``) + ` x`, pointer: "", reason: "not valid JSON"},
		profileCase{name: "root array", schema: `[]`, pointer: "", reason: "must be a JSON object"},
		profileCase{name: "root string", schema: `"object"`, pointer: "", reason: "must be a JSON object"},
		profileCase{name: "root null", schema: `null`, pointer: "", reason: "must be a JSON object"},
		profileCase{name: "property is a string", schema: profileClosedRoot(`"properties":{"q":"string"}`), pointer: "/properties/q", reason: "must be a JSON object"},
		profileCase{name: "invalid UTF-8", schema: profileClosedRoot(`"title":"` + "\xff" + `"`), pointer: "", reason: "not valid UTF-8"},
		profileCase{name: "surrounding whitespace", schema: "\n " + profileClosedRoot(``) + "\n"},
	)

	// Rule 9: duplicate keys.
	add(
		profileCase{name: "duplicate root keyword", schema: `{"type":"object","type":"object","additionalProperties":false}`,
			pointer: "", reason: `duplicate key "type"`},
		profileCase{name: "duplicate by escape", schema: `{"type":"object","\u0074ype":"object","additionalProperties":false}`,
			pointer: "", reason: `duplicate key "type"`},
		profileCase{name: "duplicate additionalProperties", schema: `{"type":"object","additionalProperties":true,"additionalProperties":false}`,
			pointer: "", reason: `duplicate key "additionalProperties"`},
		profileCase{name: "duplicate property", schema: profileClosedRoot(`"properties":{"q":{},"q":{"type":"string"}}`),
			pointer: "/properties", reason: `duplicate key "q"`},
		profileCase{name: "duplicate in const", schema: profileInQ(`"const":{"a":1,"a":2}`),
			pointer: "/properties/q/const", reason: `duplicate key "a"`},
		profileCase{name: "duplicate in examples", schema: profileInQ(`"examples":[{"b":1,"b":1}]`),
			pointer: "/properties/q/examples/0", reason: `duplicate key "b"`},
	)

	// Rule 6: value shapes.
	shapes := []struct{ name, members, reason string }{
		{"type unknown", `"type":"strin"`, `keyword "type" must be a type name`},
		{"type int", `"type":"int"`, `keyword "type" must be a type name`},
		{"type number value", `"type":1`, `keyword "type" must be a type name`},
		{"type empty array", `"type":[]`, `keyword "type" must be a type name`},
		{"type repeated", `"type":["string","string"]`, `keyword "type" must be a type name`},
		{"type array unknown", `"type":["string","date"]`, `keyword "type" must be a type name`},
		{"type array non-string", `"type":["string",1]`, `keyword "type" must be a type name`},
		{"properties array", `"properties":[]`, `keyword "properties" must be an object of schemas`},
		{"additionalProperties string", `"type":"object","additionalProperties":"no"`, `keyword "additionalProperties" must be false or a schema`},
		{"additionalProperties null", `"type":"object","additionalProperties":null`, `keyword "additionalProperties" must be false or a schema`},
		{"items array", `"type":"array","items":[{"type":"string"}]`, `keyword "items" must be a single schema`},
		{"required string", `"required":"a"`, `keyword "required" must be an array of distinct strings`},
		{"required repeated", `"properties":{"a":{}},"additionalProperties":false,"required":["a","a"]`, `keyword "required" must be an array of distinct strings`},
		{"required number", `"required":[1]`, `keyword "required" must be an array of distinct strings`},
		{"enum empty", `"enum":[]`, `keyword "enum" must be a non-empty array`},
		{"enum string", `"enum":"a"`, `keyword "enum" must be a non-empty array`},
		{"anyOf empty", `"anyOf":[]`, `keyword "anyOf" must be a non-empty array of schemas`},
		{"anyOf object", `"anyOf":{}`, `keyword "anyOf" must be a non-empty array of schemas`},
		{"oneOf empty", `"oneOf":[]`, `keyword "oneOf" must be a non-empty array of schemas`},
		{"minimum string", `"minimum":"1"`, `keyword "minimum" must be a number`},
		{"maximum null", `"maximum":null`, `keyword "maximum" must be a number`},
		{"exclusiveMinimum boolean (draft 4)", `"minimum":0,"exclusiveMinimum":true`, `keyword "exclusiveMinimum" must be a number`},
		{"exclusiveMaximum string", `"exclusiveMaximum":"9"`, `keyword "exclusiveMaximum" must be a number`},
		{"minLength negative", `"minLength":-1`, `keyword "minLength" must be an integer from 0 to 2147483647 written as plain digits`},
		{"maxLength fraction", `"maxLength":1.5`, `keyword "maxLength" must be an integer from 0 to 2147483647 written as plain digits`},
		{"minItems 1.0", `"minItems":1.0`, `keyword "minItems" must be an integer from 0 to 2147483647 written as plain digits`},
		{"maxItems exponent", `"maxItems":1e2`, `keyword "maxItems" must be an integer from 0 to 2147483647 written as plain digits`},
		{"maxItems string", `"maxItems":"3"`, `keyword "maxItems" must be an integer from 0 to 2147483647 written as plain digits`},
		{"maxLength past int32", `"maxLength":2147483648`, `keyword "maxLength" must be an integer from 0 to 2147483647`},
		{"minItems past uint64", `"minItems":18446744073709551616`, `keyword "minItems" must be an integer from 0 to 2147483647`},
		{"multipleOf zero", `"multipleOf":0`, `keyword "multipleOf" must be a number greater than 0`},
		{"multipleOf zero fraction", `"multipleOf":0.0e5`, `keyword "multipleOf" must be a number greater than 0`},
		{"multipleOf negative", `"multipleOf":-2`, `keyword "multipleOf" must be a number greater than 0`},
		{"pattern number", `"pattern":5`, `keyword "pattern" must be a string`},
		{"format boolean", `"format":true`, `keyword "format" must be a string`},
		{"title number", `"title":1`, `keyword "title" must be a string`},
		{"description null", `"description":null`, `keyword "description" must be a string`},
		{"contentEncoding number", `"contentEncoding":64`, `keyword "contentEncoding" must be a string`},
		{"contentMediaType array", `"contentMediaType":[]`, `keyword "contentMediaType" must be a string`},
		{"uniqueItems string", `"uniqueItems":"true"`, `keyword "uniqueItems" must be a boolean`},
		{"deprecated number", `"deprecated":1`, `keyword "deprecated" must be a boolean`},
		{"readOnly null", `"readOnly":null`, `keyword "readOnly" must be a boolean`},
		{"writeOnly string", `"writeOnly":"no"`, `keyword "writeOnly" must be a boolean`},
		{"examples object", `"examples":{}`, `keyword "examples" must be an array`},
	}
	for _, s := range shapes {
		add(profileCase{name: "shape " + s.name, schema: profileInQ(s.members), pointer: "/properties/q", reason: s.reason})
	}
	add(
		profileCase{name: "shape multipleOf tiny", schema: profileInQ(`"multipleOf":1e-9`)},
		profileCase{name: "shape counts at int32 max", schema: profileInQ(`"maxLength":2147483647,"maxItems":2147483647,"minItems":0`)},
		profileCase{name: "shape numbers in any notation", schema: profileInQ(`"minimum":-1E+2,"maximum":0.25e1,"exclusiveMaximum":1000`)},
		profileCase{name: "shape type array", schema: profileInQ(`"type":["string","null"]`)},
		profileCase{name: "shape empty required", schema: profileClosedRoot(`"required":[]`)},
		profileCase{name: "shape empty examples", schema: profileInQ(`"examples":[]`)},
		profileCase{name: "shape const null", schema: profileInQ(`"const":null`)},
	)

	// Rule 1: numbers within the range of a double, anywhere.
	add(
		profileCase{name: "numbers at the double limits", schema: profileInQ(`"minimum":-1.7976931348623157e308,"maximum":1.7976931348623157e308,"multipleOf":5e-324,"const":[-0,0.0e-999999999,0E+999999]`)},
		profileCase{name: "zero with an exponent the validator cannot read", schema: profileInQ(`"minimum":0E+99999999999999999999`),
			pointer: "/properties/q/minimum", reason: "number is out of range"},
		profileCase{name: "number overflows", schema: profileInQ(`"maximum":1e309`),
			pointer: "/properties/q/maximum", reason: "number is out of range"},
		profileCase{name: "number overflows negative", schema: profileInQ(`"minimum":-2e308`),
			pointer: "/properties/q/minimum", reason: "number is out of range"},
		profileCase{name: "multipleOf underflows", schema: profileInQ(`"multipleOf":1e-9999999`),
			pointer: "/properties/q/multipleOf", reason: "number is out of range"},
		profileCase{name: "long literal overflows", schema: profileInQ(`"exclusiveMaximum":1` + strings.Repeat("0", 400)),
			pointer: "/properties/q/exclusiveMaximum", reason: "number is out of range"},
		profileCase{name: "long fraction underflows", schema: profileInQ(`"exclusiveMinimum":0.` + strings.Repeat("0", 400) + `1`),
			pointer: "/properties/q/exclusiveMinimum", reason: "number is out of range"},
		profileCase{name: "number in const out of range", schema: profileInQ(`"const":{"n":1e999999}`),
			pointer: "/properties/q/const/n", reason: "number is out of range"},
		profileCase{name: "number in enum out of range", schema: profileInQ(`"enum":[1,-1e400]`),
			pointer: "/properties/q/enum/1", reason: "number is out of range"},
		profileCase{name: "number in examples underflows", schema: profileInQ(`"examples":[2e-324]`),
			pointer: "/properties/q/examples/0", reason: "number is out of range"},
	)

	// Rule 7: depth.
	add(
		profileCase{name: "depth at the limit", schema: profileDeepSchema(profileMaxDepth)},
		profileCase{name: "depth past the limit", schema: profileDeepSchema(profileMaxDepth + 1),
			pointer: "/properties/q" + strings.Repeat("/items", profileMaxDepth), reason: "subschemas nest deeper than 64 levels"},
		profileCase{name: "JSON nesting at the limit", schema: profileDeepConst(profileMaxNesting - 3)},
		profileCase{name: "JSON nesting past the limit", schema: profileDeepConst(profileMaxNesting - 2),
			pointer: "/properties/q/const" + strings.Repeat("/0", profileMaxNesting-3), reason: "deeper than 512 levels"},
	)

	// Rule 1: size, counted on the raw bytes including $schema.
	exact := profilePadded(profileTestLimit)
	add(
		profileCase{name: "size at the limit", schema: exact},
		profileCase{name: "size one past the limit", schema: profilePadded(profileTestLimit + 1),
			pointer: "", reason: "schema is 65537 bytes, over the limit of 65536"},
		profileCase{name: "size counts $schema", schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema",` + profileClosedRoot(``)[1:], maxBytes: len(profileClosedRoot(``)),
			pointer: "", reason: "over the limit"},
		profileCase{name: "negative limit refuses everything", schema: profileClosedRoot(``), maxBytes: -1,
			pointer: "", reason: "over the limit"},
	)

	// Rule 8: compiles as draft 2020-12.
	add(
		profileCase{name: "bad pattern", schema: profileInQ(`"type":"string","pattern":"(["`),
			pointer: "/properties/q", reason: `keyword "pattern" does not compile`},
		profileCase{name: "bad pattern at root", schema: profileClosedRoot(`"pattern":"a{2,1}"`),
			pointer: "", reason: `keyword "pattern" does not compile`},
		profileCase{name: "lookahead pattern (not RE2)", schema: profileInQ(`"type":"array","items":{"type":"string","pattern":"^(?=a)"}`),
			pointer: "/properties/q/items", reason: `keyword "pattern" does not compile`},
		profileCase{name: "backreference pattern (not RE2)", schema: profileInQ(`"anyOf":[{"pattern":"(a)\\1"}]`),
			pointer: "/properties/q/anyOf/0", reason: `keyword "pattern" does not compile`},
	)

	// Pattern budget.
	add(
		profileCase{name: "pattern over the budget alone", schema: profileInQ(`"type":"string","pattern":"^\\p{L}{1,1000}$"`),
			pointer: "/properties/q", reason: `keyword "pattern" is too complex`},
		profileCase{name: "patterns within the budget", schema: profilePatterns(`^[0-9]{1,1000}$`, 25)},
		profileCase{name: "many Unicode class patterns within the budget", schema: profilePatterns(`^[\p{L} .'-]+$`, 300)},
		profileCase{name: "patterns over the budget together", schema: profilePatterns(`^[0-9]{1,1000}$`, 40),
			pointer: profileOverBudget(`^[0-9]{1,1000}$`), reason: `keyword "pattern" is too complex`},
	)
	return cs
}

// profilePatterns returns a schema with n properties, each with pattern.
func profilePatterns(pattern string, n int) string {
	props := make([]string, n)
	for i := range props {
		props[i] = fmt.Sprintf(`"p%d":{"type":"string","pattern":%q}`, i, pattern)
	}
	return profileClosedRoot(`"properties":{` + strings.Join(props, ",") + `}`)
}

// profileOverBudget returns the pointer of the property of profilePatterns
// whose pattern goes over the budget.
func profileOverBudget(pattern string) string {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		panic(err)
	}
	cost := profilePatternCost(re, profileMaxPatternCost)
	return fmt.Sprintf("/properties/p%d", profileMaxPatternCost/cost)
}

// profileDeepSchema returns a schema whose deepest subschema is depth levels
// below the root: /properties/q, then a chain of items.
func profileDeepSchema(depth int) string {
	s := `{}`
	for range depth - 1 {
		s = `{"items":` + s + `}`
	}
	return profileClosedRoot(`"properties":{"q":` + s + `}`)
}

// profileDeepConst returns a schema whose /properties/q/const holds arrays
// nested n deep (the root, properties and q are three more levels).
func profileDeepConst(n int) string {
	return profileInQ(`"const":` + strings.Repeat("[", n) + strings.Repeat("]", n))
}

// profilePadded returns a valid schema of exactly size bytes.
func profilePadded(size int) string {
	s := profileClosedRoot(`"description":""`)
	return profileClosedRoot(`"description":"` + strings.Repeat("d", size-len(s)) + `"`)
}

// TestSchemaProfile checks each rule of the profile.
func TestSchemaProfile(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range profileCases() {
		t.Run(c.name, func(t *testing.T) {
			if seen[c.name] {
				t.Fatalf("duplicate case name")
			}
			seen[c.name] = true
			limit := c.maxBytes
			if limit == 0 {
				limit = profileTestLimit
			}
			err := checkSchema([]byte(c.schema), limit)
			if c.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var pe *profileError
			if !errors.As(err, &pe) {
				t.Fatalf("got %v (%T), want a *profileError", err, err)
			}
			if pe.Pointer != c.pointer {
				t.Errorf("pointer = %q, want %q (%v)", pe.Pointer, c.pointer, err)
			}
			if !strings.Contains(pe.Reason, c.reason) {
				t.Errorf("reason = %q, want it to contain %q", pe.Reason, c.reason)
			}
			if len(pe.Reason) > 200 || !utf8.ValidString(pe.Reason) {
				t.Errorf("reason is not caller-safe (%d bytes): %q", len(pe.Reason), pe.Reason)
			}
		})
	}
}

// TestSchemaProfileKeywords keeps the documented keyword set, the samples
// above and the implementation in step.
func TestSchemaProfileKeywords(t *testing.T) {
	var sampled []string
	for _, k := range profileAcceptedKeywords {
		sampled = append(sampled, k.keyword)
	}
	implemented := portableschema.Keywords()
	slices.Sort(sampled)
	if diff := cmp.Diff(implemented, sampled); diff != "" {
		t.Errorf("keyword samples differ from the portable keyword set (-implemented +sampled):\n%s", diff)
	}
	for _, k := range profileRefusedKeywords {
		if portableschema.Keyword(k.keyword) || k.keyword == "$schema" {
			t.Errorf("refused keyword %q is in the profile", k.keyword)
		}
	}
}

// TestSchemaProfileErrorText checks what a refusal says: the pointer and a
// reason, never a schema value, bounded whatever the remote names are.
func TestSchemaProfileErrorText(t *testing.T) {
	long := strings.Repeat("p", 10<<10)
	tests := []struct {
		name, schema string
		want         string // the whole message, or
		bounded      bool   // only checked for length
		absent       string // must not appear in the message
	}{
		{name: "nested", schema: profileInQ(`"default":"secret-default"`),
			want: `at /properties/q: keyword "default" is outside the profile`, absent: "secret"},
		{name: "root", schema: profileClosedRoot(`"$ref":"#/secret"`),
			want: `at the root: keyword "$ref" is outside the profile`, absent: "secret"},
		{name: "compile error hides the pattern", schema: profileInQ(`"pattern":"secret(["`),
			want: `at /properties/q: keyword "pattern" does not compile as JSON Schema draft 2020-12`, absent: "secret"},
		{name: "shape error hides the value", schema: profileInQ(`"type":"secret"`),
			want: `at /properties/q: keyword "type" must be a type name or a non-empty array of distinct type names`, absent: "secret"},
		{name: "$schema value hidden", schema: profileClosedRoot(`"$schema":"https://secret.example/schema"`),
			want: `at the root: "$schema" must be "https://json-schema.org/draft/2020-12/schema"`, absent: "secret"},
		{name: "long property name", schema: profileClosedRoot(`"properties":{"` + long + `":{"default":1}}`), bounded: true},
		{name: "control characters in property name", schema: profileClosedRoot(`"properties":{"a\u0000\n\u001b[31m":{"default":1}}`),
			want: `at "/properties/a\x00\n\x1b[31m": keyword "default" is outside the profile`},
		{name: "quotes in property name", schema: profileClosedRoot(`"properties":{"say \"hi\"":{"default":1}}`),
			want: `at "/properties/say \"hi\"": keyword "default" is outside the profile`},
		{name: "long duplicate key", schema: profileInQ(`"const":{"` + long + `":1,"` + long + `":2}`),
			want: `at /properties/q/const: duplicate key "` + strings.Repeat("p", 64) + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSchema([]byte(tt.schema), 1<<20)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if tt.want != "" && msg != tt.want {
				t.Errorf("message:\n got %s\nwant %s", msg, tt.want)
			}
			if tt.absent != "" && strings.Contains(msg, tt.absent) {
				t.Errorf("message shows a schema value: %s", msg)
			}
			if tt.bounded && len(msg) > 200 {
				t.Errorf("message is %d bytes: %.300s", len(msg), msg)
			}
		})
	}
	// The pointer itself stays exact, for the caller's own use.
	var pe *profileError
	if err := checkSchema([]byte(profileClosedRoot(`"properties":{"`+long+`":{"default":1}}`)), 1<<20); !errors.As(err, &pe) || pe.Pointer != "/properties/"+long {
		t.Errorf("long pointer not kept exactly: %v", err)
	}
}

// TestSchemaProfileCompilerPanic checks that a panic in the compiler, on
// input the profile rules would have kept from it, is a refusal and not a
// crash of the host.
func TestSchemaProfileCompilerPanic(t *testing.T) {
	// The 2020-12 metaschema checks that multipleOf > 0; the validator
	// cannot read 1e-9999999 as a number and dereferences nil.
	perr := profileCompile([]byte(`{"multipleOf":1e-9999999}`))
	if perr == nil || perr.Reason != profileCompilerPanicked {
		t.Fatalf("got %v, want the compiler failure refused", perr)
	}
}

// TestSchemaProfileGoSDK checks the schemas the official Go SDK infers for
// struct-typed tools, as a client lists them: inside the profile, except
// that the SDK describes an interface-typed field with the boolean schema
// true, which the profile refuses.
func TestSchemaProfileGoSDK(t *testing.T) {
	type filter struct {
		Name   string `json:"name" jsonschema:"substring of the name"`
		Active *bool  `json:"active,omitempty"`
	}
	type in struct {
		ID     string            `json:"id" jsonschema:"the user id"`
		Limit  int               `json:"limit,omitempty"`
		Small  uint8             `json:"small,omitempty"`
		Score  float64           `json:"score,omitempty"`
		Tags   []string          `json:"tags,omitempty"`
		Pair   [2]int            `json:"pair"`
		Filter *filter           `json:"filter,omitempty"`
		Labels map[string]string `json:"labels,omitempty"`
	}
	type item struct {
		ID   string `json:"id"`
		Seen bool   `json:"seen"`
	}
	type out struct {
		Items []item `json:"items"`
		Total int    `json:"total"`
	}
	type loose struct {
		Extra any `json:"extra,omitempty"`
	}
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v0.0.1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "find", Description: "Find users."},
		func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, out, error) {
			return nil, out{}, nil
		})
	mcp.AddTool(server, &mcp.Tool{Name: "loose", Description: "Takes anything."},
		func(context.Context, *mcp.CallToolRequest, loose) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "v0.0.1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	if tools["find"] == nil || tools["loose"] == nil {
		t.Fatalf("listed %d tools, want find and loose", len(res.Tools))
	}
	check := func(schema any) error {
		t.Helper()
		raw, err := json.Marshal(schema)
		if err != nil {
			t.Fatal(err)
		}
		return checkSchema(raw, profileTestLimit)
	}
	if err := check(tools["find"].InputSchema); err != nil {
		t.Errorf("find: input schema refused: %v", err)
	}
	if tools["find"].OutputSchema == nil {
		t.Error("find: no output schema listed")
	} else if err := check(tools["find"].OutputSchema); err != nil {
		t.Errorf("find: output schema refused: %v", err)
	}
	var pe *profileError
	if err := check(tools["loose"].InputSchema); !errors.As(err, &pe) || pe.Pointer != "/properties/extra" || !strings.Contains(pe.Reason, "boolean schema") {
		t.Errorf("loose: input schema: got %v, want a boolean schema refused at /properties/extra", err)
	}
}

// BenchmarkSchemaProfile measures a typical tool schema and schemas of the
// full 64 KiB built to be expensive for the compiler.
func BenchmarkSchemaProfile(b *testing.B) {
	many := func(member string) string {
		var sb strings.Builder
		sb.WriteString(`{"type":"object","additionalProperties":false,"properties":{`)
		for i := 0; ; i++ {
			next := fmt.Sprintf(`"p%d":{%s}`, i, member)
			if sb.Len()+len(next)+3 > profileTestLimit {
				break
			}
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteString(next)
		}
		sb.WriteString(`}}`)
		return sb.String()
	}
	for _, bm := range []struct{ name, schema string }{
		{"typical", `{"type":"object","properties":{"id":{"type":"string","description":"the user id"},"limit":{"type":"integer","minimum":1,"maximum":100}},"required":["id"],"additionalProperties":false}`},
		{"bounds", many(`"minimum":-1.7976931348623157e308,"maximum":1e308,"multipleOf":5e-324`)},
		{"patterns at the budget", profilePatterns(`^[0-9]{1,1000}$`, profileMaxPatternCost/2003)},
		{"patterns over the budget", many(`"pattern":"^(a|b|c)[0-9]{1,1000}$"`)},
		{"enums", many(`"enum":[1e-300,2e-300,3e-300,4e-300,5e-300]`)},
	} {
		refuse := strings.HasSuffix(bm.name, "over the budget")
		if err := checkSchema([]byte(bm.schema), profileTestLimit); (err != nil) != refuse {
			b.Fatalf("%s: %v", bm.name, err)
		}
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := checkSchema([]byte(bm.schema), profileTestLimit); (err != nil) != refuse {
					b.Fatal(err)
				}
			}
		})
	}
}
