package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// printable is s as the commands print an untrusted value: as it is when it
// is valid UTF-8, every character is printable (strconv.IsPrint: letters,
// marks, numbers, punctuation, symbols and U+0020 SPACE) and it does not
// start with a double quote; otherwise quoted with strconv.Quote, which
// escapes what is not printable (\n, \x1b, \u202e, invalid bytes). A
// newline, a tab, an ANSI escape or a bidirectional override in a
// requester, a summary or a note therefore cannot end a row, start a forged
// one or restyle the terminal, and ordinary text stays readable. A printed
// value that starts with a double quote is always a quoted one, so the two
// cannot be confused.
func printable(s string) string {
	if strings.HasPrefix(s, `"`) || !utf8.ValidString(s) {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// escapeJSON escapes, as \uXXXX, every character of a JSON text that is
// not printable. Valid JSON holds such characters only inside strings
// (between tokens there is only the whitespace json.Indent wrote), where
// \uXXXX means the same character, so the text stays valid JSON with the
// same value. keepNewlines keeps the line breaks json.Indent put between
// tokens. Invalid UTF-8 (which a store never records) prints as U+FFFD.
func escapeJSON(s string, keepNewlines bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' && keepNewlines, strconv.IsPrint(r):
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
