package wire

import "unicode/utf8"

// What json.Marshal writes of a tool result's structured content (a
// json.RawMessage: compacted, HTML-escaped) and of a text block's text (a
// string: quoted, HTML-escaped), written straight into the response
// buffer instead of into a fresh slice each and then copied. The
// structured content of a projected result is the canonical envelope,
// already compact: it is checked and escaped in one pass, without
// encoding/json's scanner.

// appendRaw appends what json.Marshal(json.RawMessage(src)) writes, and
// reports whether it did: src must be one JSON value without insignificant
// whitespace (what the projection writes); for anything else it reports
// false, and the caller asks json.Marshal. It never accepts what
// encoding/json refuses (FuzzAppendRaw).
func appendRaw(dst, src []byte) ([]byte, bool) {
	end, ok := compactValue(src, 0, 0)
	if !ok || end != len(src) {
		return dst, false
	}
	start := 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '<' || c == '>' || c == '&':
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			// U+2028 and U+2029
			dst = append(dst, src[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			start = i + 3
			i += 2
		}
	}
	return append(dst, src[start:]...), true
}

// maxCompactDepth bounds the nesting appendRaw reads itself; deeper
// documents go to json.Marshal.
const maxCompactDepth = 512

// compactValue reads one JSON value without whitespace at src[i:] and
// returns where it ends, or false.
func compactValue(src []byte, i, depth int) (int, bool) {
	if i >= len(src) {
		return 0, false
	}
	switch c := src[i]; {
	case c == '{':
		if depth >= maxCompactDepth {
			return 0, false
		}
		i++
		if i < len(src) && src[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(src) || src[i] != '"' {
				return 0, false
			}
			var ok bool
			if i, ok = compactString(src, i); !ok || i >= len(src) || src[i] != ':' {
				return 0, false
			}
			if i, ok = compactValue(src, i+1, depth+1); !ok || i >= len(src) {
				return 0, false
			}
			switch src[i] {
			case '}':
				return i + 1, true
			case ',':
				i++
			default:
				return 0, false
			}
		}
	case c == '[':
		if depth >= maxCompactDepth {
			return 0, false
		}
		i++
		if i < len(src) && src[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = compactValue(src, i, depth+1); !ok || i >= len(src) {
				return 0, false
			}
			switch src[i] {
			case ']':
				return i + 1, true
			case ',':
				i++
			default:
				return 0, false
			}
		}
	case c == '"':
		return compactString(src, i)
	case c == 't':
		return literal(src, i, "true")
	case c == 'f':
		return literal(src, i, "false")
	case c == 'n':
		return literal(src, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return number(src, i)
	}
	return 0, false
}

func literal(src []byte, i int, lit string) (int, bool) {
	if len(src)-i < len(lit) || string(src[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func number(src []byte, i int) (int, bool) {
	if src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case i < len(src) && src[i] >= '1' && src[i] <= '9':
		i = digits(src, i)
	default:
		return 0, false
	}
	if i < len(src) && src[i] == '.' {
		j := digits(src, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		j := digits(src, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(src []byte, i int) int {
	for i < len(src) && src[i] >= '0' && src[i] <= '9' {
		i++
	}
	return i
}

// compactString reads a JSON string at src[i] ('"') and returns where it
// ends: no control character, escapes as JSON defines them (bytes that
// are not UTF-8 pass, as encoding/json's scanner lets them).
func compactString(src []byte, i int) (int, bool) {
	for i++; i < len(src); i++ {
		switch c := src[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			i++
			if i >= len(src) {
				return 0, false
			}
			switch src[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(src)-i <= 4 {
					return 0, false
				}
				for _, h := range src[i+1 : i+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				i += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// appendQuoted appends s as json.Marshal(s) writes it: HTML-escaped,
// U+2028 and U+2029 escaped, each byte that is not UTF-8 as \ufffd.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"
