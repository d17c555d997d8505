package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/google/go-cmp/cmp"
)

// FuzzCanonicalize checks, for any input, that Canonicalize does not panic;
// that whatever it accepts is JSON that encoding/json also accepts; and that
// its output is JSON, canonical (a fixed point, members in UTF-16 order) and
// means what the input meant. Inputs it rejects must be malformed JSON or
// break one of the I-JSON rules it documents.
func FuzzCanonicalize(f *testing.F) {
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			if out != nil {
				t.Fatalf("output %q returned with error %v", out, err)
			}
			if !strings.HasPrefix(err.Error(), "canonjson: ") {
				t.Fatalf("error %q lacks the canonjson: prefix", err)
			}
			if json.Valid(in) && !isIJSONViolation(err) {
				t.Fatalf("rejected JSON that encoding/json accepts, for no I-JSON reason: %v", err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted %q, which encoding/json rejects", in)
		}
		if !json.Valid(out) {
			t.Fatalf("output %q is not valid JSON", out)
		}
		again, err := Canonicalize(out)
		if err != nil {
			t.Fatalf("canonicalizing the output %q: %v", out, err)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n first %q\nsecond %q", out, again)
		}
		var want, got any
		if err := json.Unmarshal(in, &want); err != nil {
			t.Fatalf("encoding/json cannot decode the accepted input: %v", err)
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("encoding/json cannot decode the output: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("output %q means something else than input %q (-input +output):\n%s", out, in, diff)
		}
		checkCanonicalOrder(t, out)
	})
}

// isIJSONViolation reports whether err is one of the rejections of JSON
// that RFC 8259 allows but RFC 8785 (through I-JSON) or MaxDepth forbids.
func isIJSONViolation(err error) bool {
	for _, reason := range []string{"duplicate member name", "invalid UTF-8", "unpaired UTF-16 surrogate", "out of the range of a double", "nesting deeper than"} {
		if strings.Contains(err.Error(), reason) {
			return true
		}
	}
	return false
}

// checkCanonicalOrder walks out with encoding/json's tokenizer and fails if
// the member names of an object are not strictly increasing as UTF-16,
// the order RFC 8785 §3.2.3 defines (computed here with utf16.Encode, not
// with the code under test).
func checkCanonicalOrder(t *testing.T, out []byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(out))
	type frame struct {
		object  bool
		wantKey bool
		last    []uint16
		first   bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("tokenizing output %q: %v", out, err)
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			key := utf16.Encode([]rune(tok.(string)))
			if !top.first && slices.Compare(top.last, key) >= 0 {
				t.Fatalf("output %q: member %q does not sort after the one before it", out, tok)
			}
			top.last, top.first, top.wantKey = key, false, false
			continue
		}
		if top != nil && top.object {
			top.wantKey = true // this token is (or opens) a member value
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantKey: true, first: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}
