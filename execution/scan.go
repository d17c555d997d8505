package execution

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's nesting limit: a document nested deeper is
// not JSON to it, so not to us either.
const maxDepth = 10000

// reader reads one JSON text of arguments in a single pass, the way
// encoding/json accepts it (RFC 8259 syntax, invalid UTF-8 in strings
// replaced by U+FFFD, at most maxDepth levels of nesting, nothing but
// whitespace after the value), and builds the document the validator checks
// (see [parseDocument]). The typed decoders of decode.go drive it to fill an
// input struct in the same pass, and record here the first failure to
// decode, the way encoding/json reports it.
//
// A reader is used by one invocation, on one goroutine.
type reader struct {
	data  []byte
	off   int
	depth int
	// bad is set on the first syntax error; everything read after it is
	// discarded.
	bad bool

	// stack is the decode error context: one entry per struct field being
	// decoded, the field's dotted name as encoding/json records it
	// ("Audit.created_by" for a field promoted from an embedded Audit).
	stack    []string
	stackBuf [4]string
	// saved is the first decode failure that did not stop decoding (a value
	// that does not fit its field); failed, an unmarshaler's error, which
	// stops it (no user method is called after it) and wins over saved.
	saved  *Violation
	failed *Violation
}

func newReader(data []byte) *reader {
	r := &reader{data: data}
	r.stack = r.stackBuf[:0]
	return r
}

// parseDocument parses data into the document the validator checks: objects
// as map[string]any (the last of duplicate keys wins), arrays as []any,
// numbers as json.Number (exact), strings, booleans and nil — what
// schemacheck.Parse returns, in one pass and without a decoder per call. ok
// is false when data is not one JSON value.
func parseDocument(data []byte) (doc any, ok bool) {
	r := newReader(data)
	doc, _ = r.top(false)
	if r.bad {
		return nil, false
	}
	return doc, true
}

// top reads the whole text as one value; see generic.
func (r *reader) top(goForm bool) (doc, gov any) {
	r.space()
	doc, gov = r.generic(goForm)
	r.end()
	return doc, gov
}

// end checks that only whitespace follows the value.
func (r *reader) end() {
	r.space()
	if r.off != len(r.data) {
		r.bad = true
	}
}

func (r *reader) space() {
	for r.off < len(r.data) {
		switch r.data[r.off] {
		case ' ', '\t', '\n', '\r':
			r.off++
		default:
			return
		}
	}
}

// peek returns the byte at the cursor, or 0 at the end.
func (r *reader) peek() byte {
	if r.off < len(r.data) {
		return r.data[r.off]
	}
	return 0
}

// enter opens an object or array at the cursor.
func (r *reader) enter() bool {
	r.off++
	r.depth++
	if r.depth > maxDepth {
		r.bad = true
		return false
	}
	return true
}

// next reads what follows a member or element: a comma (more follows,
// true) or the closing delimiter (false). Anything else is a syntax error.
func (r *reader) next(closing byte) bool {
	r.space()
	switch r.peek() {
	case ',':
		r.off++
		r.space()
		return true
	case closing:
		r.off++
		r.depth--
		return false
	}
	r.bad = true
	return false
}

// empty reports, after enter and at the first member, whether the object or
// array closes at once, and consumes the closing delimiter if so.
func (r *reader) empty(closing byte) bool {
	r.space()
	if r.peek() == closing {
		r.off++
		r.depth--
		return true
	}
	return false
}

// key reads an object key and the colon after it. The key may alias data.
func (r *reader) key() ([]byte, bool) {
	if r.peek() != '"' {
		r.bad = true
		return nil, false
	}
	k, ok := r.str()
	if !ok || !r.colon() {
		return nil, false
	}
	return k, true
}

// colon reads the colon after a key, and the whitespace around it.
func (r *reader) colon() bool {
	r.space()
	if r.peek() != ':' {
		r.bad = true
		return false
	}
	r.off++
	r.space()
	return true
}

// generic reads the value at the cursor into the validator's document form
// and, with goForm, also into the form encoding/json gives an `any`
// (float64 numbers): the value of an interface-typed field. A number that
// does not fit a float64 is then a decode failure at the current field, and
// nil in the Go form, as encoding/json has it.
func (r *reader) generic(goForm bool) (doc, gov any) {
	switch c := r.peek(); c {
	case '{':
		if !r.enter() {
			return nil, nil
		}
		m := map[string]any{}
		var g map[string]any
		if goForm {
			g = map[string]any{}
		}
		if !r.empty('}') {
			for {
				kb, ok := r.key()
				if !ok {
					return nil, nil
				}
				k := string(kb)
				d, gv := r.generic(goForm)
				if r.bad {
					return nil, nil
				}
				m[k] = d
				if goForm {
					g[k] = gv
				}
				if !r.next('}') {
					break
				}
			}
		}
		if goForm {
			return m, g
		}
		return m, nil
	case '[':
		if !r.enter() {
			return nil, nil
		}
		a := make([]any, 0)
		var g []any
		if goForm {
			g = make([]any, 0)
		}
		if !r.empty(']') {
			for {
				d, gv := r.generic(goForm)
				if r.bad {
					return nil, nil
				}
				a = append(a, d)
				if goForm {
					g = append(g, gv)
				}
				if !r.next(']') {
					break
				}
			}
		}
		if goForm {
			return a, g
		}
		return a, nil
	case '"':
		s, ok := r.str()
		if !ok {
			return nil, nil
		}
		v := any(string(s))
		return v, v
	case 't':
		return r.literal("true", true)
	case 'f':
		return r.literal("false", false)
	case 'n':
		return r.literal("null", nil)
	}
	num, ok := r.number()
	if !ok {
		return nil, nil
	}
	doc = json.Number(num)
	if goForm {
		f, err := strconv.ParseFloat(string(num), 64)
		if err != nil {
			r.saveType()
			return doc, nil
		}
		gov = f
	}
	return doc, gov
}

// literal reads true, false or null.
func (r *reader) literal(word string, v any) (any, any) {
	if len(r.data)-r.off < len(word) || string(r.data[r.off:r.off+len(word)]) != word {
		r.bad = true
		return nil, nil
	}
	r.off += len(word)
	return v, v
}

// number reads a number and returns its text.
func (r *reader) number() ([]byte, bool) {
	start := r.off
	if n := numberLen(r.data[r.off:]); n > 0 {
		r.off += n
		return r.data[start:r.off], true
	}
	r.bad = true
	return nil, false
}

// numberLen returns the length of the JSON number at the start of b, or 0
// when b does not start with one.
func numberLen(b []byte) int {
	i := 0
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return 0
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0
		}
	}
	return i
}

// validNumber reports whether s is one JSON number, nothing more.
func validNumber(s string) bool {
	return len(s) > 0 && numberLen([]byte(s)) == len(s)
}

// str reads a string and returns its contents, unescaped. Contents without
// escapes or invalid UTF-8 alias data; the rest are copied.
func (r *reader) str() ([]byte, bool) {
	start := r.off + 1
	i := start
	for i < len(r.data) {
		c := r.data[i]
		switch {
		case c == '"':
			r.off = i + 1
			return r.data[start:i], true
		case c == '\\' || c < 0x20:
			return r.strSlow(start, i)
		case c < utf8.RuneSelf:
			i++
		default:
			ru, size := utf8.DecodeRune(r.data[i:])
			if ru == utf8.RuneError && size == 1 {
				return r.strSlow(start, i)
			}
			i += size
		}
	}
	r.bad = true
	return nil, false
}

// strSlow unescapes a string whose first i-start bytes need nothing.
func (r *reader) strSlow(start, i int) ([]byte, bool) {
	b := make([]byte, 0, i-start+16)
	b = append(b, r.data[start:i]...)
	for i < len(r.data) {
		c := r.data[i]
		switch {
		case c == '"':
			r.off = i + 1
			return b, true
		case c < 0x20:
			r.bad = true
			return nil, false
		case c == '\\':
			if i+1 >= len(r.data) {
				r.bad = true
				return nil, false
			}
			switch e := r.data[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				ru := hex4(r.data[i+2:])
				if ru < 0 {
					r.bad = true
					return nil, false
				}
				i += 6
				if utf16.IsSurrogate(ru) {
					// A valid pair is one character; anything else
					// stands for U+FFFD, and a second escape that is
					// not the pair's low half is read on its own.
					if lo := r.escapedRune(i); lo >= 0 {
						if pair := utf16.DecodeRune(ru, lo); pair != utf8.RuneError {
							b = utf8.AppendRune(b, pair)
							i += 6
							continue
						}
					}
					ru = utf8.RuneError
				}
				b = utf8.AppendRune(b, ru)
				continue
			default:
				r.bad = true
				return nil, false
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			ru, size := utf8.DecodeRune(r.data[i:])
			b = utf8.AppendRune(b, ru) // invalid bytes become U+FFFD
			i += size
		}
	}
	r.bad = true
	return nil, false
}

// escapedRune returns the value of a \uXXXX escape at data[i:], or -1.
func (r *reader) escapedRune(i int) rune {
	if i+1 >= len(r.data) || r.data[i] != '\\' || r.data[i+1] != 'u' {
		return -1
	}
	return hex4(r.data[i+2:])
}

// hex4 decodes four hexadecimal digits at the start of b, or returns -1.
func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		v = v<<4 | rune(c)
	}
	return v
}
