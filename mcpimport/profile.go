package mcpimport

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agnara-go/agnara/internal/portableschema"
	"github.com/agnara-go/agnara/internal/schemacheck"
)

// The schema profile agnara.schema-profile/v1.
const (
	// profileDialect is the only "$schema" the profile accepts, and only at
	// the root.
	profileDialect = "https://json-schema.org/draft/2020-12/schema"
	// profileMaxDepth is how deep subschemas may nest below the root.
	profileMaxDepth = 64
	// profileMaxNesting bounds JSON nesting (objects and arrays, data in
	// const, enum and examples included), so that parsing is bounded too.
	profileMaxNesting = 512
	// profileMaxCount bounds minLength, maxLength, minItems and maxItems:
	// the validator reads them into an int.
	profileMaxCount = math.MaxInt32
	// profileMaxPatternCost bounds the patterns of one schema together, in
	// units of about one compiled regular-expression instruction (see
	// profilePatternCost). Compiling is linear in that size but not cheap:
	// without a bound, 64 KiB of patterns such as "[0-9]{1,1000}" take
	// seconds and a gigabyte of allocations to compile.
	profileMaxPatternCost = 1 << 16
)

var profileTypes = map[string]bool{
	"object": true, "array": true, "string": true, "number": true,
	"integer": true, "boolean": true, "null": true,
}

// profileError says where a schema leaves the profile and why.
type profileError struct {
	// Pointer is the RFC 6901 JSON Pointer of the offending subschema ("" for
	// the root, and for a document that is too large or not JSON). For a
	// problem found while parsing, it is the place in the document: the
	// object that repeats a key, the number out of range, the value nested
	// too deep. It is exact, so it may be long: Error renders it bounded.
	Pointer string
	// Reason is caller-safe: it names keywords and keys, never values, and
	// every remote-supplied name in it is quoted and truncated to 64 bytes.
	Reason string
}

// Error returns "at <pointer>: <reason>" ("at the root: ..." for "").
func (e *profileError) Error() string {
	return "at " + profilePointerText(e.Pointer) + ": " + e.Reason
}

// profilePointerText renders a pointer for a message: as is when it is short
// and printable, quoted and truncated otherwise (property names in it are
// remote-supplied).
func profilePointerText(p string) string {
	if p == "" {
		return "the root"
	}
	if len(p) <= 128 && strings.IndexFunc(p, func(r rune) bool { return !strconv.IsPrint(r) || r == '"' }) < 0 {
		return p
	}
	return quote(p)
}

// checkSchema checks one remote schema (an input or output schema of a
// selected tool) against the schema profile agnara.schema-profile/v1. It
// returns nil or a *profileError. Nothing is stripped, defaulted or
// rewritten: a schema is accepted as received or refused.
//
// The profile:
//
//   - The schema is one JSON document of at most maxBytes bytes as received
//     (a root "$schema" counts; maxBytes <= 0 refuses everything), valid
//     UTF-8, with no duplicate object key anywhere (data in const, enum and
//     examples included) and at most 512 levels of JSON nesting.
//   - Every schema in it, the root included, is a JSON object: the boolean
//     schemas true and false are refused everywhere. ("additionalProperties":
//     false is a keyword value, not a schema, and is allowed.)
//   - Every number in it, data included, is within the range of an IEEE 754
//     double (RFC 8259 section 6): it neither overflows to infinity nor,
//     unless it is 0, underflows to 0, and its exponent is one the
//     validator can read (not 0e99999999999999999999). The validator
//     computes with exact rationals: a literal such as 1e-999999 would cost
//     it a noticeable time on every use, and 1e-9999999 makes it fail.
//   - The root has "type": "object" (a string, not an array) and
//     "additionalProperties": false.
//   - "$schema" may appear only at the root, and only as exactly
//     "https://json-schema.org/draft/2020-12/schema". Any other value (http,
//     a trailing "#", another draft, a non-string) is refused, and so is
//     "$schema" in any subschema.
//   - Only these keywords are allowed, at every level: type, properties,
//     required, additionalProperties, items, enum, const, format, pattern,
//     minLength, maxLength, minimum, maximum, exclusiveMinimum,
//     exclusiveMaximum, multipleOf, minItems, maxItems, uniqueItems, title,
//     description, examples, deprecated, readOnly, writeOnly, anyOf, oneOf,
//     contentEncoding, contentMediaType. Any other keyword is refused and
//     named: among them $ref, $defs, definitions, $id, $anchor,
//     $dynamicRef, $comment, default, vendor keywords (x-*), allOf, not,
//     if/then/else, patternProperties, prefixItems, dependentSchemas,
//     unevaluatedProperties and propertyNames. Names inside "properties"
//     are property names, not keywords: a property may be called
//     "default" or "$ref".
//   - Objects are closed: a subschema whose type is "object" (or a type
//     array that contains "object"), or that has "properties", must have
//     "additionalProperties" false or a schema (a map with typed values).
//     "additionalProperties": true, or none, is an open object and is
//     refused. A subschema with no type and no properties (such as {})
//     accepts any value and is allowed.
//   - Keyword values have their JSON Schema shape, checked strictly: type
//     is one of object, array, string, number, integer, boolean, null, or
//     a non-empty array of distinct such names; properties is an object
//     of schemas; additionalProperties is false or a schema; items is one
//     schema (not an array); required is an array of distinct strings;
//     enum is a non-empty array; anyOf and oneOf are non-empty arrays of
//     schemas; minimum, maximum, exclusiveMinimum and exclusiveMaximum are
//     numbers; minLength, maxLength, minItems and maxItems are integers
//     from 0 to 2147483647 written as plain digits (no fraction, no
//     exponent); multipleOf is a number greater than 0; pattern, format,
//     title, description, contentEncoding and contentMediaType are
//     strings; uniqueItems, deprecated, readOnly and writeOnly are
//     booleans; examples is an array; const is any value.
//   - Subschemas nest at most 64 levels below the root.
//   - The patterns of the schema together stay within a compile budget of
//     65536 units, a unit being about one instruction of the compiled
//     regular expression: "^[a-z0-9-]+$" costs 5, a UUID pattern about 60,
//     "[0-9]{1,1000}" about 2000, and a large Unicode class such as \p{L}
//     about 80 for each copy the pattern makes of it ("\p{L}{1,1000}" is
//     over the budget on its own). A typical tool schema spends a few
//     hundred units.
//   - Finally the schema compiles as JSON Schema draft 2020-12 the way
//     agnara validates (formats and content asserted, nothing loaded from
//     outside). Patterns are Go regular expressions (RE2 syntax), so a
//     malformed pattern, or one using lookaround or backreferences, is
//     refused.
//
// Problems are reported in document order, a subschema's own keywords
// before its subschemas; only the first is returned.
func checkSchema(raw []byte, maxBytes int) error {
	if len(raw) > maxBytes {
		return &profileError{Reason: "schema is " + strconv.Itoa(len(raw)) + " bytes, over the limit of " + strconv.Itoa(maxBytes)}
	}
	if !utf8.Valid(raw) {
		return &profileError{Reason: "schema is not valid UTF-8"}
	}
	doc, perr := parseProfileDocument(raw)
	if perr != nil {
		return perr
	}
	if perr := new(profileWalk).schema(doc, nil, 0); perr != nil {
		return perr
	}
	if perr := profileCompile(raw); perr != nil {
		return perr
	}
	return nil
}

// profileCompile compiles raw the way agnara validates. The rules above keep
// out what is known to make the compiler panic (a multipleOf it cannot read
// as a number, say); a panic on some other input from a remote server must
// still not take the host down, so it is turned into a refusal. The fuzz
// target fails on that refusal, so such an input gets found and ruled out.
func profileCompile(raw []byte) (perr *profileError) {
	defer func() {
		if r := recover(); r != nil {
			perr = &profileError{Reason: profileCompilerPanicked}
		}
	}()
	if _, err := schemacheck.Compile(raw); err != nil {
		return profileCompileError(err)
	}
	return nil
}

const profileCompilerPanicked = "schema does not compile as JSON Schema draft 2020-12 (the compiler failed)"

// profileObject is a decoded JSON object that keeps its keys in document
// order, so that problems are reported deterministically.
type profileObject struct {
	keys []string
	vals map[string]any
}

// profileAt is where a subschema is: a path of reference tokens, rendered
// as a pointer only for an error (a remote property name may be long, and
// is not copied into the pointer of every subschema below it). nil is the
// root.
type profileAt struct {
	parent *profileAt
	token  string
}

func (a *profileAt) child(tokens ...string) *profileAt {
	for _, t := range tokens {
		a = &profileAt{a, t}
	}
	return a
}

func (a *profileAt) pointer() string {
	var tokens []string
	for ; a != nil; a = a.parent {
		tokens = append(tokens, a.token)
	}
	slices.Reverse(tokens)
	return profilePointer(tokens)
}

// profileChild is a subschema still to be checked.
type profileChild struct {
	v  any
	at *profileAt
}

// profileWalk checks the schemas of one document.
type profileWalk struct {
	patternCost int // spent so far
}

// schema checks the schema v found at at, depth levels below the root: its
// own keywords first, then its subschemas.
func (w *profileWalk) schema(v any, at *profileAt, depth int) *profileError {
	fail := func(reason string) *profileError { return &profileError{Pointer: at.pointer(), Reason: reason} }
	o, ok := v.(*profileObject)
	switch {
	case depth > profileMaxDepth:
		return fail("subschemas nest deeper than " + strconv.Itoa(profileMaxDepth) + " levels")
	case ok:
	case v == true || v == false:
		return fail("boolean schema is outside the profile (a schema must be a JSON object)")
	default:
		return fail("schema must be a JSON object")
	}
	root := depth == 0
	var children []profileChild
	for _, k := range o.keys {
		v := o.vals[k]
		if k == "$schema" {
			if !root {
				return fail(`nested "$schema" is outside the profile (allowed only at the root)`)
			}
			if s, ok := v.(string); !ok || s != profileDialect {
				return fail(`"$schema" must be "` + profileDialect + `"`)
			}
			continue
		}
		if !portableschema.Keyword(k) {
			if strings.HasPrefix(k, "x-") {
				return fail("vendor keyword " + quote(k) + " is outside the profile")
			}
			return fail("keyword " + quote(k) + " is outside the profile")
		}
		kw := strconv.Quote(k) // a profile keyword: short and plain
		switch k {
		case "type":
			if !profileTypeShape(v) {
				return fail("keyword " + kw + " must be a type name or a non-empty array of distinct type names")
			}
		case "properties":
			props, ok := v.(*profileObject)
			if !ok {
				return fail("keyword " + kw + " must be an object of schemas")
			}
			for _, name := range props.keys {
				children = append(children, profileChild{props.vals[name], at.child("properties", name)})
			}
		case "additionalProperties":
			switch v := v.(type) {
			case bool:
				if v {
					return fail(`open object: "additionalProperties" must be false or a schema, not true`)
				}
			case *profileObject:
				children = append(children, profileChild{v, at.child("additionalProperties")})
			default:
				return fail("keyword " + kw + " must be false or a schema")
			}
		case "items":
			if _, isArray := v.([]any); isArray {
				return fail("keyword " + kw + " must be a single schema, not an array")
			}
			children = append(children, profileChild{v, at.child("items")})
		case "required":
			a, ok := v.([]any)
			if !ok || !profileDistinctStrings(a) {
				return fail("keyword " + kw + " must be an array of distinct strings")
			}
		case "enum":
			if a, ok := v.([]any); !ok || len(a) == 0 {
				return fail("keyword " + kw + " must be a non-empty array")
			}
		case "anyOf", "oneOf":
			a, ok := v.([]any)
			if !ok || len(a) == 0 {
				return fail("keyword " + kw + " must be a non-empty array of schemas")
			}
			for i, s := range a {
				children = append(children, profileChild{s, at.child(k, strconv.Itoa(i))})
			}
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			if _, ok := v.(json.Number); !ok {
				return fail("keyword " + kw + " must be a number")
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			if n, ok := v.(json.Number); !ok || !profileCount(string(n)) {
				return fail("keyword " + kw + " must be an integer from 0 to 2147483647 written as plain digits")
			}
		case "multipleOf":
			if n, ok := v.(json.Number); !ok || !profilePositive(string(n)) {
				return fail("keyword " + kw + " must be a number greater than 0")
			}
		case "format", "pattern", "title", "description", "contentEncoding", "contentMediaType":
			str, ok := v.(string)
			if !ok {
				return fail("keyword " + kw + " must be a string")
			}
			if k != "pattern" {
				break
			}
			// A pattern that does not parse is left to the compiler, which
			// refuses it.
			if re, err := syntax.Parse(str, syntax.Perl); err == nil {
				w.patternCost += profilePatternCost(re, profileMaxPatternCost+1-w.patternCost)
				if w.patternCost > profileMaxPatternCost {
					return fail(`keyword "pattern" is too complex: the patterns of a schema may cost at most ` + strconv.Itoa(profileMaxPatternCost) + " units together")
				}
			}
		case "uniqueItems", "deprecated", "readOnly", "writeOnly":
			if _, ok := v.(bool); !ok {
				return fail("keyword " + kw + " must be a boolean")
			}
		case "examples":
			if _, ok := v.([]any); !ok {
				return fail("keyword " + kw + " must be an array")
			}
		case "const":
			// Any value.
		}
	}
	_, closed := o.vals["additionalProperties"]
	switch {
	case root:
		if o.vals["type"] != "object" {
			return fail(`root "type" must be "object"`)
		}
		if o.vals["additionalProperties"] != false {
			return fail(`root must be a closed object: "additionalProperties" must be false`)
		}
	case !closed && profileObjectSchema(o):
		return fail(`open object: "additionalProperties" must be false or a schema`)
	}
	for _, c := range children {
		if perr := w.schema(c.v, c.at, depth+1); perr != nil {
			return perr
		}
	}
	return nil
}

// profilePatternCost estimates the size of re compiled, from its syntax tree
// and without expanding it: about one unit per instruction, a character
// class counting one more unit for every 8 of its ranges (their runes are
// copied into each instruction that matches the class). It stops counting
// past limit, so that it is cheap whatever the pattern.
func profilePatternCost(re *syntax.Regexp, limit int) int {
	cost := 1
	switch re.Op {
	case syntax.OpLiteral:
		cost += len(re.Rune)
	case syntax.OpCharClass:
		cost += len(re.Rune) / 16 // Rune holds pairs: a range is 2 runes
	}
	var sub int
	for _, s := range re.Sub {
		if sub += profilePatternCost(s, limit); sub > limit {
			return limit + 1
		}
	}
	if re.Op == syntax.OpRepeat {
		// The parser refuses counts over 1000; x{n,m} compiles to m copies
		// of x (n when unbounded), each with a branch.
		n := max(re.Max, re.Min, 1)
		if sub+1 > limit/n {
			return limit + 1
		}
		sub = (sub + 1) * n
	}
	return min(cost+sub, limit+1)
}

// profileObjectSchema reports whether o describes objects: its type is or
// includes "object", or it has properties.
func profileObjectSchema(o *profileObject) bool {
	if _, ok := o.vals["properties"]; ok {
		return true
	}
	switch t := o.vals["type"].(type) {
	case string:
		return t == "object"
	case []any:
		return slices.Contains(t, any("object"))
	}
	return false
}

func profileTypeShape(v any) bool {
	switch t := v.(type) {
	case string:
		return profileTypes[t]
	case []any:
		if len(t) == 0 || !profileDistinctStrings(t) {
			return false
		}
		for _, name := range t {
			if !profileTypes[name.(string)] {
				return false
			}
		}
		return true
	}
	return false
}

func profileDistinctStrings(a []any) bool {
	seen := make(map[string]bool, len(a))
	for _, v := range a {
		s, ok := v.(string)
		if !ok || seen[s] {
			return false
		}
		seen[s] = true
	}
	return true
}

// profileCount reports whether n, a JSON number, is written as plain digits
// (a non-negative integer with no fraction or exponent) and is at most
// profileMaxCount.
func profileCount(n string) bool {
	if n == "" || strings.Trim(n, "0123456789") != "" {
		return false
	}
	v, err := strconv.ParseInt(n, 10, 64)
	return err == nil && v <= profileMaxCount
}

// profileFinite reports whether n, a JSON number, is within the range of a
// float64 (it does not overflow, and unless it is zero it does not
// underflow to zero), and whether the validator, which computes with
// big.Rat, can read it. The float64 check comes first: it is cheap, and it
// bounds the exponent, which is what makes big.Rat slow.
func profileFinite(n string) bool {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return false
	}
	if f == 0 {
		mantissa := n
		if i := strings.IndexAny(n, "eE"); i >= 0 {
			mantissa = n[:i]
		}
		if strings.Trim(mantissa, "-0.") != "" {
			return false
		}
	}
	_, ok := new(big.Rat).SetString(n)
	return ok
}

// profilePositive reports whether n, a JSON number, is greater than 0: no
// minus sign and a non-zero digit before any exponent.
func profilePositive(n string) bool {
	if strings.HasPrefix(n, "-") {
		return false
	}
	if i := strings.IndexAny(n, "eE"); i >= 0 {
		n = n[:i]
	}
	return strings.Trim(n, "0.") != ""
}

// profileEscape escapes one JSON Pointer reference token (RFC 6901).
func profileEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func profilePointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(profileEscape(t))
	}
	return b.String()
}

// profileCompileError turns a compile failure into a profile error without
// the compiler's message, which quotes schema values (a pattern, say). It
// points at the first failing location the metaschema reports and names
// the keyword there.
func profileCompileError(err error) *profileError {
	perr := &profileError{Reason: "schema does not compile as JSON Schema draft 2020-12"}
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return perr
	}
	var best []string
	found := false
	var leaves func(*jsonschema.ValidationError)
	leaves = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			// The compiler's order of causes may follow map order; the
			// smallest location keeps the report deterministic.
			if !found || slices.Compare(e.InstanceLocation, best) < 0 {
				best, found = e.InstanceLocation, true
			}
			return
		}
		for _, c := range e.Causes {
			leaves(c)
		}
	}
	leaves(ve)
	if n := len(best); n > 0 && (portableschema.Keyword(best[n-1]) || best[n-1] == "$schema") {
		perr.Pointer = profilePointer(best[:n-1])
		perr.Reason = "keyword " + strconv.Quote(best[n-1]) + " does not compile as JSON Schema draft 2020-12"
	} else {
		perr.Pointer = profilePointer(best)
	}
	return perr
}
