package projection

import (
	"encoding/json"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// A Checker proves, from a Go value of one type, that the value's
// canonical encoding satisfies an output schema, without encoding or
// decoding anything: it walks the schema along the type once, when it is
// made, and the value along that walk on every call. It knows the
// keywords a schema derived from Go types uses (type, properties,
// required, additionalProperties, items, enum and the string, integer and
// array bounds), each as draft 2020-12 defines it and the validator
// (santhosh-tekuri/jsonschema, as internal/schemacheck compiles it)
// applies it to the encoding; a schema with any other keyword has no
// Checker.
//
// A Checker only ever accepts: when Accepts reports false the value may
// still be valid, and the caller judges its encoding with the schema (for
// the verdict and the violations it names). So a value is accepted here
// only if the validator would accept it (TestCheckerAgrees holds it to
// that); a string that is not UTF-8, whose encoding differs from it, is
// left to the validator.
type Checker struct {
	typ   reflect.Type
	check checkFunc // nil: every value of typ is accepted
}

// checkFunc reports whether v's encoding satisfies the node it was made
// from.
type checkFunc func(v reflect.Value) bool

// NewChecker returns the Checker of values of type t against schema (a
// JSON Schema document). When schema says something it does not check,
// the Checker accepts nothing: every value is left to the validator.
func NewChecker(t reflect.Type, schema []byte) *Checker {
	c := &Checker{typ: t, check: rejectAll}
	doc, err := schemacheck.Parse(schema)
	if err != nil || t == nil {
		return c
	}
	if f, ok := compileCheck(t, doc); ok {
		c.check = f
	}
	return c
}

// Type is the type of the values c checks.
func (c *Checker) Type() reflect.Type { return c.typ }

// Accepts reports whether value, of c's type, is proved to satisfy the
// schema; false leaves the verdict to the validator.
func (c *Checker) Accepts(value any) bool {
	v := reflect.ValueOf(value)
	if !v.IsValid() || v.Type() != c.typ {
		return false
	}
	return c.check == nil || c.check(v)
}

// annotationKeywords assert nothing.
var annotationKeywords = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
}

// checkKeywords are the assertions a Checker knows.
var checkKeywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "minLength": true, "maxLength": true, "pattern": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minItems": true, "maxItems": true,
}

// compileCheck returns the check of type t's values against node, nil
// when node asserts nothing, or false when it cannot be checked here.
func compileCheck(t reflect.Type, node any) (checkFunc, bool) {
	if b, ok := node.(bool); ok {
		return nil, b // true asserts nothing; false: left to the validator
	}
	n, ok := node.(map[string]any)
	if !ok {
		return nil, false
	}
	asserts := false
	for k := range n {
		switch {
		case annotationKeywords[k]:
		case checkKeywords[k]:
			asserts = true
		default:
			return nil, false
		}
	}
	if !asserts {
		return nil, true
	}
	if t.Kind() == reflect.Pointer && !encodesItself(t) {
		return pointerCheck(t, n)
	}
	if encodesItself(t) {
		return nil, false
	}
	types, ok := typeSet(n["type"])
	if !ok {
		return nil, false
	}
	switch t.Kind() {
	case reflect.Bool:
		return onlyTypes(n, types, "boolean")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return integerCheck(t, n, types)
	case reflect.Float32, reflect.Float64:
		return floatCheck(n, types)
	case reflect.String:
		return stringCheck(n, types)
	case reflect.Slice, reflect.Array:
		return arrayCheck(t, n, types)
	case reflect.Map:
		return mapCheck(t, n, types)
	case reflect.Struct:
		return structCheck(t, n, types)
	}
	return nil, false // interfaces and the rest: the validator's
}

// floatCheck checks a float's type; its bounds, and whether it is an
// integer, are the validator's.
func floatCheck(n map[string]any, types map[string]bool) (checkFunc, bool) {
	for _, k := range []string{"enum", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"} {
		if _, ok := n[k]; ok {
			return nil, false
		}
	}
	switch {
	case types == nil || types["number"]:
		return nil, true
	case types["integer"]:
		return nil, false
	}
	return rejectAll, true
}

// encodesItself reports whether a value of t is encoded by the old path
// (its own methods, json.Number), where the Checker does not look.
func encodesItself(t reflect.Type) bool {
	return t == numberType || marshals(t) || marshals(reflect.PointerTo(t))
}

// typeSet reads the type keyword: nil for none (any type).
func typeSet(v any) (map[string]bool, bool) {
	switch v := v.(type) {
	case nil:
		return nil, true
	case string:
		return map[string]bool{v: true}, true
	case []any:
		set := map[string]bool{}
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			set[s] = true
		}
		return set, true
	}
	return nil, false
}

// allows reports whether the type keyword's set admits JSON type name
// (integer being a number).
func allows(types map[string]bool, name string) bool {
	return types == nil || types[name] || (name == "integer" && types["number"])
}

// onlyTypes is the check of a type whose values all encode as JSON type
// name, for a node whose only assertion that applies is the type
// keyword (the other keywords concern other JSON types).
func onlyTypes(n map[string]any, types map[string]bool, name string) (checkFunc, bool) {
	for k := range n {
		if k == "enum" {
			return nil, false
		}
	}
	if allows(types, name) {
		return nil, true
	}
	return rejectAll, true
}

func rejectAll(reflect.Value) bool { return false }

func pointerCheck(t reflect.Type, n map[string]any) (checkFunc, bool) {
	types, ok := typeSet(n["type"])
	if !ok {
		return nil, false
	}
	elem, ok := compileCheck(t.Elem(), n)
	if !ok {
		return nil, false
	}
	nullOK := allows(types, "null")
	if _, ok := n["enum"]; ok {
		nullOK = false // null's place in the enum: the validator's
	}
	return func(v reflect.Value) bool {
		if v.IsNil() {
			return nullOK
		}
		return elem == nil || elem(v.Elem())
	}, true
}

// nullable wraps check for a type whose nil value encodes as null.
func nullable(check checkFunc, types map[string]bool, n map[string]any) checkFunc {
	_, enum := n["enum"]
	nullOK := allows(types, "null") && !enum
	return func(v reflect.Value) bool {
		if v.IsNil() {
			return nullOK
		}
		return check == nil || check(v)
	}
}

// intBound reads a numeric keyword that bounds an integer: false when it
// is not an integer within int64.
func intBound(v any) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(string(num), 10, 64)
	return i, err == nil
}

// count reads a keyword that is a count (minLength, maxItems...).
func count(v any) (int, bool) {
	i, ok := intBound(v)
	if !ok || i < 0 || i > math.MaxInt32 {
		return 0, false
	}
	return int(i), true
}

func integerCheck(t reflect.Type, n map[string]any, types map[string]bool) (checkFunc, bool) {
	if _, ok := n["enum"]; ok {
		return nil, false
	}
	if !allows(types, "integer") {
		return rejectAll, true
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	loSet, hiSet := false, false
	for k, f := range map[string]func(b int64) bool{
		"minimum":          func(b int64) bool { lo, loSet = max(lo, b), true; return true },
		"exclusiveMinimum": func(b int64) bool { lo, loSet = max(lo, b+1), true; return b < math.MaxInt64 },
		"maximum":          func(b int64) bool { hi, hiSet = min(hi, b), true; return true },
		"exclusiveMaximum": func(b int64) bool { hi, hiSet = min(hi, b-1), true; return b > math.MinInt64 },
	} {
		if v, ok := n[k]; ok {
			b, ok := intBound(v)
			if !ok || !f(b) {
				return nil, false
			}
		}
	}
	if !loSet && !hiSet {
		return nil, true
	}
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr {
		return func(v reflect.Value) bool {
			u := v.Uint()
			if u > math.MaxInt64 {
				return !hiSet
			}
			return int64(u) >= lo && int64(u) <= hi
		}, true
	}
	return func(v reflect.Value) bool {
		i := v.Int()
		return i >= lo && i <= hi
	}, true
}

func stringCheck(n map[string]any, types map[string]bool) (checkFunc, bool) {
	if !allows(types, "string") {
		return rejectAll, true
	}
	minLen, maxLen := 0, -1
	var enum []string
	var re *regexp.Regexp
	if v, ok := n["minLength"]; ok {
		if minLen, ok = count(v); !ok {
			return nil, false
		}
	}
	if v, ok := n["maxLength"]; ok {
		if maxLen, ok = count(v); !ok {
			return nil, false
		}
	}
	if v, ok := n["pattern"]; ok {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		var err error
		if re, err = regexp.Compile(s); err != nil {
			return nil, false
		}
	}
	if v, ok := n["enum"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, false
		}
		for _, e := range list {
			if s, ok := e.(string); ok {
				enum = append(enum, s) // other members never equal a string
			}
		}
		if len(enum) == 0 {
			return rejectAll, true
		}
	}
	return func(v reflect.Value) bool {
		s := v.String()
		if !utf8.ValidString(s) {
			return false // its encoding holds U+FFFD: the validator's
		}
		if minLen > 0 || maxLen >= 0 {
			if l := utf8.RuneCountInString(s); l < minLen || (maxLen >= 0 && l > maxLen) {
				return false
			}
		}
		if enum != nil && !slices.Contains(enum, s) {
			return false
		}
		return re == nil || re.MatchString(s)
	}, true
}

func arrayCheck(t reflect.Type, n map[string]any, types map[string]bool) (checkFunc, bool) {
	if _, ok := n["enum"]; ok {
		return nil, false
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return nil, false // base64 text
	}
	minItems, maxItems := 0, -1
	if v, ok := n["minItems"]; ok {
		if minItems, ok = count(v); !ok {
			return nil, false
		}
	}
	if v, ok := n["maxItems"]; ok {
		if maxItems, ok = count(v); !ok {
			return nil, false
		}
	}
	var items checkFunc
	if v, ok := n["items"]; ok {
		if items, ok = compileCheck(t.Elem(), v); !ok {
			return nil, false
		}
	}
	arrayOK := allows(types, "array")
	check := func(v reflect.Value) bool {
		l := v.Len()
		if !arrayOK || l < minItems || (maxItems >= 0 && l > maxItems) {
			return false
		}
		if items != nil {
			for i := range l {
				if !items(v.Index(i)) {
					return false
				}
			}
		}
		return true
	}
	if t.Kind() == reflect.Slice {
		return nullable(check, types, n), true
	}
	return check, true
}

func mapCheck(t reflect.Type, n map[string]any, types map[string]bool) (checkFunc, bool) {
	if t.Key().Kind() != reflect.String {
		return nil, false
	}
	for _, k := range []string{"enum", "properties", "required"} {
		if _, ok := n[k]; ok {
			return nil, false
		}
	}
	var values checkFunc
	noneAllowed := false
	if v, ok := n["additionalProperties"]; ok {
		if b, isBool := v.(bool); isBool {
			noneAllowed = !b
		} else if values, ok = compileCheck(t.Elem(), v); !ok {
			return nil, false
		}
	}
	objectOK := allows(types, "object")
	return nullable(func(v reflect.Value) bool {
		if !objectOK || (noneAllowed && v.Len() > 0) {
			return false
		}
		for it := v.MapRange(); it.Next(); {
			if !utf8.ValidString(it.Key().String()) {
				return false // keys that may decode alike: the validator's
			}
			if values != nil && !values(it.Value()) {
				return false
			}
		}
		return true
	}, types, n), true
}

// fieldCheck is what a struct's check does with one of its fields.
type fieldCheck struct {
	index     int
	omitEmpty bool
	required  bool
	extra     bool // not a property, and additionalProperties is false
	check     checkFunc
}

func structCheck(t reflect.Type, n map[string]any, types map[string]bool) (checkFunc, bool) {
	if _, ok := n["enum"]; ok {
		return nil, false
	}
	fields, ok := plainFields(t)
	if !ok {
		return nil, false
	}
	props := map[string]any{}
	if v, ok := n["properties"]; ok {
		if props, ok = v.(map[string]any); !ok {
			return nil, false
		}
	}
	required := map[string]bool{}
	if v, ok := n["required"]; ok {
		list, ok := v.([]any)
		if !ok {
			return nil, false
		}
		for _, e := range list {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			required[s] = true
		}
	}
	additional, hasAdditional := n["additionalProperties"]
	checks := make([]fieldCheck, 0, len(fields))
	for _, f := range fields {
		fc := fieldCheck{index: f.index, omitEmpty: f.omitEmpty, required: required[f.name]}
		delete(required, f.name)
		sub, isProp := props[f.name]
		switch {
		case isProp:
		case !hasAdditional:
			sub = true
		case additional == false:
			fc.extra = true
		default:
			sub = additional
		}
		if !fc.extra {
			var ok bool
			if fc.check, ok = compileCheck(f.typ, sub); !ok {
				return nil, false
			}
		}
		checks = append(checks, fc)
	}
	if len(required) > 0 || !allows(types, "object") {
		return rejectAll, true // a required property no field writes
	}
	return func(v reflect.Value) bool {
		for _, fc := range checks {
			fv := v.Field(fc.index)
			if fc.omitEmpty && emptyValue(fv) {
				if fc.required {
					return false
				}
				continue
			}
			if fc.extra || (fc.check != nil && !fc.check(fv)) {
				return false
			}
		}
		return true
	}, true
}
