package canonjson

import (
	"cmp"
	"unicode/utf8"
)

// appendString writes the valid UTF-8 text s as a JSON string, escaping only
// what RFC 8785 §3.2.2.2 requires: '"', '\' and the controls U+0000–U+001F.
func appendString(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	run := 0 // start of the bytes not yet written
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[run:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		run = i + 1
	}
	dst = append(dst, s[run:]...)
	return append(dst, '"')
}

// compareUTF16 orders the valid UTF-8 texts a and b as RFC 8785 §3.2.3
// requires: as arrays of UTF-16 code units.
//
// UTF-8 byte order is code point order, and that is UTF-16 order except where
// a character above U+FFFF (a surrogate pair, whose first unit is in
// D800–DBFF) meets one in U+E000–U+FFFF: UTF-16 puts the pair first. So the
// bytes are compared up to the first character that differs, and only that
// pair of characters is ranked in UTF-16 terms.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmp.Compare(len(a), len(b)) // one is a prefix of the other
	}
	// Back up to the start of the differing characters; the bytes before i
	// are shared, so both start at the same place.
	for i > 0 && !(utf8.RuneStart(a[i]) && utf8.RuneStart(b[i])) {
		i--
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	return cmp.Compare(utf16Rank(ra), utf16Rank(rb))
}

// utf16Rank maps a character (never a surrogate: the text is valid UTF-8) to
// a number whose order is the order of the character's UTF-16 encoding:
// U+0000–U+D7FF, then U+10000–U+10FFFF, then U+E000–U+FFFF.
func utf16Rank(r rune) rune {
	if 0xE000 <= r && r <= 0xFFFF {
		return r + 0x200000 // above every character outside the BMP
	}
	return r
}
