package adrcheck

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite adr/README.md from the records")

// root is the module's directory, from this package's.
const root = "../.."

func TestRecords(t *testing.T) {
	recs, problems := records(filepath.Join(root, "adr"))
	if len(recs) == 0 {
		t.Fatal("no records read from adr/")
	}
	problems = append(problems, check(recs)...)
	for _, p := range problems {
		t.Error(p)
	}
}

func TestIndex(t *testing.T) {
	dir := filepath.Join(root, "adr")
	recs, problems := records(dir)
	if len(problems) > 0 {
		t.Fatalf("the records have problems (TestRecords lists them): %v", joined(problems))
	}
	if *update {
		if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(index(recs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkIndex(dir, recs); err != nil {
		t.Error(err)
	}
}

func TestCitations(t *testing.T) {
	recs, problems := records(filepath.Join(root, "adr"))
	if len(problems) > 0 {
		t.Fatalf("the records have problems (TestRecords lists them): %v", joined(problems))
	}
	// This package's tests write superseded records' numbers into their
	// fixtures.
	for _, p := range staleCitations(root, recs, "internal/adrcheck") {
		t.Error(p)
	}
}

// checkIndex reports whether dir's README.md is the index of recs.
func checkIndex(dir string, recs []*record) error {
	got, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		return fmt.Errorf("adr/README.md, the index of the records, is missing: run go test ./internal/adrcheck -update (%v)", err)
	}
	if diff := cmp.Diff(index(recs), string(got)); diff != "" {
		return fmt.Errorf("adr/README.md is not the index of the records (-want +got):\n%s\nrun go test ./internal/adrcheck -update", diff)
	}
	return nil
}

// fixture writes records (file name to Status) into a new adr/ under a
// temporary root, and returns the root. A record's text is a heading from
// its file name, a date, its Status and a context; a name mapped to a
// string that starts with "#" is written as it is.
func fixture(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	adr := filepath.Join(dir, "adr")
	if err := os.Mkdir(adr, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, status := range files {
		text := status
		if !strings.HasPrefix(status, "#") {
			var num int
			fmt.Sscanf(name, "%04d", &num)
			title := strings.TrimSuffix(name[5:], ".md")
			text = fmt.Sprintf("# %d. %s\n\nDate: 2026-12-06\n\n## Status\n\n%s\n\n## Context\n\nWhy.\n", num, title, status)
		}
		if err := os.WriteFile(filepath.Join(adr, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// problemsOf reads and checks the records of a fixture's adr/.
func problemsOf(t *testing.T, dir string) ([]*record, string) {
	t.Helper()
	recs, problems := records(filepath.Join(dir, "adr"))
	problems = append(problems, check(recs)...)
	var b strings.Builder
	for _, p := range problems {
		b.WriteString(p.Error() + "\n")
	}
	return recs, b.String()
}

func TestCheckFindsMistakes(t *testing.T) {
	const (
		one = "0001-first.md"
		two = "0002-second.md"
	)
	tests := []struct {
		name  string
		files map[string]string
		want  []string // each in the problems; none: no problem at all
	}{
		{
			name: "a superseded record and its successor, and an amendment",
			files: map[string]string{
				one:               "Superseded by [ADR 2](0002-second.md), which holds it. Amended by [ADR 3](0003-third.md) (a part).",
				two:               "Accepted. Supersedes [ADR 1](0001-first.md).",
				"0003-third.md":   "Accepted. Amends [ADR 1](0001-first.md) (a part). [ADR 2](0002-second.md) holds the rest now.",
				"0004-fourth.md":  "Accepted. Extends [ADR 2](0002-second.md) (`a.B`. Not a sentence end). Names ADR 3 too, linked: [ADR 3](0003-third.md).",
				"0005-fifth-a.md": "Accepted",
			},
		},
		{
			name:  "superseded without a link",
			files: map[string]string{one: "Superseded by ADR 2.", two: "Accepted."},
			want:  []string{"names ADR 2 without linking it: write [ADR 2](0002-second.md)", "names exactly one successor"},
		},
		{
			name:  "a link to no record",
			files: map[string]string{one: "Superseded by [ADR 3](0003-third.md)."},
			want:  []string{"links ADR 3, which does not exist"},
		},
		{
			name:  "a link to another record's file",
			files: map[string]string{one: "Superseded by [ADR 2](0002-other.md).", two: "Accepted. Supersedes [ADR 1](0001-first.md)."},
			want:  []string{"links ADR 2 as 0002-other.md: the file is 0002-second.md"},
		},
		{
			name:  "two records with one number",
			files: map[string]string{two: "Accepted.", "0002-again.md": "Accepted."},
			want:  []string{"number 2 is taken by 0002-again.md and 0002-second.md"},
		},
		{
			name:  "a heading with another number",
			files: map[string]string{one: "# 7. First\n\nDate: 2026-12-06\n\n## Status\n\nAccepted.\n"},
			want:  []string{"the heading says 7, the file name 1"},
		},
		{
			name:  "superseded, and the successor does not say so",
			files: map[string]string{one: "Superseded by [ADR 2](0002-second.md).", two: "Accepted."},
			want:  []string{"adr/0001-first.md says Superseded by ADR 2, but adr/0002-second.md does not say Supersedes [ADR 1](0001-first.md)"},
		},
		{
			name:  "a successor, and the superseded record does not say so",
			files: map[string]string{one: "Accepted.", two: "Accepted. Supersedes [ADR 1](0001-first.md)."},
			want:  []string{"adr/0002-second.md says Supersedes ADR 1, but adr/0001-first.md does not say Superseded by [ADR 2](0002-second.md)"},
		},
		{
			name:  "an amendment the amended record does not name",
			files: map[string]string{one: "Accepted.", two: "Accepted. Amends [ADR 1](0001-first.md) (its rule)."},
			want:  []string{"does not say Amended by [ADR 2](0002-second.md)"},
		},
		{
			name:  "a Status that is neither accepted nor superseded",
			files: map[string]string{one: "Proposed."},
			want:  []string{`its Status must begin with "Accepted" or "Superseded by [ADR N](file)", not "Proposed."`},
		},
		{
			name:  "superseded after accepted",
			files: map[string]string{one: "Accepted. Superseded by [ADR 2](0002-second.md).", two: "Accepted. Supersedes [ADR 1](0001-first.md)."},
			want:  []string{`"Superseded by" must begin its Status`},
		},
		{
			name:  "a record superseded by an older one",
			files: map[string]string{one: "Accepted. Supersedes [ADR 2](0002-second.md).", two: "Superseded by [ADR 1](0001-first.md)."},
			want:  []string{"only records older than itself"},
		},
		{
			name:  "no Status",
			files: map[string]string{one: "# 1. First\n\nDate: 2026-12-06\n\n## Context\n\nWhy.\n"},
			want:  []string{`no "## Status" section`},
		},
		{
			name:  "no date",
			files: map[string]string{one: "# 1. First\n\n## Status\n\nAccepted.\n"},
			want:  []string{`no "Date: YYYY-MM-DD" line`},
		},
		{
			name:  "a file that is not a record",
			files: map[string]string{one: "Accepted.", "notes.md": "Accepted."},
			want:  []string{"adr/notes.md: not a record's name"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := problemsOf(t, fixture(t, tt.files))
			if len(tt.want) == 0 && got != "" {
				t.Errorf("problems found in valid records:\n%s", got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("the problems do not say %q; they are:\n%s", w, got)
				}
			}
		})
	}
}

func TestIndexNamesTheSuperseded(t *testing.T) {
	dir := fixture(t, map[string]string{
		"0001-first.md":  "Superseded by [ADR 2](0002-second.md). Amended by [ADR 3](0003-third.md).",
		"0002-second.md": "Accepted. Supersedes [ADR 1](0001-first.md).",
		"0003-third.md":  "Accepted. Amends [ADR 1](0001-first.md).",
	})
	recs, problems := problemsOf(t, dir)
	if problems != "" {
		t.Fatalf("the fixture has problems:\n%s", problems)
	}
	wantRows := []string{
		"| [1](0001-first.md) | first | Superseded | [2](0002-second.md) | [3](0003-third.md) |\n",
		"| [2](0002-second.md) | second | Accepted |  |  |\n",
	}
	ix := index(recs)
	for _, row := range wantRows {
		if !strings.Contains(ix, row) {
			t.Errorf("the index has no row %q:\n%s", row, ix)
		}
	}
	adr := filepath.Join(dir, "adr")
	if err := checkIndex(adr, recs); err == nil || !strings.Contains(err.Error(), "is missing") {
		t.Errorf("no index: checkIndex says %v", err)
	}
	// An index that lists the superseded record as accepted is refused.
	stale := strings.Replace(ix, "| first | Superseded | [2](0002-second.md) |", "| first | Accepted |  |", 1)
	if err := os.WriteFile(filepath.Join(adr, "README.md"), []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkIndex(adr, recs); err == nil || !strings.Contains(err.Error(), "-update") {
		t.Errorf("an index that calls ADR 1 accepted: checkIndex says %v", err)
	}
	if err := os.WriteFile(filepath.Join(adr, "README.md"), []byte(ix), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkIndex(adr, recs); err != nil {
		t.Errorf("the index as rendered: %v", err)
	}
}

func TestStaleCitations(t *testing.T) {
	dir := fixture(t, map[string]string{
		"0001-first.md":  "Superseded by [ADR 2](0002-second.md).",
		"0002-second.md": "Superseded by [ADR 3](0003-third.md). Supersedes [ADR 1](0001-first.md).",
		"0003-third.md":  "Accepted. Supersedes [ADR 2](0002-second.md).",
		"0004-fourth.md": "Accepted.",
	})
	recs, problems := problemsOf(t, dir)
	if problems != "" {
		t.Fatalf("the fixture has problems:\n%s", problems)
	}
	files := map[string]string{
		"docs/guide.md": strings.Join([]string{
			"Cited in force: ADR 3 and ADR 4, [ADR 3](../adr/0003-third.md).", // 1
			"Cited superseded: ADR 1.",                                        // 2
			"Zero-padded: ADR 0002.",                                          // 3
			"A list: ADRs 4 and 2.",                                           // 4
			"History, told as such: ADR 1, now ADR 3.",                        // 5
			"A path: see adr/0001-first.md.",                                  // 6
			"Not a citation: ADR 10, ADR 11.",                                 // 7
		}, "\n"),
		"pkg/code.go":       "package pkg\n\n// Why: ADR 0002, revised.\n",
		"CHANGELOG.md":      "- released under ADR 1.\n",
		"skipped/x.go":      "// ADR 1\n",
		"node_modules/x.md": "ADR 1\n",
		"_snippet1/x.go":    "// ADR 1\n",
		"pkg/data.json":     `{"adr": "ADR 1"}`,
	}
	for name, text := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, p := range staleCitations(dir, recs, "skipped") {
		got = append(got, p.Error())
	}
	want := []string{
		"docs/guide.md:2: cites ADR 1, which ADR 3 superseded: cite ADR 3 (adr/0003-third.md)",
		"docs/guide.md:3: cites ADR 2, which ADR 3 superseded: cite ADR 3 (adr/0003-third.md)",
		"docs/guide.md:4: cites ADR 2, which ADR 3 superseded: cite ADR 3 (adr/0003-third.md)",
		"docs/guide.md:6: cites ADR 1, which ADR 3 superseded: cite ADR 3 (adr/0003-third.md)",
		"pkg/code.go:3: cites ADR 2, which ADR 3 superseded: cite ADR 3 (adr/0003-third.md)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stale citations (-want +got):\n%s", diff)
	}
}

func TestSentences(t *testing.T) {
	got := sentences("Accepted. Amends [ADR 1](0001-a.md) (its `x.Y`. part; see docs. too). Amended by [ADR 3](0003-c.md): more.")
	want := []string{
		"Accepted.",
		"Amends [ADR 1](0001-a.md) (its `x.Y`. part; see docs. too).",
		"Amended by [ADR 3](0003-c.md): more.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
}
