package approval

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSamePerson(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       bool
	}{
		{"exact", "developer", "developer", true},
		{"case", "developer", "DeVeLoPeR", true},
		{"surrounding space", "developer", " developer ", true},
		{"Cyrillic е", "developer", "d\u0435veloper", true},
		{"Cyrillic о", "developer", "devel\u043eper", true},
		{"Cyrillic р", "developer", "develo\u0440er", true},
		{"Cyrillic а and с", "carla", "\u0441\u0430rla", true},
		{"Cyrillic capitals", "DEVELOPER", "D\u0415VEL\u041eP\u0415R", true},
		{"all Cyrillic, one script", "cop", "\u0441\u043e\u0440", true},
		{"Greek ο", "developer", "devel\u03bfper", true},
		{"Greek capital Ν", "Nina", "\u039dina", true},
		{"Greek lunate sigma", "cat", "\u03f2at", true},
		{"Armenian օ", "bob", "b\u0585b", true},
		{"Cherokee capitals", "DEW", "\u13a0\u13ac\u13b3", true},
		{"full-width ｄ", "developer", "\uff44eveloper", true},
		{"all full-width", "developer", "ｄｅｖｅｌｏｐｅｒ", true},
		{"ligature ﬁ", "fiona", "\ufb01ona", true},
		{"precomposed and combining é", "jos\u00e9", "jose\u0301", true},
		{"an accent dropped", "jose", "jos\u00e9", true},
		{"Kelvin sign", "kate", "\u212aate", true},
		{"sharp s", "strasse", "stra\u00dfe", true},
		{"mathematical bold", "developer", "\U0001d41d\U0001d41e\U0001d42f\U0001d41e\U0001d425\U0001d428\U0001d429\U0001d41e\U0001d42b", true},
		{"mathematical fraktur capital", "Developer", "\U0001d507eveloper", true},
		{"capital I for l", "developer", "deveIoper", true},
		{"digit 1 for l", "developer", "deve1oper", true},
		{"vertical line for l", "developer", "deve|oper", true},
		{"digit 0 for O", "OTTO", "0TT0", true},
		{"rn for m", "mallory", "rnallory", true},
		{"vv for w", "wendy", "vvendy", true},
		{"a combining grapheme joiner added", "developer", "devel\u034foper", true},
		{"a combining mark added", "developer", "developer\u0323", true},
		{"a Hangul filler added", "developer", "developer\u3164", true},
		{"dotted capital I", "ilse", "\u0130lse", true},
		{"another name", "developer", "bob", false},
		{"a letter more", "developer", "developers", false},
		{"a letter less", "anna", "ann", false},
		{"i is not l", "lisa", "iisa", false},
		{"upper-case AN is not lan", "IAN", "lan", false},
		{"other Cyrillic", "developer", "\u0434\u0435\u0432\u0435\u043b\u043e\u043f\u0435\u0440", false}, // девелопер, read aloud the same, drawn otherwise
		{"empty and a name", "", "developer", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SamePerson(tt.a, tt.b); got != tt.want {
				t.Errorf("SamePerson(%q, %q) = %v, want %v (folded %q %q, skeleton %q %q)", tt.a, tt.b, got, tt.want,
					foldedForm(tt.a), foldedForm(tt.b), skeleton(tt.a), skeleton(tt.b))
			}
			if got := SamePerson(tt.b, tt.a); got != tt.want {
				t.Errorf("SamePerson(%q, %q) = %v, want %v: not symmetric", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

// TestLookalikes ties the look-alike tables to SamePerson: each letter is
// the same person as the Latin letter it is listed as, and also inside a
// name.
func TestLookalikes(t *testing.T) {
	for name, m := range map[string]map[rune]rune{"lookalikes": lookalikes, "casedLookalikes": casedLookalikes} {
		for from, to := range m {
			if to >= utf8.RuneSelf {
				t.Errorf("%s: %U maps to %U, want ASCII", name, from, to)
			}
			if !SamePerson(string(from), string(to)) || !SamePerson("x"+string(from)+"x", "x"+string(to)+"x") {
				t.Errorf("%s: %q (%U) is not the same person as %q", name, from, from, to)
			}
		}
	}
}

// FuzzSamePerson: whatever two ids are, SamePerson never parts what the
// rule it replaces (case folding, surrounding space ignored) kept
// together, is symmetric, and holds for an id and itself.
func FuzzSamePerson(f *testing.F) {
	for _, seed := range [][2]string{
		{"developer", "DEVELOPER"}, {"kate", "\u212aate"}, {"\u03a3\u03c3\u03c2", "\u03c3\u03a3\u03a3"}, {"\u1e9e", "\u00df"},
		{"\u017ftrasse", "STRASSE"}, {"\u0130", "i"}, {"\u03f9", "\u03f2"}, {"\u13a0\uab70", "\uab70\u13a0"}, {"I", "i"}, {"\u0399", "\u03b9"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) && !SamePerson(a, b) {
			t.Errorf("%q and %q are equal under case folding, but not SamePerson", a, b)
		}
		if SamePerson(a, b) != SamePerson(b, a) {
			t.Errorf("SamePerson(%q, %q) is not symmetric", a, b)
		}
		if !SamePerson(a, a) {
			t.Errorf("SamePerson(%q, itself) = false", a)
		}
	})
}

// BenchmarkSamePerson: the comparison runs once per decision.
func BenchmarkSamePerson(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		SamePerson("developer@example.com", "d\u0435veloper@example.com")
	}
}
