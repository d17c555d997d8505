package mcpimport

import (
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// documentOf returns the value the validator checks for the structured
// content v, whose encoding is b (b = json.Marshal(v)): what
// schemacheck.Parse(b) returns. A decoded result's structured content is
// a tree of maps, slices, strings, float64s, booleans and nils, whose
// validator form is the same tree with each number as the json.Number
// encoding/json writes for it; documentOf builds that tree directly
// instead of decoding b again, and decodes b whenever v holds anything
// else (or anything b would not give back as it is: a string that is not
// UTF-8, nesting beyond the decoders' bound).
func documentOf(v any, b []byte) (any, error) {
	if d, ok := plainDocument(v, 0); ok {
		return d, nil
	}
	return schemacheck.Parse(b)
}

func plainDocument(v any, depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil, bool:
		return v, true
	case string:
		return v, utf8.ValidString(v)
	case float64:
		return numberOf(v)
	case map[string]any:
		if v == nil {
			return nil, true // encoded as null
		}
		m := make(map[string]any, len(v))
		for k, e := range v {
			if !utf8.ValidString(k) {
				return nil, false
			}
			d, ok := plainDocument(e, depth+1)
			if !ok {
				return nil, false
			}
			m[k] = d
		}
		return m, true
	case []any:
		if v == nil {
			return nil, true // encoded as null
		}
		s := make([]any, len(v))
		for i, e := range v {
			d, ok := plainDocument(e, depth+1)
			if !ok {
				return nil, false
			}
			s[i] = d
		}
		return s, true
	}
	return nil, false
}

// numberOf is f as encoding/json encodes a float64, as a json.Number.
func numberOf(f float64) (any, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, false
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	var a [32]byte
	b := strconv.AppendFloat(a[:0], f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return json.Number(b), true
}
