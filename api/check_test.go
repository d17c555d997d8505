package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// base is a small module shaped like agnara-go: public packages p and q,
// an agnara package naming the release, and packages the check leaves
// alone (internal, examples, a program).
var base = map[string]string{
	"go.mod":            "module example.com/m\n\ngo 1.25\n",
	"agnara/version.go": "package agnara\n\nconst Version = \"1.0.0\"\n",
	"p/p.go":            "package p\n\nfunc F() {}\n\ntype T struct{ A int }\n",
	"q/q.go":            "package q\n\nfunc Q() {}\n",
	"internal/i/i.go":   "package i\n\nfunc I() {}\n",
	"examples/e/e.go":   "package e\n\nfunc E() {}\n",
	"cmd/c/main.go":     "package main\n\nfunc Exported() {}\n\nfunc main() {}\n",
	"CHANGELOG.md": "# Changelog\n\n## Unreleased\n\n### An issue\n\n#### Breaking\n\n" +
		"- `p.F` is gone: call\n  `p.G` instead.\n\n#### Added\n\n- `p.G`.\n\n## 1.0.0\n\n### Breaking\n\n- Released words.\n",
	nextFile: "# header\n",
}

// module writes base, then edits, into a new directory and returns it.
func module(t *testing.T, edits map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, base)
	write(t, dir, edits)
	return dir
}

// write puts each file of edits into dir; an empty content removes it.
func write(t *testing.T, dir string, edits map[string]string) {
	t.Helper()
	for name, content := range edits {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if content == "" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheck releases the base module, changes it, and checks the change:
// an incompatible change fails the check until api/next.txt records it
// under words of a CHANGELOG "Breaking" bullet; compatible changes, and
// changes to packages no other module can import, pass unrecorded.
func TestCheck(t *testing.T) {
	removedF := "package p\n\ntype T struct{ A int }\n\nfunc G() {}\n"
	tests := []struct {
		name  string
		edits map[string]string
		want  []string // substrings of the error; none: the check passes
	}{
		{name: "unchanged"},
		{
			name:  "compatible additions",
			edits: map[string]string{"p/p.go": "package p\n\nfunc F() {}\n\nfunc G() {}\n\ntype T struct{ A, B int }\n"},
		},
		{
			name:  "removed, not recorded",
			edits: map[string]string{"p/p.go": removedF},
			want:  []string{"the exported API changed incompatibly since v1.0.0 (api/v1.0.0.zip), and api/next.txt does not record it:\n\n\t./p.F: removed\n", "changelog: <words of the CHANGELOG bullet>\n\t./p.F: removed"},
		},
		{
			name:  "signature changed, not recorded",
			edits: map[string]string{"p/p.go": "package p\n\nfunc F(int) {}\n\ntype T struct{ A int }\n"},
			want:  []string{"\t./p.F: changed from func() to func(int)\n"},
		},
		{
			name:  "field removed, not recorded",
			edits: map[string]string{"p/p.go": "package p\n\nfunc F() {}\n\ntype T struct{}\n"},
			want:  []string{"\t./p.T.A: removed\n"},
		},
		{
			name:  "package removed, not recorded",
			edits: map[string]string{"q/q.go": ""},
			want:  []string{"\tpackage example.com/m/q: removed\n"},
		},
		{
			name:  "package moved under internal, not recorded",
			edits: map[string]string{"q/q.go": "", "internal/q/q.go": "package q\n\nfunc Q() {}\n"},
			want:  []string{"\tpackage example.com/m/q: removed\n"},
		},
		{
			name: "removed and recorded",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "# header\n\nchangelog: `p.F` is gone: call `p.G` instead.\n./p.F: removed\n",
			},
		},
		{
			name: "one bullet covers several changes",
			edits: map[string]string{
				"p/p.go": removedF,
				"q/q.go": "",
				nextFile: "changelog: `p.F` is gone\n./p.F: removed\npackage example.com/m/q: removed\n",
			},
		},
		{
			name: "recorded, but the words are not under Unreleased Breaking",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "changelog: Released words.\n./p.F: removed\n",
			},
			want: []string{"api/next.txt:2: its changelog words \"Released words.\" are not in a bullet under \"Breaking\""},
		},
		{
			name: "recorded, but the words are under Added",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "changelog: `p.G`.\n./p.F: removed\n",
			},
			want: []string{"api/next.txt:2: its changelog words \"`p.G`.\" are not in a bullet"},
		},
		{
			name:  "recorded, but not changed",
			edits: map[string]string{nextFile: "changelog: `p.F` is gone\n./p.F: removed\n"},
			want:  []string{"api/next.txt:2: \"./p.F: removed\" is not a change since v1.0.0"},
		},
		{
			name: "recorded twice",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "changelog: `p.F` is gone\n./p.F: removed\n./p.F: removed\n",
			},
			want: []string{"api/next.txt:3: \"./p.F: removed\" is recorded twice"},
		},
		{
			name: "recorded without changelog words",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "./p.F: removed\n",
			},
			want: []string{"api/next.txt:1: \"./p.F: removed\" has no \"changelog:\" line above it"},
		},
		{
			name: "changelog words with no change below",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "changelog: `p.F` is gone\n./p.F: removed\n\nchangelog: `p.G` instead\n",
			},
			want: []string{"api/next.txt:4: a \"changelog:\" line with no change below it"},
		},
		{
			name: "changelog quoting nothing",
			edits: map[string]string{
				"p/p.go": removedF,
				nextFile: "changelog:\n./p.F: removed\n",
			},
			want: []string{"api/next.txt:1: \"changelog:\" quotes nothing"},
		},
		{
			name: "packages no other module imports change freely",
			edits: map[string]string{
				"internal/i/i.go": "package i\n",
				"examples/e/e.go": "package e\n",
				"cmd/c/main.go":   "package main\n\nfunc main() {}\n",
			},
		},
		{
			name:  "a release without its baseline",
			edits: map[string]string{"agnara/version.go": "package agnara\n\nconst Version = \"1.1.0\"\n"},
			want:  []string{"api/v1.1.0.zip is missing", "`make api-release` writes it"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := module(t, nil)
			if _, err := release(config{dir: dir}); err != nil {
				t.Fatalf("release: %v", err)
			}
			write(t, dir, tt.edits)
			msg, err := check(config{dir: dir})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("check failed:\n%v", err)
				}
				if !strings.Contains(msg, "holds against v1.0.0") {
					t.Errorf("check passed saying %q, want it to name the release it holds against", msg)
				}
				return
			}
			if err == nil {
				t.Fatalf("check passed (%s), want it to fail with %q", msg, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("check failed with\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

// TestReleaseBaseline: a release writes the baseline of agnara.Version,
// the same bytes wherever the checkout is (no directory of the machine
// that wrote it inside), removes the previous baseline, and empties
// api/next.txt down to its opening comments.
func TestReleaseBaseline(t *testing.T) {
	next := "# The header,\n# two lines.\n\nchangelog: `p.F` is gone\n./p.F: removed\n"
	a := module(t, map[string]string{nextFile: next, "api/v0.9.0.zip": "the previous release's"})
	b := module(t, nil)
	for _, dir := range []string{a, b} {
		msg, err := release(config{dir: dir})
		if err != nil {
			t.Fatalf("release: %v", err)
		}
		if want := "wrote api/v1.0.0.zip, the API of 3 packages at v1.0.0"; !strings.HasPrefix(msg, want) {
			t.Errorf("release said %q, want it to start with %q", msg, want)
		}
	}
	za, err := os.ReadFile(filepath.Join(a, "api", "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zb, err := os.ReadFile(filepath.Join(b, "api", "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(za, zb) {
		t.Errorf("the same API released from %s and from %s gave different baselines", a, b)
	}
	m, err := readBaseline(filepath.Join(a, "api", "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range m.Packages {
		paths = append(paths, p.Path())
	}
	if got, want := strings.Join(paths, " "), "example.com/m/agnara example.com/m/p example.com/m/q"; m.Path != "example.com/m" || got != want {
		t.Errorf("baseline of module %q holds %q, want example.com/m holding %q", m.Path, got, want)
	}
	if _, err := os.Stat(filepath.Join(a, "api", "v0.9.0.zip")); !os.IsNotExist(err) {
		t.Errorf("the previous baseline is still there after a release (stat: %v)", err)
	}
	got, err := os.ReadFile(filepath.Join(a, filepath.FromSlash(nextFile)))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# The header,\n# two lines.\n"; string(got) != want {
		t.Errorf("api/next.txt after a release is %q, want %q", got, want)
	}
}

// TestBaselineHoldsNoLocalPath: positions in the baseline name files by
// module path, never by the directory the release was written in.
func TestBaselineHoldsNoLocalPath(t *testing.T) {
	dir := module(t, nil)
	if _, err := release(config{dir: dir}); err != nil {
		t.Fatal(err)
	}
	z, err := zip.OpenReader(filepath.Join(dir, "api", "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var all []byte
	for _, f := range z.File {
		data, err := readEntry(f)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...)
	}
	if bytes.Contains(all, []byte(dir)) {
		t.Errorf("the baseline holds the directory it was written in, %s", dir)
	}
	if want := "example.com/m/p/p.go"; !bytes.Contains(all, []byte(want)) {
		t.Errorf("the baseline does not name p.go as %s", want)
	}
}
