package canonjson

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

// canon canonicalizes in and fails the test on error.
func canon(t *testing.T, in string) string {
	t.Helper()
	out, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatalf("Canonicalize(%q): %v", in, err)
	}
	return string(out)
}

// The two worked examples of RFC 8785: §3.2.2 (values, escaping, numbers) and
// §3.2.3 (member order), with the canonical bytes the RFC prints.
func TestRFC8785Examples(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{
			name: "3.2.2 values",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "3.2.3 sorting",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: `{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, canon(t, tt.in)); diff != "" {
				t.Errorf("canonical form (-want +got):\n%s", diff)
			}
		})
	}
}

// RFC 8785 Appendix B and the number examples of §3.2.2.3, written as JSON
// text the way a producer might spell them.
func TestNumbers(t *testing.T) {
	tests := []struct{ in, want string }{
		{"0", "0"},
		{"-0", "0"},
		{"-0.0e5", "0"},
		{"1", "1"},
		{"1.0", "1"},
		{"1e0", "1"},
		{"10E-1", "1"},
		{"-1", "-1"},
		{"4.50", "4.5"},
		{"2e-3", "0.002"},
		{"0.002", "0.002"},
		{"0.000001", "0.000001"},
		{"1e-6", "0.000001"},
		{"1e-7", "1e-7"},
		{"-1.5e-7", "-1.5e-7"},
		{"1.5e-7", "1.5e-7"},
		{"1e20", "100000000000000000000"},
		{"1e21", "1e+21"},
		{"1E30", "1e+30"},
		{"1e23", "1e+23"},
		{"0.000000000000000000000000001", "1e-27"},
		{"9007199254740992", "9007199254740992"},
		{"-9007199254740992", "-9007199254740992"},
		{"9007199254740993", "9007199254740992"}, // not a double; rounds to even
		{"123456789012345678", "123456789012345680"},
		{"9999999999999999999", "10000000000000000000"},
		{"-18446744073709551616", "-18446744073709552000"},
		{"295147905179352830000", "295147905179352830000"},
		{"295147905179352825856", "295147905179352830000"},
		{"999999999999999700000", "999999999999999700000"},
		{"9.999999999999997e22", "9.999999999999997e+22"},
		{"1.0000000000000001e23", "1.0000000000000001e+23"},
		{"333333333.33333329", "333333333.3333333"},
		{"333333333.3333332", "333333333.3333332"},
		{"333333333.33333343", "333333333.33333343"},
		{"-0.0000033333333333333333", "-0.0000033333333333333333"},
		{"1424953923781206.2", "1424953923781206.2"},
		{"5e-324", "5e-324"},
		{"-5e-324", "-5e-324"},
		{"4.9406564584124654e-324", "5e-324"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"-1.7976931348623157e+308", "-1.7976931348623157e+308"},
		{"1e-400", "0"}, // underflow rounds to zero, as in IEEE-754 and JSON.parse
		{"-1e-400", "0"},
		{"123456789012345", "123456789012345"}, // the integer fast path
		{"-999999999999999", "-999999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := canon(t, tt.in); got != tt.want {
				t.Errorf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestNumberECMAScript checks the number layout against output of a real
// ECMAScript engine (testdata/es6numbers.js describes the doubles), both
// directly and through the parser with the double written in 17 digits.
func TestNumberECMAScript(t *testing.T) {
	f, err := os.Open("testdata/es6numbers.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		lines++
		bitsHex, want, ok := strings.Cut(sc.Text(), ",")
		if !ok {
			t.Fatalf("line %d: no comma: %q", lines, sc.Text())
		}
		bits, err := strconv.ParseUint(bitsHex, 16, 64)
		if err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		x := math.Float64frombits(bits)
		if got := string(appendNumber(nil, x)); got != want {
			t.Errorf("appendNumber(%s = %v) = %s, want %s", bitsHex, x, got, want)
			continue
		}
		in := strconv.FormatFloat(x, 'e', 16, 64)
		if got, err := Canonicalize([]byte(in)); err != nil || string(got) != want {
			t.Errorf("Canonicalize(%s) = %s, %v, want %s", in, got, err, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 2000 {
		t.Fatalf("read only %d lines of testdata/es6numbers.txt", lines)
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", `"abc"`, `"abc"`},
		{"empty", `""`, `""`},
		{"quote and backslash", `"\"\\"`, `"\"\\"`},
		{"solidus unescaped", `"\/"`, `"/"`},
		{"short forms", `"\b\f\n\r\t"`, `"\b\f\n\r\t"`},
		{"short forms from \\u", `"\u0008\u000C\u000a\u000D\u0009"`, `"\b\f\n\r\t"`},
		{"other controls lowercase hex", `"\u0000\u0001\u001F\u000b"`, `"\u0000\u0001\u001f\u000b"`},
		{"DEL raw", `"\u007f"`, "\"\x7f\""},
		{"html characters raw", `"\u003c\u003e\u0026<>&"`, `"<>&<>&"`},
		{"line separators raw", `"\u2028\u2029"`, "\"\u2028\u2029\""},
		{"C1 control raw", `"\u0080\u009f"`, "\"\u0080\u009f\""},
		{"non-ASCII raw", `"\u00e9\u00E9é"`, `"ééé"`},
		{"surrogate pair", `"\ud83d\ude00\uD83D\uDE00😀"`, `"😀😀😀"`},
		{"unnormalized kept", `"A\u030a"`, "\"A\u030a\""},
		{"U+FFFD kept", `"\ufffd` + "\uFFFD" + `"`, "\"\uFFFD\uFFFD\""},
		{"escape between runs", `"ab\u0063de\"f"`, `"abcde\"f"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canon(t, tt.in); got != tt.want {
				t.Errorf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestStructures(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"literals", " [ true , false , null ] ", `[true,false,null]`},
		{"empty", `[ {  } , [ ] , { "" : [ ] } ]`, `[{},[],{"":[]}]`},
		{"array order kept", `[3, 1, 2]`, `[3,1,2]`},
		{"nested sort", `{"b": {"z": 1, "y": [{"d": 0, "c": 0}]}, "a": null}`, `{"a":null,"b":{"y":[{"c":0,"d":0}],"z":1}}`},
		{"prefix sorts first", `{"ab": 1, "a": 2, "": 3}`, `{"":3,"a":2,"ab":1}`},
		{"digits sort as text", `{"10": 1, "9": 2, "1": 3}`, `{"1":3,"10":1,"9":2}`},
		{"case", `{"a": 1, "B": 2, "A": 3, "b": 4}`, `{"A":3,"B":2,"a":1,"b":4}`},
		{"locale ignored", `{"peach":1,"péché":2,"pêche":3,"sin":4}`, `{"peach":1,"péché":2,"pêche":3,"sin":4}`},
		{"names escaped like values", `{"\u000a": 1, "\"": 2, "\\": 3}`, `{"\n":1,"\"":2,"\\":3}`},
		{"names sorted on decoded text", `{"\u0062": 1, "a": 2}`, `{"a":2,"b":1}`},
		{"whitespace everywhere", "\r\n\t {\t\"a\"\n:\r[\n1\t,\t2\n]\n}\n\t", `{"a":[1,2]}`},
		{"scalar document", ` "x" `, `"x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := canon(t, tt.in); got != tt.want {
				t.Errorf("Canonicalize(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// TestCompareUTF16 checks compareUTF16 against the definition: comparing
// the UTF-16 encodings. The texts include the characters where UTF-8 byte
// order and UTF-16 order disagree (U+E000–U+FFFF against U+10000 and up).
func TestCompareUTF16(t *testing.T) {
	chars := []string{"", "a", "z", "\u0080", "é", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uf8ff", "\ufb33", "\uffff", "\U00010000", "\U0001f600", "\U0010ffff"}
	var texts []string
	for _, a := range chars {
		for _, b := range chars {
			texts = append(texts, a+b)
		}
	}
	want := func(a, b string) int {
		return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
	}
	for _, a := range texts {
		for _, b := range texts {
			if got, want := compareUTF16([]byte(a), []byte(b)), want(a, b); got != want {
				t.Errorf("compareUTF16(%+q, %+q) = %d, want %d", a, b, got, want)
			}
		}
	}
	// The case the RFC calls out, through the whole pipeline.
	if got, want := canon(t, `{"\ufb33":1,"\ud83d\ude00":2}`), "{\"😀\":2,\"\ufb33\":1}"; got != want {
		t.Errorf("got %s, want %s (UTF-16 order puts U+1F600 before U+FB33)", got, want)
	}
}

// Documents that differ only in their encoding canonicalize identically, and
// documents with different content do not.
func TestEquivalence(t *testing.T) {
	groups := [][]string{
		{`{"a":1,"b":[true,null]}`, ` { "b" : [ true , null ] , "a" : 1 } `, "{\n\t\"b\": [true, null],\n\t\"a\": 1.0\n}", `{"\u0061":1e0,"\u0062":[true,null]}`, `{"b":[true,null],"a":10E-1}`},
		{`{"a":2,"b":[true,null]}`},
		{`{"a":1,"b":[null,true]}`},
		{`{"a":1,"b":[true,null],"c":null}`},
		{`{"A":1,"b":[true,null]}`},
		{`"A"`, `"\u0041"`, `"\u0041"`},
		{`"a"`},
		{`"é"`, `"\u00e9"`, `"\u00E9"`},
		{`"e\u0301"`}, // the same glyph unnormalized is a different string
		{`"😀"`, `"\ud83d\ude00"`},
		{`"</"`, `"\u003c\/"`},
		{`0`, `-0`, `0.0`, `0e10`},
		{`100`, `1e2`, `100.000`, `0.1e3`},
		{`"100"`},
		{`[]`, `[ ]`},
		{`{}`, `{ }`},
		{`null`},
		{`[null]`},
	}
	seen := map[string]int{} // canonical form -> group
	for gi, g := range groups {
		first := canon(t, g[0])
		for _, in := range g[1:] {
			if got := canon(t, in); got != first {
				t.Errorf("Canonicalize(%s) = %s, want %s as for %s", in, got, first, g[0])
			}
		}
		if other, dup := seen[first]; dup {
			t.Errorf("%s and %s are different documents but both canonicalize to %s", g[0], groups[other][0], first)
		}
		seen[first] = gi

		d0, err := Digest([]byte(g[0]))
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range g[1:] {
			if d, err := Digest([]byte(in)); err != nil || d != d0 {
				t.Errorf("Digest(%s) = %s, %v, want %s", in, d, err, d0)
			}
		}
	}
}

func TestDigest(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// sha256sum of the canonical bytes the RFC prints for §3.2.2, so a
		// host in another language can check that it agrees.
		{"RFC 8785 3.2.2", `{"numbers":[333333333.33333329,1E30,4.50,2e-3,0.000000000000000000000000001],"string":"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/","literals":[null,true,false]}`, "sha256:2d5e01a318d0f0879ab568c4be289c8b1f64ef8921a53c6277d5e069978baacb"},
		{"reordered", `{ "b": 1.0, "a": [ true ] }`, "sha256:708747538ba81fd60b5aac8c646370de5e24abf70ab1872f67458a5a4f3af05d"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Digest([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Digest = %s, want %s", got, tt.want)
			}
			c := canon(t, tt.in)
			sum := sha256.Sum256([]byte(c))
			if want := "sha256:" + hex.EncodeToString(sum[:]); got != want {
				t.Errorf("Digest = %s, but the SHA-256 of the canonical form is %s", got, want)
			}
		})
	}
	if d, err := Digest([]byte(`{"a":1,"a":1}`)); err == nil || d != "" {
		t.Errorf("Digest of a duplicate-name object = %q, %v; want an error", d, err)
	}
}

func TestAppend(t *testing.T) {
	dst := []byte("prefix:")
	got, err := Append(dst, []byte(`{"b":2,"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `prefix:{"a":1,"b":2}`; string(got) != want {
		t.Errorf("Append = %s, want %s", got, want)
	}
	got, err = Append(dst, []byte(`{"b":2,"a":1} x`))
	if err == nil {
		t.Fatal("Append with trailing data: no error")
	}
	if string(got) != "prefix:" {
		t.Errorf("Append on error = %q, want dst unchanged", got)
	}
}

// The input must not be modified, and the output must not alias it (an
// unescaped string is held as a slice of the input while parsing).
func TestInputUntouched(t *testing.T) {
	in := []byte(`{"k":"value"}`)
	orig := bytes.Clone(in)
	out, err := Canonicalize(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, orig) {
		t.Fatalf("input modified: %s", in)
	}
	for i := range in {
		in[i] = 'x'
	}
	if string(out) != `{"k":"value"}` {
		t.Errorf("output changed with the input: %s", out)
	}
}

func TestDepth(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	objects := func(n int) string {
		return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
	}
	for _, in := range []string{nest("[", "]", MaxDepth), objects(MaxDepth), nest("[", "]", MaxDepth-1)} {
		if _, err := Canonicalize([]byte(in)); err != nil {
			t.Errorf("depth within MaxDepth: %v", err)
		}
	}
	for _, in := range []string{nest("[", "]", MaxDepth+1), objects(MaxDepth + 1), strings.Repeat("[", 100000), strings.Repeat(`{"a":`, 100000)} {
		_, err := Canonicalize([]byte(in))
		if err == nil || !strings.Contains(err.Error(), "nesting deeper than 1000 levels") {
			t.Errorf("Canonicalize(%.20s...) error = %v, want nesting error", in, err)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name, in string
		want     string // substring of the error message
	}{
		// I-JSON violations that plain JSON parsers accept.
		{"duplicate name", `{"a":1,"b":2,"a":3}`, `duplicate member name "a" at offset 13 (path $)`},
		{"duplicate through escape", `{"a":1,"\u0061":1}`, `duplicate member name "a" at offset 7`},
		{"duplicate nested", `[0,{"x":{"k":1,"k":1}}]`, `duplicate member name "k" at offset 15 (path $[1].x)`},
		{"invalid UTF-8", "\"a\xffb\"", "invalid UTF-8 in string at offset 2"},
		{"truncated UTF-8", "\"\xe2\x82\"", "invalid UTF-8"},
		{"overlong UTF-8", "\"\xc0\xaf\"", "invalid UTF-8"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "invalid UTF-8"},
		{"invalid UTF-8 in name", "{\"\xff\":1}", "invalid UTF-8"},
		{"lone high surrogate", `"\ud800"`, `unpaired UTF-16 surrogate \ud800 at offset 1`},
		{"lone low surrogate", `"\udc00"`, `unpaired UTF-16 surrogate \udc00`},
		{"reversed pair", `"\ude00\ud83d"`, `unpaired UTF-16 surrogate \ude00`},
		{"high then BMP escape", `"\ud83d\u0041"`, `unpaired UTF-16 surrogate \ud83d`},
		{"high then raw", `"\ud83dx"`, `unpaired UTF-16 surrogate \ud83d`},
		{"high then high", `"\ud83d\ud83d"`, `unpaired UTF-16 surrogate \ud83d`},
		{"low then low", `"\udc00\udc00"`, `unpaired UTF-16 surrogate \udc00 at offset 1`},
		{"number overflow", `1e400`, `number "1e400" is out of the range of a double at offset 0`},
		{"negative overflow", `[-1e400]`, `number "-1e400" is out of the range of a double at offset 1 (path $[0])`},
		{"max double rounds up", `1.7976931348623159e308`, `out of the range of a double`},
		{"path to the error", `{"a":[1,{"b c":1e999}]}`, `at offset 15 (path $.a[1]["b c"])`},

		// Plain syntax errors.
		{"empty", ``, `unexpected end of input, want a value at offset 0`},
		{"whitespace only", " \n", `unexpected end of input`},
		{"trailing data", `1 2`, `trailing data '2' after the JSON value at offset 2`},
		{"trailing object", `{} {}`, `trailing data`},
		{"trailing comma array", `[1,]`, `invalid character ']', want a value`},
		{"trailing comma object", `{"a":1,}`, `want a member name`},
		{"missing colon", `{"a" 1}`, `want ':'`},
		{"missing value", `{"a":}`, `want a value`},
		{"unquoted name", `{a:1}`, `want a member name`},
		{"single quotes", `'a'`, `invalid character '\'', want a value`},
		{"missing comma", `[1 2]`, `want ',' or ']'`},
		{"unclosed array", `[1`, `unexpected end of input, want ',' or ']'`},
		{"unclosed object", `{"a":1`, `unexpected end of input, want ',' or '}'`},
		{"unterminated string", `"abc`, `unterminated string at offset 0`},
		{"unterminated escape", `"abc\`, `unterminated string`},
		{"raw control", "\"a\tb\"", `control character U+0009 in string must be escaped`},
		{"raw newline", "\"a\nb\"", `control character U+000A`},
		{"bad escape", `"\x41"`, `invalid escape "\\x"`},
		{"bad unicode escape", `"\u12G4"`, `invalid \u escape`},
		{"short unicode escape", `"\u12"`, `invalid \u escape`},
		{"leading zero", `01`, `leading zero`},
		{"leading plus", `+1`, `invalid character '+'`},
		{"bare minus", `-`, `want a digit after '-'`},
		{"bare fraction", `.5`, `invalid character '.'`},
		{"empty fraction", `1.`, `want a digit after '.'`},
		{"empty exponent", `1e+`, `want a digit in the exponent`},
		{"NaN", `NaN`, `invalid character 'N'`},
		{"Infinity", `-Infinity`, `want a digit after '-'`},
		{"bad literal", `tru`, `invalid literal, want true`},
		{"literal case", `Null`, `invalid character 'N'`},
		{"literal suffix", `nullx`, `trailing data 'x'`},
		{"byte order mark", "\ufeff{}", `invalid character byte 0xef`},
		{"long name shortened", `{"` + strings.Repeat("n", 1000) + `":1,"` + strings.Repeat("n", 1000) + `":2}`, `duplicate member name "` + strings.Repeat("n", 64) + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Canonicalize([]byte(tt.in))
			if err == nil {
				t.Fatalf("Canonicalize(%q) = %s, want an error", tt.in, out)
			}
			if out != nil {
				t.Errorf("Canonicalize returned output %q with the error", out)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "canonjson: ") {
				t.Errorf("error %q lacks the canonjson: prefix", msg)
			}
			if !strings.Contains(msg, tt.want) {
				t.Errorf("error %q does not contain %q", msg, tt.want)
			}
			if len(msg) > 300 {
				t.Errorf("error is %d bytes long: %.100s...", len(msg), msg)
			}
		})
	}
}

func BenchmarkCanonicalize(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`{"tools":[`)
	for i := range 50 {
		if i > 0 {
			doc.WriteByte(',')
		}
		doc.WriteString(`{"name":"users.get_user_` + strconv.Itoa(i) + `","description":"Looks a user up by id \u2014 returns \"not_found\" otherwise.",` +
			`"inputSchema":{"type":"object","required":["id"],"properties":{"id":{"type":"integer","minimum":1,"maximum":9007199254740991},"verbose":{"type":"boolean","default":false},"ratio":{"type":"number","default":0.25}}},` +
			`"annotations":{"readOnlyHint":true,"title":"Get user"}}`)
	}
	doc.WriteString(`]}`)
	in := []byte(doc.String())
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var dst []byte
	for b.Loop() {
		var err error
		if dst, err = Append(dst[:0], in); err != nil {
			b.Fatal(err)
		}
	}
}
