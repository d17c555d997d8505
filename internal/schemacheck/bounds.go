package schemacheck

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Check returns every problem in doc, a schema parsed by [Parse]: what breaks
// the 2020-12 meta-schema ([CheckMeta]) and bounds no value can satisfy
// ([CheckBounds]), ordered by pointer.
func Check(doc any) []Problem {
	return sorted(append(CheckMeta(doc), CheckBounds(doc)...))
}

// boundPairs are the keyword pairs whose lower bound must not exceed the
// upper one. strict marks pairs where one side is exclusive, so that equal
// bounds leave no value either.
var boundPairs = []struct {
	lo, hi string
	strict bool
}{
	{"minLength", "maxLength", false},
	{"minItems", "maxItems", false},
	{"minProperties", "maxProperties", false},
	{"minContains", "maxContains", false},
	{"minimum", "maximum", false},
	{"exclusiveMinimum", "maximum", true},
	{"minimum", "exclusiveMaximum", true},
	{"exclusiveMinimum", "exclusiveMaximum", true},
}

// subschemaKeys are the keywords whose value is a schema, an array of
// schemas, or an object of schemas, in 2020-12.
var (
	schemaValued = []string{"items", "additionalProperties", "not", "if", "then", "else",
		"contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties"}
	schemaArrays = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	schemaMaps   = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// CheckBounds returns the bounds in doc, a schema parsed by [Parse], that
// no value can satisfy, such as a minimum above the maximum, in doc and in
// all its subschemas. The meta-schema cannot express these. Keywords whose
// values are not numbers are left to [CheckMeta].
func CheckBounds(doc any) []Problem {
	var out []Problem
	var walk func(n any, ptr string)
	walk = func(n any, ptr string) {
		o, ok := n.(map[string]any)
		if !ok {
			return
		}
		for _, p := range boundPairs {
			lo, okLo := number(o[p.lo])
			hi, okHi := number(o[p.hi])
			if !okLo || !okHi {
				continue
			}
			if c := lo.Cmp(hi); c > 0 || (p.strict && c == 0) {
				rel := "greater than"
				if c == 0 {
					rel = "equal to"
				}
				out = append(out, Problem{Pointer: ptr + "/" + p.lo, Message: fmt.Sprintf("%s %v is %s %s %v: no value satisfies both", p.lo, o[p.lo], rel, p.hi, o[p.hi])})
			}
		}
		for _, k := range schemaValued {
			walk(o[k], ptr+"/"+k)
		}
		for _, k := range schemaArrays {
			if arr, ok := o[k].([]any); ok {
				for i, s := range arr {
					walk(s, ptr+"/"+k+"/"+strconv.Itoa(i))
				}
			}
		}
		for _, k := range schemaMaps {
			if m, ok := o[k].(map[string]any); ok {
				for name, s := range m {
					walk(s, ptr+"/"+k+"/"+escape(name))
				}
			}
		}
	}
	walk(doc, "")
	return sorted(out)
}

// number reads a JSON number as parsed by [Parse] (json.Number) or by
// encoding/json (float64).
func number(v any) (*big.Rat, bool) {
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case float64:
		s = strconv.FormatFloat(v, 'g', -1, 64)
	default:
		return nil, false
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// CompileChecked compiles schema for validation, sharing the result as
// [CompileShared] does, and returns the problems [Check] returns for doc
// (the same schema, parsed by [Parse]), at the cost of one meta-schema
// validation instead of two: compiling validates the schema against the
// meta-schema itself, so [CheckMeta] runs only when the compile fails (to
// name every problem), or when the schema has a keyword whose URI format
// only CheckMeta asserts ($id, $ref, ...). The validator is nil when there
// are problems; err is the compile's error when no problem explains it.
func CompileChecked(schema []byte, doc any) (v *jsonschema.Schema, problems []Problem, err error) {
	problems = CheckBounds(doc)
	v, err = CompileShared(schema)
	if err != nil || hasURIKeyword(doc) {
		problems = append(problems, CheckMeta(doc)...)
	}
	if len(problems) > 0 {
		return nil, sorted(problems), nil
	}
	return v, nil, err
}

// uriKeywords are the 2020-12 keywords whose values the meta-schema gives
// a URI format: compiling does not assert formats on the schema itself,
// CheckMeta does.
var uriKeywords = []string{"$id", "$schema", "$ref", "$dynamicRef", "$vocabulary"}

// hasURIKeyword reports whether doc, or any object within it, has one of
// uriKeywords as a member.
func hasURIKeyword(doc any) bool {
	switch n := doc.(type) {
	case map[string]any:
		for k, v := range n {
			if slices.Contains(uriKeywords, k) || hasURIKeyword(v) {
				return true
			}
		}
	case []any:
		for _, v := range n {
			if hasURIKeyword(v) {
				return true
			}
		}
	}
	return false
}
