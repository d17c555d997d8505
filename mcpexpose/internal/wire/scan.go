package wire

import (
	"strconv"
	"unicode/utf8"
)

// scanner reads the JSON values the fast path needs, and gives up (bad) on
// anything it does not read exactly as the SDK's decoder would, or that is
// not valid JSON. (skipValue alone relies on a body already known to be
// valid.)
type scanner struct {
	b        []byte
	i        int
	bad      bool
	depthMax int
}

func (p *scanner) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// end reports whether only whitespace is left.
func (p *scanner) end() bool {
	p.ws()
	return !p.bad && p.i == len(p.b)
}

// object reads an object, calling field with each key (without escapes)
// positioned at its value; field reads the value and reports whether to go
// on.
func (p *scanner) object(field func(key []byte) bool) bool {
	p.ws()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.ws()
		key := p.stringBytes()
		if key == nil || p.bad {
			return false
		}
		p.ws()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.ws()
		if !field(key) || p.bad {
			return false
		}
		p.ws()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

// stringBytes reads a string of printable ASCII without escapes and
// returns its contents (non-nil, possibly empty), or nil.
func (p *scanner) stringBytes() []byte {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		p.bad = true
		return nil
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		c := p.b[j]
		if c == '"' {
			p.i = j + 1
			return p.b[start:j:j]
		}
		if c == '\\' || c < 0x20 || c > 0x7e {
			p.bad = true
			return nil
		}
	}
	p.bad = true
	return nil
}

// plainString reads a string of printable ASCII without escapes.
func (p *scanner) plainString() string {
	s := p.stringBytes()
	if s == nil {
		return ""
	}
	return string(s)
}

// id reads a request id the SDK echoes byte for byte: a plain string, or
// an integer of at most 15 digits (exact in the float64 the SDK decodes
// it into), not -0.
func (p *scanner) id() []byte {
	start := p.i
	if p.i < len(p.b) && p.b[p.i] == '"' {
		if p.stringBytes() == nil {
			return nil
		}
		return p.b[start:p.i:p.i]
	}
	j := p.i
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	digits := j
	for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
		j++
	}
	n := j - digits
	if n == 0 || n > 15 || (n > 1 && p.b[digits] == '0') {
		return nil
	}
	if j < len(p.b) && (p.b[j] == '.' || p.b[j] == 'e' || p.b[j] == 'E') {
		return nil
	}
	if digits > start && n == 1 && p.b[digits] == '0' {
		return nil // -0 is echoed as 0
	}
	p.i = j
	return p.b[start:j:j]
}

// skipValue skips any value, which the body's validity guarantees is
// well formed.
func (p *scanner) skipValue() bool {
	p.ws()
	if p.i >= len(p.b) {
		return false
	}
	switch p.b[p.i] {
	case '{', '[':
		return p.rawComposite() != nil
	case '"':
		p.i++
		for p.i < len(p.b) && p.b[p.i] != '"' {
			if p.b[p.i] == '\\' {
				p.i++
			}
			p.i++
		}
		p.i++
		return p.i <= len(p.b)
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		p.i++
	}
	return true
}

// rawObject skips an object and returns its bytes, or nil when the value
// is not an object.
func (p *scanner) rawObject() []byte {
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil
	}
	return p.rawComposite()
}

// rawComposite skips the object or array at p.i and returns its bytes,
// when it is valid JSON (as RFC 8259 has it, its strings valid UTF-8) of
// at most fastMaxDepth levels; otherwise it sets bad and returns nil.
// depthMax is the deepest level it saw, the composite's own being 1.
func (p *scanner) rawComposite() []byte {
	start := p.i
	if !p.valid(1) {
		p.bad = true
		return nil
	}
	return p.b[start:p.i:p.i]
}

// valid skips the JSON value at p.i, at nesting level depth when it is
// an object or an array, and reports whether it is valid.
func (p *scanner) valid(depth int) bool {
	if p.i >= len(p.b) {
		return false
	}
	switch c := p.b[p.i]; c {
	case '{', '[':
		if depth > fastMaxDepth {
			return false
		}
		if depth > p.depthMax {
			p.depthMax = depth
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		p.i++
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == end {
			p.i++
			return true
		}
		for {
			if c == '{' {
				if !p.validString() {
					return false
				}
				p.ws()
				if p.i >= len(p.b) || p.b[p.i] != ':' {
					return false
				}
				p.i++
				p.ws()
			}
			if !p.valid(depth + 1) {
				return false
			}
			p.ws()
			if p.i >= len(p.b) {
				return false
			}
			switch p.b[p.i] {
			case ',':
				p.i++
				p.ws()
			case end:
				p.i++
				return true
			default:
				return false
			}
		}
	case '"':
		return p.validString()
	case 't':
		return p.literal("true")
	case 'f':
		return p.literal("false")
	case 'n':
		return p.literal("null")
	}
	return p.validNumber()
}

// literal skips lit, and reports whether it is what p.i holds.
func (p *scanner) literal(lit string) bool {
	if len(p.b)-p.i < len(lit) || string(p.b[p.i:p.i+len(lit)]) != lit {
		return false
	}
	p.i += len(lit)
	return true
}

// validString skips the string at p.i and reports whether it is valid:
// no control character, only JSON's escapes, valid UTF-8.
func (p *scanner) validString() bool {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return false
	}
	for j := p.i + 1; j < len(p.b); {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return true
		case c == '\\':
			if j+1 >= len(p.b) {
				return false
			}
			switch p.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(p.b) || !hex4(p.b[j+2:j+6]) {
					return false
				}
				j += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		case c < utf8.RuneSelf:
			j++
		default:
			r, size := utf8.DecodeRune(p.b[j:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			j += size
		}
	}
	return false
}

// hex4 reports whether b is four hexadecimal digits.
func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// validNumber skips the number at p.i and reports whether it is one, as
// JSON writes numbers, within a double's range: the SDK decodes the params
// of the requests the edge answers into maps (at 2026-07-28, to check
// Mcp-Name against the body), where encoding/json refuses a number it
// cannot hold in a float64 ("1e400"), and so refuses the request; such a
// body is left to it. Only a number with an exponent or of more than 308
// characters can be out of range, and only such a number is parsed.
func (p *scanner) validNumber() bool {
	j, exp := p.i, false
	if j < len(p.b) && p.b[j] == '-' {
		j++
	}
	switch {
	case j < len(p.b) && p.b[j] == '0':
		j++
	case j < len(p.b) && '1' <= p.b[j] && p.b[j] <= '9':
		j = digits(p.b, j)
	default:
		return false
	}
	if j < len(p.b) && p.b[j] == '.' {
		j++
		if j >= len(p.b) || p.b[j] < '0' || p.b[j] > '9' {
			return false
		}
		j = digits(p.b, j)
	}
	if j < len(p.b) && (p.b[j] == 'e' || p.b[j] == 'E') {
		j++
		if j < len(p.b) && (p.b[j] == '+' || p.b[j] == '-') {
			j++
		}
		if j >= len(p.b) || p.b[j] < '0' || p.b[j] > '9' {
			return false
		}
		j, exp = digits(p.b, j), true
	}
	if exp || j-p.i > 308 {
		if _, err := strconv.ParseFloat(string(p.b[p.i:j]), 64); err != nil {
			return false
		}
	}
	p.i = j
	return true
}
