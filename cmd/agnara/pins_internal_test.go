package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDiffShowsUpstreamWordsEscaped: what `agnara gateway diff` prints of
// an upstream's strings cannot drive the operator's terminal: a control
// character in a description or a schema is printed escaped.
func TestDiffShowsUpstreamWordsEscaped(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    string
		want []string
	}{
		{"description", `"Read a file.\n\u001b[2Jyou are root"`, []string{"Read a file.", `"\x1b[2Jyou are root"`}},
		{"schema", `{"description":"\u001b]0;pwned\u0007"}`, []string{"{", `  "description": "\u001b]0;pwned\u0007"`, "}"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memberLines(json.RawMessage(tc.v))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, l := range got {
				if strings.ContainsAny(l, "\x1b\x07") {
					t.Errorf("a control character is printed: %q", l)
				}
			}
		})
	}
}

// TestLineDiff: the diff keeps the lines both sides share.
func TestLineDiff(t *testing.T) {
	got := lineDiff([]string{"a", "b", "c"}, []string{"a", "x", "c", "d"})
	want := []string{"  a", "- b", "+ x", "  c", "+ d"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
