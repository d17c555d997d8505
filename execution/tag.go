package execution

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The jsonschema struct tag keys the schema generator (typeSchema, which
// reads them as invopop/jsonschema did) reads, by the JSON type of the
// field they apply to. The generator skips
// anything else without a word, and drops values it cannot parse: a typo or
// a bad value would publish a looser schema than the one written. These
// lists make such a tag a compile error instead.
var (
	genericTagKeys = []string{"title", "description", "type", "anchor",
		"oneof_required", "anyof_required", "oneof_ref", "oneof_type", "anyof_ref", "anyof_type"}
	tagFlags       = []string{"required", "nullable"}
	stringTagKeys  = []string{"minLength", "maxLength", "pattern", "format", "readOnly", "writeOnly", "default", "example", "enum"}
	numberTagKeys  = []string{"multipleOf", "minimum", "maximum", "exclusiveMaximum", "exclusiveMinimum", "default", "example", "enum"}
	arrayTagKeys   = []string{"minItems", "maxItems", "uniqueItems", "default", "format", "pattern"}
	booleanTagKeys = []string{"default"}
)

// jsonKind is the JSON type a Go type is encoded as, for tag checking: "string",
// "integer", "number", "boolean", "array", "object", or "" when the type
// describes itself (a JSONSchema method) or is any value.
func jsonKind(t reflect.Type, output bool) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case describesItself(t):
		return ""
	case t == timeType, isText(t, output):
		return "string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return "string" // []byte: base64
		}
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return ""
}

// splitTag splits a jsonschema tag at the commas the generator splits it
// at: those not escaped with a backslash.
func splitTag(tag string) []string {
	var (
		parts []string
		cur   strings.Builder
	)
	for i := 0; i < len(tag); i++ {
		switch {
		case tag[i] == '\\' && i+1 < len(tag) && tag[i+1] == ',':
			cur.WriteByte(',')
			i++
		case tag[i] == ',':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(tag[i])
		}
	}
	return append(parts, cur.String())
}

// tagProblems checks the jsonschema tag of a field of type t: every key is
// one the generator reads for t's JSON type, and every value one it can
// parse into a valid keyword. Bounds that contradict each other are found
// later, in the generated schema.
func tagProblems(tag string, t reflect.Type, output bool) []tagProblem {
	if tag == "" {
		return nil
	}
	var (
		problems []tagProblem
		key      string
	)
	bad := func(format string, args ...any) {
		problems = append(problems, tagProblem{key: key, msg: fmt.Sprintf(format, args...)})
	}
	items := splitTag(tag)
	kind := jsonKind(t, output)
	var elemKind string
	if kind == "array" {
		et := t
		for et.Kind() == reflect.Pointer {
			et = et.Elem()
		}
		elemKind = jsonKind(et.Elem(), output)
	}
	for _, item := range items {
		if item == "type" || strings.HasPrefix(item, "type=") {
			// An explicit type replaces the derived one for the keywords that
			// follow; check against it.
			if _, v, ok := strings.Cut(item, "="); ok && slices.Contains([]string{"string", "integer", "number", "boolean", "array", "object"}, v) {
				kind, elemKind = v, ""
			}
		}
	}
	if prose(items) {
		// The whole tag is a sentence, as the Go MCP SDK and mcp-go read
		// it: its commas are not keywords either.
		return []tagProblem{{msg: fmt.Sprintf("jsonschema tag %q is a list of key=value keywords, not a description: write it as jsonschema_description:%q", tag, tag)}}
	}
	for i, item := range items {
		var val string
		var hasVal bool
		key, val, hasVal = strings.Cut(item, "=")
		switch {
		case item == "":
			continue
		case i == 0 && item == "-":
			continue
		case !hasVal:
			switch {
			case slices.Contains(tagFlags, item):
			case known(key):
				bad("jsonschema tag %q has no value: write %s=<value>", item, key)
			case i > 0 && isProse(item) && slices.ContainsFunc(items[:i], func(prev string) bool {
				return strings.HasPrefix(prev, "description=") || strings.HasPrefix(prev, "title=")
			}):
				// description=a, b: the comma ended the description.
				bad("a comma ends a jsonschema tag's keyword, so %q is read as a keyword of its own: write the text as jsonschema_description:\"...\" (or escape the comma as \\,)", item)
			case isProse(item):
				bad("unknown jsonschema tag %q: a description is written jsonschema_description:%q", item, strings.TrimSpace(item))
			default:
				bad("unknown jsonschema tag %q%s", item, suggestion(key))
			}
			continue
		case slices.Contains(genericTagKeys, key):
			continue
		}
		applies := func(keys []string) bool { return slices.Contains(keys, key) }
		var valueKind string // the JSON type whose keyword key is
		switch {
		case kind == "":
			if !known(key) {
				bad("unknown jsonschema tag key %q%s", key, suggestion(key))
			}
			continue // the type describes itself: nothing to pair keys with
		case kind == "string" && applies(stringTagKeys):
			valueKind = "string"
		case (kind == "integer" || kind == "number") && applies(numberTagKeys):
			valueKind = kind
		case kind == "boolean" && applies(booleanTagKeys):
			valueKind = "boolean"
		case kind == "array" && applies(arrayTagKeys):
			valueKind = "array"
		case kind == "array" && elemKind == "string" && applies(stringTagKeys),
			kind == "array" && (elemKind == "integer" || elemKind == "number") && applies(numberTagKeys),
			kind == "array" && elemKind == "boolean" && applies(booleanTagKeys):
			valueKind = elemKind // applies to the elements
		case !known(key):
			bad("unknown jsonschema tag key %q%s", key, suggestion(key))
			continue
		default:
			bad("jsonschema tag key %q does not apply to a %s field (%s), so it would be ignored", key, kind, t)
			continue
		}
		if msg := tagValueProblem(key, val, valueKind); msg != "" {
			bad("jsonschema tag %s=%s: %s", key, val, msg)
		}
	}
	return problems
}

// tagProblem is one problem of a jsonschema tag: the key it is about and
// what is wrong with it.
type tagProblem struct {
	key, msg string
}

// tagValueProblem says why val is not a value the generator turns into
// keyword key of a valueKind schema, or "".
func tagValueProblem(key, val, valueKind string) string {
	switch key {
	case "minLength", "maxLength", "minItems", "maxItems":
		if _, err := strconv.ParseUint(val, 10, 64); err != nil {
			return "want a non-negative integer"
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
		if !isNumber(val) {
			return "want a number"
		}
	case "multipleOf":
		if f, _ := strconv.ParseFloat(val, 64); !isNumber(val) || f <= 0 {
			return "want a number greater than 0"
		}
	case "readOnly", "writeOnly":
		if _, err := strconv.ParseBool(val); err != nil {
			return "want true or false"
		}
	case "uniqueItems":
		if val != "true" {
			return "want true (any value turns it on)"
		}
	case "enum", "example":
		if (valueKind == "integer" || valueKind == "number") && !isNumber(val) {
			return "want a number"
		}
	case "default":
		// Only forms keep a default; the generator drops one it cannot
		// parse, and the form would silently offer none.
		switch {
		case (valueKind == "integer" || valueKind == "number") && !isNumber(val):
			return "want a number"
		case valueKind == "boolean" && val != "true" && val != "false":
			return "want true or false"
		}
	}
	return ""
}

// jsonNumber is the syntax of a JSON number (RFC 8259). The generator
// also takes what strconv.ParseFloat takes ("inf", hexadecimal), and would
// publish it as a number JSON cannot write.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// isNumber reports whether s is a number both the generator and JSON accept.
func isNumber(s string) bool {
	if !jsonNumber.MatchString(s) {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// isProse reports whether a tag item without '=' reads as words rather than
// a mistyped keyword: no known key is near it, and it has a space, starts
// with a capital letter or ends with a full stop ("Search query", "Query",
// "the query."), where a keyword ("requird", "uuid") has none of them.
func isProse(item string) bool {
	item = strings.TrimSpace(item)
	if item == "" || known(item) || suggestion(item) != "" && !strings.ContainsAny(item, " \t") {
		return false
	}
	first, _ := utf8.DecodeRuneInString(item)
	return strings.ContainsAny(item, " \t") || unicode.IsUpper(first) || strings.HasSuffix(item, ".")
}

// prose reports whether a whole tag's items are words (see isProse):
// jsonschema:"Search query" or jsonschema:"The name, as written".
func prose(items []string) bool {
	for _, item := range items {
		if strings.Contains(item, "=") || !isProse(item) && strings.TrimSpace(item) != "" {
			return false
		}
	}
	return isProse(items[0])
}

// known reports whether key is a tag key the generator reads for some type.
func known(key string) bool {
	for _, keys := range [][]string{genericTagKeys, stringTagKeys, numberTagKeys, arrayTagKeys, booleanTagKeys, tagFlags} {
		if slices.Contains(keys, key) {
			return true
		}
	}
	return false
}

// suggestion names the known key closest to an unknown one, for typos such
// as minLenght.
func suggestion(key string) string {
	best, bestD := "", 3
	for _, keys := range [][]string{genericTagKeys, stringTagKeys, numberTagKeys, arrayTagKeys, tagFlags} {
		for _, k := range keys {
			if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
				best, bestD = k, d
			}
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the optimal string alignment distance between a and b
// (Levenshtein plus transpositions), so that minLenght is one edit from
// minLength.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
