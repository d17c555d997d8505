package execution

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
)

// outputEnforced reports whether every value of t that encoding/json can
// encode encodes to JSON its derived output schema accepts, so that
// validating a success against the schema can only pass. It walks the
// schema along the type: each node may say only what the Go type already
// guarantees — its JSON type (and null where Go may write null), the
// properties, required fields and closedness of a struct, the items of a
// slice or array (an array's length), the values of a map, the range of a
// sized integer, descriptions and titles — and t's encoding must be
// encoding/json's own all the way down: no interface (whose dynamic value
// could be anything), no type with its own MarshalJSON or MarshalText, no
// embedded struct, no []byte. A tag that adds a constraint (minimum, enum,
// format, pattern…) makes it false, and the schema is checked on every
// success.
func outputEnforced(t reflect.Type, schema []byte) bool {
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return false
	}
	return enforcedBy(t, doc, false, map[reflect.Type]bool{})
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// intRange is the range of a sized integer kind, as the schema derivation
// declares it.
func intRange(k reflect.Kind) (lo, hi float64, sized bool) {
	switch k {
	case reflect.Int8:
		return math.MinInt8, math.MaxInt8, true
	case reflect.Int16:
		return math.MinInt16, math.MaxInt16, true
	case reflect.Int32:
		return math.MinInt32, math.MaxInt32, true
	case reflect.Uint8:
		return 0, math.MaxUint8, true
	case reflect.Uint16:
		return 0, math.MaxUint16, true
	case reflect.Uint32:
		return 0, math.MaxUint32, true
	}
	return 0, 0, false
}

// enforcedBy reports whether every encodable value of t satisfies node.
// omitted: t is a field's type with omitempty, whose nil value is not
// written.
func enforcedBy(t reflect.Type, node any, omitted bool, seen map[reflect.Type]bool) bool {
	if t.Implements(jsonMarshalerType) || t.Implements(textMarshalerType) ||
		reflect.PointerTo(t).Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType) {
		return false
	}
	if b, ok := node.(bool); ok {
		return b
	}
	n, ok := node.(map[string]any)
	if !ok {
		return false
	}
	// A nil pointer, slice or map is written as null, unless omitted.
	mayBeNull := !omitted && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
		if t.Kind() == reflect.Pointer {
			return false
		}
	}
	var jsonType string
	switch t.Kind() {
	case reflect.Bool:
		jsonType = "boolean"
	case reflect.String:
		jsonType = "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		jsonType = "integer"
	case reflect.Float32, reflect.Float64:
		jsonType = "number"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return false // []byte is base64 text, [N]byte an array: left to the validator
		}
		jsonType = "array"
	case reflect.Map, reflect.Struct:
		jsonType = "object"
	default:
		return false
	}
	// The node's type: the Go type's, or that and null.
	switch ty := n["type"].(type) {
	case string:
		if ty != jsonType || mayBeNull {
			return false
		}
	case []any:
		if len(ty) != 2 || ty[0] != jsonType || ty[1] != "null" {
			return false
		}
	default:
		return false
	}
	for k, v := range n {
		switch k {
		case "type", "description", "title":
		case "minimum", "maximum":
			lo, hi, sized := intRange(t.Kind())
			f, _ := v.(float64)
			if !sized || (k == "minimum" && f != lo) || (k == "maximum" && f != hi) {
				if !(k == "minimum" && f == 0 && strings.HasPrefix(t.Kind().String(), "uint")) {
					return false
				}
			}
		case "minItems", "maxItems":
			if f, _ := v.(float64); t.Kind() != reflect.Array || f != float64(t.Len()) {
				return false
			}
		case "items":
			if (t.Kind() != reflect.Slice && t.Kind() != reflect.Array) || !enforcedBy(t.Elem(), v, false, seen) {
				return false
			}
		case "additionalProperties":
			switch {
			case t.Kind() == reflect.Map:
				if t.Key().Kind() != reflect.String || !enforcedBy(t.Elem(), v, false, seen) {
					return false
				}
			case t.Kind() == reflect.Struct:
				if v != false {
					return false
				}
			default:
				return false
			}
		case "properties", "required":
			if t.Kind() != reflect.Struct {
				return false
			}
		default:
			return false
		}
	}
	if (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && n["items"] == nil {
		return false
	}
	if t.Kind() == reflect.Map && (n["additionalProperties"] == nil || t.Key().Kind() != reflect.String) {
		return false
	}
	if t.Kind() == reflect.Struct {
		return structEnforced(t, n, seen)
	}
	return true
}

// structEnforced checks a struct's properties: one per encoded field, of
// its JSON name, enforced by its type; required exactly the fields without
// omitempty; closed.
func structEnforced(t reflect.Type, n map[string]any, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false // recursive types are refused by the derivation anyway
	}
	seen[t] = true
	defer delete(seen, t)
	props, _ := n["properties"].(map[string]any)
	if n["additionalProperties"] != false {
		return false
	}
	var required []string
	count := 0
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return false
		}
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" || strings.Contains(opts, "string") {
			return false // Go names and ",string" are left to the validator
		}
		omit := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		p, ok := props[name]
		if !ok || !enforcedBy(f.Type, p, omit, seen) {
			return false
		}
		if !omit {
			required = append(required, name)
		}
		count++
	}
	if count != len(props) {
		return false
	}
	// Every field Go always writes may be required; no other may.
	req, _ := n["required"].([]any)
	for _, r := range req {
		if name, _ := r.(string); !slices.Contains(required, name) {
			return false
		}
	}
	return true
}
