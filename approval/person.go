package approval

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// SamePerson reports whether principal ids a and b may name the same
// person, for the rule that a requester cannot decide their own approval.
// It is the one comparison that rule uses (ADR 0066): the stores refuse
// such a decision with [ErrSelfApproval], and the inbox warns a requester
// looking at their own request.
//
// Two ids are the same person when they are spelled alike under any of:
//   - case: Unicode case folding ("Developer", "DEVELOPER"; the Kelvin sign
//     "K" is "k", "ß" is "ss"), because whether an issuer treats them as
//     one account is the issuer's choice; every two ids [strings.EqualFold]
//     says are equal are the same person;
//   - compatibility and width (NFKD): full-width "ｄ", the ligature "ﬁ",
//     mathematical bold "𝐝" and the one-code-point "é" fold into "d",
//     "fi", "d" and "e" plus an accent;
//   - marks and invisible characters, which are dropped: "é" is "e", and a
//     combining mark or a Hangul filler added to a name changes nothing;
//   - look-alike letters: Cyrillic, Greek, Armenian, Cherokee and other
//     letters drawn like Latin ones ("dеveloper" with a Cyrillic "е",
//     Greek "ο"), capital "I", "1" and "|" drawn like "l", "0" like "O",
//     and "rn", "vv", "cl" like "m", "w", "d" (a confusables skeleton in
//     the manner of Unicode TR39, over the letters listed in
//     confusable.go; ADR 0066 says why a list).
//
// Surrounding whitespace is ignored too, for approvals recorded before
// [CheckIdentity] refused it. Issuers are not compared: the same id from
// another issuer, or with an issuer nobody verified (a command-line
// -issuer), is the same person.
//
// The rule only ever refuses: two different people whose ids look alike
// need a third approver. It is never used to grant anything; where being
// the requester grants a right (cancelling one's own request), the store
// requires the same caller instead (the exact id and issuer,
// policy.Principal.Key). It is the one comparison of callers wider than
// that key, and only for this refusal (ADR 0058). Safe for concurrent use.
func SamePerson(a, b string) bool {
	return foldedForm(a) == foldedForm(b) || skeleton(a) == skeleton(b)
}

// foldedForm is an id case-folded, then reduced as [SamePerson] says: the
// look-alikes of lower-case letters mapped to them, marks and invisible
// characters dropped. Folding comes first, so that any two ids equal under
// case folding are equal here.
func foldedForm(id string) string {
	s := foldCase(norm.NFD.String(strings.TrimSpace(id)))
	return reduce(norm.NFD.String(s), nil)
}

// foldCase gives each letter of s one form for all its cases: the lower
// case of the smallest rune of its simple folding orbit, the orbits that
// strings.EqualFold compares by, so that ids equal under EqualFold are
// equal here; and "ß" becomes "ss", the one full case folding of a letter
// that neither NFKD nor the orbits make. (golang.org/x/text/cases.Fold
// would do, but swaps Cherokee's cases instead of folding them, so that
// two spellings equal under EqualFold fold apart: golang/go#46101.)
func foldCase(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		if low == 'ß' {
			b.WriteString("ss")
			continue
		}
		b.WriteRune(unicode.ToLower(low))
	}
	return b.String()
}

// skeleton is an id reduced as [SamePerson] says without folding case:
// capital look-alikes map to Latin capitals, so that Greek "Ν" is Latin
// "N" here (case folding would make it "ν", which looks like "v"), and
// capital "I" is "l", which case folding would make "i".
func skeleton(id string) string {
	return reduce(norm.NFD.String(strings.TrimSpace(id)), casedLookalikes)
}

// reduce maps the look-alikes in s, which is in NFD, to Latin letters
// (cased first, when given), then again once NFKD has folded its
// compatibility characters (full-width, mathematical, ligatures) into
// plain ones; it drops marks and invisible characters, and rewrites the
// multi-letter look-alikes. Mapping before NFKD too keeps the look-alikes
// that NFKD turns into other letters (the lunate sigma "ϲ", drawn like
// "c", is "ς" in NFKD).
func reduce(s string, cased map[rune]rune) string {
	latin := func(r rune) rune {
		if unicode.Is(unicode.Cherokee, r) {
			r = unicode.ToUpper(r) // the table lists its capitals
		}
		if l, ok := cased[r]; ok {
			return l
		}
		if l, ok := lookalikes[r]; ok {
			return l
		}
		return r
	}
	s = norm.NFKD.String(strings.Map(latin, s))
	s = strings.Map(func(r rune) rune {
		if invisible(r) {
			return -1
		}
		return latin(r)
	}, s)
	return lookalikeSequences.Replace(s)
}

// invisible reports whether r draws nothing on its own, or nothing at all:
// combining and enclosing marks (what NFD splits off "é"), format
// characters, and the blank letters (Hangul fillers, the braille blank).
func invisible(r rune) bool {
	switch r {
	case '\u115f', '\u1160', '\u3164', '\uffa0', '\u2800':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf)
}
