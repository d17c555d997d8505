package adrcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Citations of records in code and docs: "ADR 35", "ADR 0035", "ADRs 31
// and 32", "adr/0035-...".
var (
	citeOne  = regexp.MustCompile(`\bADR 0*(\d+)\b`)
	citeMany = regexp.MustCompile(`\bADRs (\d+(?:[–-]\d+)?(?:(?:, |,? and )\d+(?:[–-]\d+)?)*)`)
	citeFile = regexp.MustCompile(`\badr/(\d{4})-`)
	citeNum  = regexp.MustCompile(`\d+`)
)

// cited returns the record numbers a line cites.
func cited(line string) []int {
	var nums []int
	for _, re := range []*regexp.Regexp{citeOne, citeFile} {
		for _, m := range re.FindAllStringSubmatch(line, -1) {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	for _, m := range citeMany.FindAllStringSubmatch(line, -1) {
		for _, s := range citeNum.FindAllString(m[1], -1) {
			n, _ := strconv.Atoi(s)
			nums = append(nums, n)
		}
	}
	return nums
}

// citable says whether a file's citations are checked: the text files
// code, docs, scripts and configuration live in.
func citable(name string) bool {
	switch filepath.Ext(name) {
	case ".go", ".md", ".txt", ".txtar", ".html", ".js", ".mjs", ".sh", ".yml", ".yaml", ".cfg":
		return true
	}
	return name == "Makefile"
}

// staleCitations walks the module at root and reports every line that
// cites a superseded record without the record in force. adr/ is the
// records' own history, CHANGELOG.md the releases' (a released entry
// cites what was in force then), and skip lists other paths, relative to
// root, left out.
func staleCitations(root string, recs []*record, skip ...string) []error {
	byNum := map[int]*record{}
	for _, r := range recs {
		byNum[r.num] = r
	}
	var problems []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while walking: another test's scratch files
		}
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			// Like the go command, leave out directories whose names begin
			// with "." or "_" (other tests' scratch, such as readmetest's
			// snippets), and npm's packages.
			if rel != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules" || rel == "adr" || slices.Contains(skip, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "CHANGELOG.md" || !citable(d.Name()) || slices.Contains(skip, rel) {
			return nil
		}
		text, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(text), "\n") {
			nums := cited(line)
			reported := map[int]bool{}
			for _, n := range nums {
				r := byNum[n]
				if r == nil || !r.superseded || reported[n] {
					continue
				}
				reported[n] = true
				now := inForce(byNum, r)
				if slices.Contains(nums, now.num) {
					continue // "ADR 35, superseded by ADR 68": history, told as such
				}
				problems = append(problems, fmt.Errorf("%s:%d: cites ADR %d, which ADR %d superseded: cite ADR %d (adr/%s)", rel, i+1, n, now.num, now.num, now.file))
			}
		}
		return nil
	})
	if err != nil {
		problems = append(problems, err)
	}
	return problems
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
