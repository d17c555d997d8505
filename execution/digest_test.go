package execution_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/execution"
)

func TestArgumentsDigest(t *testing.T) {
	// Each group is one set of arguments written several ways.
	same := []struct {
		name      string
		spellings []string
	}{
		{"key order and whitespace", []string{`{"a":1,"b":[1,2]}`, ` { "b" : [1, 2], "a" : 1 } `, "{\n\t\"b\":[1,2],\n\t\"a\":1\n}"}},
		{"number spelling", []string{`{"n":1}`, `{"n":1.0}`, `{"n":1e0}`, `{"n":10E-1}`, `{"n":0.1e1}`}},
		{"string escapes", []string{`{"s":"a"}`, `{"s":"\u0061"}`, `{"\u0073":"\u0061"}`}},
		{"non-ASCII escapes", []string{`{"s":"é"}`, `{"s":"\u00e9"}`, `{"s":"\u00E9"}`}},
		{"negative zero", []string{`{"x":0}`, `{"x":-0}`, `{"x":-0.0}`}},
		{"no arguments", []string{``, ` `, `null`, ` null `, `{}`, ` { } `}},
		{"large numbers in ECMAScript form", []string{`{"n":1e20}`, `{"n":100000000000000000000}`, `{"n":1E+20}`}},
	}
	var digests []string
	for _, g := range same {
		t.Run(g.name, func(t *testing.T) {
			first, err := execution.ArgumentsDigest(json.RawMessage(g.spellings[0]))
			if err != nil || !strings.HasPrefix(first, "sha256:") || len(first) != len("sha256:")+64 {
				t.Fatalf("ArgumentsDigest(%s) = %q, %v", g.spellings[0], first, err)
			}
			for _, other := range g.spellings[1:] {
				d, err := execution.ArgumentsDigest(json.RawMessage(other))
				if err != nil {
					t.Errorf("ArgumentsDigest(%s): %v", other, err)
				} else if d != first {
					t.Errorf("%s and %s digest differently", g.spellings[0], other)
				}
			}
			digests = append(digests, first)
		})
	}
	for i := range digests {
		for j := i + 1; j < len(digests); j++ {
			if digests[i] == digests[j] {
				t.Errorf("groups %q and %q digest alike", same[i].name, same[j].name)
			}
		}
	}
}

// The digest is RFC 8785's: pinned against the canonical bytes of the RFC.
func TestArgumentsDigestIsJCS(t *testing.T) {
	// sha256sum of the bytes {"a":"a","n":1}, the RFC 8785 form of the
	// arguments below, computed outside Go.
	const want = "sha256:9e7a6b747a58f9d7ae927bb36636a65442a0b83fef4471f556788dd3fa8c3298"
	got, err := execution.ArgumentsDigest(json.RawMessage(`{ "n": 1.0, "a": "\u0061" }`))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("digest = %s, want %s", got, want)
	}
}

func TestArgumentsDigestRefuses(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"duplicate key", `{"k":1,"k":2}`, "duplicate"},
		{"duplicate key, differently escaped", `{"k":1,"\u006b":1}`, "duplicate"},
		{"nested duplicate key", `{"o":{"a":1,"a":1}}`, "duplicate"},
		{"truncated", `{`, "end of input"},
		{"trailing data", `{"a":1} x`, "trailing data"},
		{"number out of range", `{"n":1e999}`, "n"},
		{"lone surrogate", `{"s":"\ud800"}`, "surrogate"},
		{"invalid UTF-8", "{\"s\":\"\xff\"}", "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := execution.ArgumentsDigest(json.RawMessage(tt.args))
			if err == nil {
				t.Fatalf("ArgumentsDigest(%s) = %s, want an error", tt.args, d)
			}
			var f *execution.Failure
			if !errors.As(err, &f) || f.Code != execution.InvalidInput {
				t.Fatalf("error %v: want an invalid_input failure", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
}
