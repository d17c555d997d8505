package adrcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// indexIntro opens adr/README.md; the table follows it.
const indexIntro = `# Architecture decision records

Decisions someone might question, one record each, numbered in order
([ADR 63](0063-decisions-superseded-never-revised.md) says how they are
kept). A decision that changes gets a new record that supersedes the old
one; the old one stays as it was accepted, marked, with a link. Read the
record in force: the last in its "Superseded by" chain, with the records
that amend it.

This index is made from the records' headings and statuses: run
` + "`go test ./internal/adrcheck -update`" + ` after adding a record or changing a
status, and the test fails while it is out of date.

`

// index renders adr/README.md from the records.
func index(recs []*record) string {
	byNum := map[int]*record{}
	for _, r := range recs {
		byNum[r.num] = r
	}
	ref := func(n int) string {
		if r := byNum[n]; r != nil {
			return fmt.Sprintf("[%d](%s)", n, r.file)
		}
		return strconv.Itoa(n)
	}
	var b strings.Builder
	b.WriteString(indexIntro)
	b.WriteString("| ADR | Title | Status | Superseded by | Amended by |\n")
	b.WriteString("|----:|-------|--------|---------------|------------|\n")
	for _, r := range recs {
		status, by := "Accepted", ""
		var amended []string
		for _, rel := range r.rels {
			switch rel.kind {
			case supersededBy:
				status, by = "Superseded", ref(rel.to)
			case amendedBy:
				amended = append(amended, ref(rel.to))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", ref(r.num), strings.ReplaceAll(r.title, "|", `\|`), status, by, strings.Join(amended, ", "))
	}
	return b.String()
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
