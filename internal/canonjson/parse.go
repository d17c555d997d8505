package canonjson

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// kind is the type of a parsed JSON value.
type kind uint8

const (
	kindNull kind = iota
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// value is one parsed JSON value. A string's str is its decoded UTF-8 text,
// which aliases the input when the source had no escapes. An object's members
// are sorted by name in canonical order.
type value struct {
	kind    kind
	num     float64
	str     []byte
	elems   []value
	members []member
}

// member is one object member; off is the byte offset of its name in the
// input, kept to report duplicates.
type member struct {
	name  []byte
	off   int
	value value
}

// parser is a recursive-descent parser of RFC 8259 JSON that also enforces
// the I-JSON rules RFC 8785 depends on. It builds a tree rather than
// streaming because members can only be written once their object has been
// read and sorted.
type parser struct {
	in    []byte
	pos   int
	depth int
	path  []step // where the parser is, for error messages
}

// step is one level of a JSON path: an array index or an object member name.
type step struct {
	name  []byte
	index int
	elem  bool
}

// document parses the whole input: exactly one value, optionally surrounded
// by whitespace.
func (p *parser) document() (value, error) {
	v, err := p.value()
	if err != nil {
		return value{}, err
	}
	p.skipSpace()
	if p.pos < len(p.in) {
		return value{}, p.errorf(p.pos, "trailing data %s after the JSON value", quoteChar(p.in[p.pos]))
	}
	return v, nil
}

func (p *parser) value() (value, error) {
	p.skipSpace()
	if p.pos >= len(p.in) {
		return value{}, p.errorf(p.pos, "unexpected end of input, want a value")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		return value{kind: kindString, str: s}, err
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	case c == 't':
		return p.literal("true", kindTrue)
	case c == 'f':
		return p.literal("false", kindFalse)
	case c == 'n':
		return p.literal("null", kindNull)
	default:
		return value{}, p.errorf(p.pos, "invalid character %s, want a value", quoteChar(c))
	}
}

func (p *parser) literal(text string, k kind) (value, error) {
	if !bytes.HasPrefix(p.in[p.pos:], []byte(text)) {
		return value{}, p.errorf(p.pos, "invalid literal, want %s", text)
	}
	p.pos += len(text)
	return value{kind: k}, nil
}

// enter records one more level of nesting at the '[' or '{' at p.pos.
func (p *parser) enter() error {
	if p.depth >= MaxDepth {
		return p.errorf(p.pos, "nesting deeper than %d levels", MaxDepth)
	}
	p.depth++
	p.pos++
	return nil
}

func (p *parser) array() (value, error) {
	if err := p.enter(); err != nil {
		return value{}, err
	}
	v := value{kind: kindArray}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		p.path = append(p.path, step{index: len(v.elems), elem: true})
		e, err := p.value()
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return value{}, err
		}
		v.elems = append(v.elems, e)
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errorf(p.pos, "unexpected end of input, want ',' or ']'")
		}
		switch c := p.in[p.pos]; c {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return v, nil
		default:
			return value{}, p.errorf(p.pos, "invalid character %s after array element, want ',' or ']'", quoteChar(c))
		}
	}
}

func (p *parser) object() (value, error) {
	if err := p.enter(); err != nil {
		return value{}, err
	}
	v := value{kind: kindObject}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		p.depth--
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errorf(p.pos, "unexpected end of input, want a member name")
		}
		if c := p.in[p.pos]; c != '"' {
			return value{}, p.errorf(p.pos, "invalid character %s, want a member name", quoteChar(c))
		}
		off := p.pos
		name, err := p.string()
		if err != nil {
			return value{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errorf(p.pos, "unexpected end of input, want ':'")
		}
		if c := p.in[p.pos]; c != ':' {
			return value{}, p.errorf(p.pos, "invalid character %s after member name, want ':'", quoteChar(c))
		}
		p.pos++
		p.path = append(p.path, step{name: name})
		e, err := p.value()
		p.path = p.path[:len(p.path)-1]
		if err != nil {
			return value{}, err
		}
		v.members = append(v.members, member{name: name, off: off, value: e})
		p.skipSpace()
		if p.pos >= len(p.in) {
			return value{}, p.errorf(p.pos, "unexpected end of input, want ',' or '}'")
		}
		switch c := p.in[p.pos]; c {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return v, p.sortMembers(v.members)
		default:
			return value{}, p.errorf(p.pos, "invalid character %s after object member, want ',' or '}'", quoteChar(c))
		}
	}
}

// sortMembers puts ms in canonical order and rejects duplicate names, which
// sorting makes adjacent.
func (p *parser) sortMembers(ms []member) error {
	slices.SortFunc(ms, func(a, b member) int { return compareUTF16(a.name, b.name) })
	for i := 1; i < len(ms); i++ {
		if bytes.Equal(ms[i-1].name, ms[i].name) {
			return p.errorf(max(ms[i-1].off, ms[i].off), "duplicate member name %s", quoteText(ms[i].name))
		}
	}
	return nil
}

// string parses the string starting at the '"' at p.pos and returns its
// decoded text.
func (p *parser) string() ([]byte, error) {
	start := p.pos
	p.pos++
	var buf []byte // the decoded text, once an escape makes it differ from the input
	escaped := false
	lit := p.pos // start of the run of input not yet copied into buf
	for p.pos < len(p.in) {
		c := p.in[p.pos]
		switch {
		case c == '"':
			run := p.in[lit:p.pos]
			p.pos++
			if !escaped {
				return run[:len(run):len(run)], nil
			}
			return append(buf, run...), nil
		case c == '\\':
			if !escaped {
				buf = make([]byte, 0, p.pos-lit+16)
				escaped = true
			}
			buf = append(buf, p.in[lit:p.pos]...)
			var err error
			if buf, err = p.escape(buf); err != nil {
				return nil, err
			}
			lit = p.pos
		case c < 0x20:
			return nil, p.errorf(p.pos, "control character U+%04X in string must be escaped", c)
		case c < utf8.RuneSelf:
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, p.errorf(p.pos, "invalid UTF-8 in string")
			}
			p.pos += size
		}
	}
	return nil, p.errorf(start, "unterminated string")
}

// escape decodes the escape sequence at the '\' at p.pos onto buf.
func (p *parser) escape(buf []byte) ([]byte, error) {
	at := p.pos
	if p.pos+1 >= len(p.in) {
		return nil, p.errorf(p.pos, "unterminated string")
	}
	c := p.in[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		r, ok := hex4(p.in[p.pos:])
		if !ok {
			return nil, p.errorf(at, "invalid \\u escape, want four hexadecimal digits")
		}
		p.pos += 4
		if !utf16.IsSurrogate(r) {
			return utf8.AppendRune(buf, r), nil
		}
		// I-JSON forbids unpaired surrogates: a high one must be followed
		// by an escaped low one, and a low one cannot come first.
		if r >= 0xDC00 {
			return nil, p.errorf(at, "unpaired UTF-16 surrogate \\u%04x", r)
		}
		if rest := p.in[p.pos:]; len(rest) >= 2 && rest[0] == '\\' && rest[1] == 'u' {
			if lo, ok := hex4(rest[2:]); ok && 0xDC00 <= lo && lo <= 0xDFFF {
				p.pos += 6
				return utf8.AppendRune(buf, utf16.DecodeRune(r, lo)), nil
			}
		}
		return nil, p.errorf(at, "unpaired UTF-16 surrogate \\u%04x", r)
	default:
		return nil, p.errorf(at, "invalid escape %s in string", quoteText(p.in[at:p.pos]))
	}
}

// hex4 decodes the four hexadecimal digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// number parses the number at p.pos as an IEEE-754 double.
func (p *parser) number() (value, error) {
	start := p.pos
	in := p.in
	i := p.pos
	if in[i] == '-' {
		i++
	}
	switch {
	case i < len(in) && in[i] == '0':
		i++
		if i < len(in) && isDigit(in[i]) {
			return value{}, p.errorf(start, "invalid number: leading zero")
		}
	case i < len(in) && isDigit(in[i]):
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	default:
		return value{}, p.errorf(start, "invalid number: want a digit after '-'")
	}
	intEnd := i
	if i < len(in) && in[i] == '.' {
		i++
		if i >= len(in) || !isDigit(in[i]) {
			return value{}, p.errorf(start, "invalid number: want a digit after '.'")
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	}
	if i < len(in) && (in[i] == 'e' || in[i] == 'E') {
		i++
		if i < len(in) && (in[i] == '+' || in[i] == '-') {
			i++
		}
		if i >= len(in) || !isDigit(in[i]) {
			return value{}, p.errorf(start, "invalid number: want a digit in the exponent")
		}
		for i < len(in) && isDigit(in[i]) {
			i++
		}
	}
	p.pos = i
	text := in[start:i]

	// Fast path: integers of up to 15 digits are exact in a double, so
	// they need neither strconv nor the string it would allocate.
	if i == intEnd {
		digits := text
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) <= 15 {
			var n int64
			for _, c := range digits {
				n = n*10 + int64(c-'0')
			}
			f := float64(n)
			if text[0] == '-' {
				f = -f
			}
			return value{kind: kindNumber, num: f}, nil
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return value{}, p.errorf(start, "number %s is out of the range of a double", quoteText(text))
		}
		return value{}, p.errorf(start, "invalid number %s", quoteText(text))
	}
	return value{kind: kindNumber, num: f}, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *parser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// errorf returns an error that says what is wrong, at which byte offset and
// at which JSON path.
func (p *parser) errorf(off int, format string, args ...any) error {
	return fmt.Errorf("canonjson: %s at offset %d (path %s)", fmt.Sprintf(format, args...), off, p.pathString())
}

// pathString formats p.path as a JSONPath-like expression: $.name[3]["a b"].
func (p *parser) pathString() string {
	var b strings.Builder
	b.WriteByte('$')
	for _, s := range p.path {
		switch {
		case s.elem:
			fmt.Fprintf(&b, "[%d]", s.index)
		case isIdentifier(s.name):
			b.WriteByte('.')
			b.Write(s.name)
		default:
			b.WriteByte('[')
			b.WriteString(quoteText(s.name))
			b.WriteByte(']')
		}
	}
	return b.String()
}

func isIdentifier(name []byte) bool {
	if len(name) == 0 || len(name) > maxQuoted {
		return false
	}
	for i, c := range name {
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !isDigit(c)) {
			return false
		}
	}
	return true
}

// maxQuoted bounds how much of the input an error message repeats, so that
// a hostile megabyte-long name does not become a megabyte-long error.
const maxQuoted = 64

// quoteText quotes b for an error message, shortened to maxQuoted bytes.
func quoteText(b []byte) string {
	if len(b) <= maxQuoted {
		return strconv.Quote(string(b))
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strconv.Quote(string(b[:cut])) + "..."
}

// quoteChar quotes one input byte for an error message.
func quoteChar(c byte) string {
	if c < utf8.RuneSelf {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}
