package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
)

// MaxDepth is the deepest nesting of arrays and objects accepted: an input
// with more than MaxDepth unclosed '[' or '{' at any point is an error. The
// limit keeps the recursive parser's stack bounded on hostile input; 1000 is
// far beyond any tool schema or catalog entry.
const MaxDepth = 1000

// Canonicalize parses one JSON value from b and returns its RFC 8785 canonical
// form. Whitespace around the value is allowed; anything else after it is an
// error, as is input that is not I-JSON (see the package documentation).
//
// b is neither modified nor retained. Canonicalize is safe for concurrent use.
func Canonicalize(b []byte) ([]byte, error) {
	out, err := Append(make([]byte, 0, len(b)), b)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Append is like [Canonicalize] but appends the canonical form of b to dst and
// returns the extended slice. On error it returns dst unchanged.
func Append(dst, b []byte) ([]byte, error) {
	p := parser{in: b}
	v, err := p.document()
	if err != nil {
		return dst, err
	}
	return appendValue(dst, &v), nil
}

// Digest returns "sha256:" followed by the lowercase hexadecimal SHA-256 of
// the canonical form of b: the identity under which two hosts holding equal
// JSON documents agree. Its errors are those of [Canonicalize].
func Digest(b []byte) (string, error) {
	c, err := Canonicalize(b)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// appendValue writes v in canonical form. Object members are already sorted
// and free of duplicates (the parser did that), so writing cannot fail.
func appendValue(dst []byte, v *value) []byte {
	switch v.kind {
	case kindNull:
		return append(dst, "null"...)
	case kindFalse:
		return append(dst, "false"...)
	case kindTrue:
		return append(dst, "true"...)
	case kindNumber:
		return appendNumber(dst, v.num)
	case kindString:
		return appendString(dst, v.str)
	case kindArray:
		dst = append(dst, '[')
		for i := range v.elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, &v.elems[i])
		}
		return append(dst, ']')
	default: // kindObject
		dst = append(dst, '{')
		for i := range v.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			m := &v.members[i]
			dst = appendString(dst, m.name)
			dst = append(dst, ':')
			dst = appendValue(dst, &m.value)
		}
		return append(dst, '}')
	}
}
