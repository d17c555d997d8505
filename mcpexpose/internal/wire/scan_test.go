package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	segjson "github.com/segmentio/encoding/json"
)

// checkComposite requires rawComposite to take b (an object or array,
// whitespace around it) exactly when it is valid JSON, to both encoding/json
// and segmentio (whose Valid the edge no longer runs over a body the
// strict scanner read), with valid UTF-8 strings and numbers encoding/json
// decodes into an any (none beyond a double's range), not nested deeper
// than the fast path reads.
func checkComposite(t *testing.T, b []byte) {
	t.Helper()
	p := scanner{b: b}
	p.ws()
	took := p.i < len(b) && (b[p.i] == '{' || b[p.i] == '[') && p.rawComposite() != nil && p.end()
	if took && (!json.Valid(b) || !segjson.Valid(b)) {
		t.Fatalf("rawComposite took %q, which is not valid JSON", b)
	}
	deep := bytes.Count(b, []byte("{"))+bytes.Count(b, []byte("[")) > fastMaxDepth
	trimmed := bytes.TrimLeft(b, " \t\r\n")
	composite := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
	if took && json.Unmarshal(b, new(any)) != nil {
		t.Fatalf("rawComposite took %q, which encoding/json does not decode", b)
	}
	if !took && composite && !deep && utf8.Valid(b) && json.Valid(b) && json.Unmarshal(b, new(any)) == nil {
		t.Fatalf("rawComposite refused %q, valid JSON", b)
	}
}

func TestRawCompositeValid(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, ` { } `, `{"a":1}`, `{"a" : [1, -2.5e+3, 0, -0, 1E9, true, false, null, "x"]}`,
		`{"a":"\"\\\/\b\f\n\r\t\u00e9\uD83D\ude00"}`, `{"é":"ü€😀"}`, `[[[[]]]]`, `{"a":{"b":{"c":[{}]}}}`,
		`{"a":"\ud800"}`, "{\"a\":\"\x7f\"}", `[1e308,-1.7976931348623157e308,1e-400,0.1e-999]`, `[` + strings.Repeat("9", 308) + `]`,
		`[1e400]`, `[-1E+309]`, `[1.7976931348623159e308]`, `{"a":[0.1e310]}`, `[` + strings.Repeat("9", 309) + `]`,
		// not valid
		`{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[01]`, `[1.]`, `[.5]`, `[1e]`, `[-]`, `[+1]`, `[tru]`, `[nul]`,
		`{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`, "{\"a\":\"\t\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc3\"}",
		`{a:1}`, `{'a':1}`, `[1 2]`, `{"a":1 "b":2}`, `[NaN]`, `[Infinity]`, `{"a":1}}`, `[1]]`, `{"a":[}`, `["a]`,
		`{"a":1}x`, `[1] [2]`, "[\"\\",
	} {
		checkComposite(t, []byte(s))
	}
	deep := strings.Repeat("[", fastMaxDepth+1) + strings.Repeat("]", fastMaxDepth+1)
	if p := (scanner{b: []byte(deep)}); p.rawComposite() != nil {
		t.Error("rawComposite took a composite nested deeper than the fast path reads")
	}
}

// TestReadValidates: a body Call.Read reads is valid JSON, whatever is in
// its _meta and arguments, so that readRecord need not check it again.
func TestReadValidates(t *testing.T) {
	const ok = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":%s}}`
	for args, want := range map[string]bool{
		`{"message":"hello"}`:     true,
		`{"message":"h\u00e9\n"}`: true,
		`{"n":[1,2.5,-3e2]}`:      true,
		`{"message":"hello"`:      false,
		`{"message":"hel"lo"}`:    false,
		`{"n":[1,2,]}`:            false,
		`{"n":01}`:                false,
		"{\"m\":\"\x01\"}":        false,
	} {
		body := []byte(strings.Replace(ok, "%s", args, 1))
		var fc Call
		if got := fc.Read(body, true); got != want || got && !segjson.Valid(body) {
			t.Errorf("Read(%s) = %v, want %v", body, got, want)
		}
	}
}

func FuzzRawComposite(f *testing.F) {
	for _, s := range []string{`{"a":[1,"x",{"b":null}]}`, `[true,false,-0.5e-3]`, `{"a":"\u00e9\n"}`, `{"é":"😀"}`, `[1,]`, `{"a"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkComposite(t, b)
		for _, modern := range []bool{true, false} {
			var fc Call
			if fc.Read(b, modern) && !segjson.Valid(b) {
				t.Fatalf("Read took %q, which is not valid JSON", b)
			}
		}
	})
}
