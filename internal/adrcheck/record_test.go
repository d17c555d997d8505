package adrcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The relations a Status sentence can begin with. Each names the records
// it links, and the other record must name this one with the inverse.
const (
	supersedes   = "Supersedes"
	supersededBy = "Superseded by"
	amends       = "Amends"
	amendedBy    = "Amended by"
)

// inverse is the relation the other record of a relation must state.
var inverse = map[string]string{
	supersedes:   supersededBy,
	supersededBy: supersedes,
	amends:       amendedBy,
	amendedBy:    amends,
}

// record is one ADR file as the checks read it.
type record struct {
	num        int
	file       string // base name: "0001-record-decisions.md"
	title      string
	status     string // the Status section, its lines joined by spaces
	superseded bool   // the Status begins with "Superseded by"
	links      []link
	rels       []relation
}

// link is a Markdown link to a record in a Status: [ADR N](file).
type link struct {
	num  int
	file string
}

// relation is one record's statement about another: kind is one of the
// constants above, to the other record's number.
type relation struct {
	kind string
	to   int
}

var (
	fileName = regexp.MustCompile(`^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$`)
	heading  = regexp.MustCompile(`^# (\d+)\. (\S.*)$`)
	dateLine = regexp.MustCompile(`^Date: \d{4}-\d{2}-\d{2}\b`)
	adrLink  = regexp.MustCompile(`\[ADR (\d+)\]\(([^)\s]+)\)`)
	mention  = regexp.MustCompile(`\bADR 0*(\d+)\b`)
)

// records reads every record in dir, sorted by number, and the problems
// that reading them found: a file name that is not a record's, a number
// taken twice, a heading or a Status missing or malformed.
func records(dir string) ([]*record, []error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, []error{err}
	}
	var recs []*record
	var problems []error
	files := map[int][]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "README.md" || !strings.HasSuffix(name, ".md") {
			continue
		}
		m := fileName.FindStringSubmatch(name)
		if m == nil {
			problems = append(problems, fmt.Errorf("adr/%s: not a record's name: name it NNNN-short-title.md, with the next free number", name))
			continue
		}
		num, _ := strconv.Atoi(m[1])
		files[num] = append(files[num], name)
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		r, errs := parse(num, name, string(text))
		problems = append(problems, errs...)
		if r != nil {
			recs = append(recs, r)
		}
	}
	for num, names := range files {
		if len(names) > 1 {
			problems = append(problems, fmt.Errorf("adr: number %d is taken by %s: give each record a number of its own", num, strings.Join(names, " and ")))
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].num < recs[j].num })
	return recs, problems
}

// parse reads one record's heading, date and Status.
func parse(num int, name, text string) (*record, []error) {
	lines := strings.Split(text, "\n")
	h := heading.FindStringSubmatch(lines[0])
	if h == nil {
		return nil, []error{fmt.Errorf("adr/%s: the first line must be the heading \"# %d. Title\"", name, num)}
	}
	var problems []error
	if n, _ := strconv.Atoi(h[1]); n != num {
		problems = append(problems, fmt.Errorf("adr/%s: the heading says %d, the file name %d: make them the same number", name, n, num))
	}
	r := &record{num: num, file: name, title: strings.TrimSpace(h[2])}
	dated, inStatus, seen := false, false, false
	var status []string
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "## "):
			inStatus = strings.TrimSpace(l) == "## Status"
			seen = seen || inStatus
		case inStatus:
			if t := strings.TrimSpace(l); t != "" {
				status = append(status, t)
			}
		case !seen && dateLine.MatchString(l):
			dated = true
		}
	}
	if !dated {
		problems = append(problems, fmt.Errorf("adr/%s: no \"Date: YYYY-MM-DD\" line before its Status: add the day it was decided", name))
	}
	r.status = strings.Join(status, " ")
	switch {
	case !seen || r.status == "":
		problems = append(problems, fmt.Errorf("adr/%s: no \"## Status\" section: add one that says Accepted, or Superseded by [ADR N](file)", name))
		return r, problems
	case strings.HasPrefix(r.status, supersededBy+" "):
		r.superseded = true
	case !strings.HasPrefix(r.status, "Accepted"):
		problems = append(problems, fmt.Errorf("adr/%s: its Status must begin with \"Accepted\" or \"Superseded by [ADR N](file)\", not %q", name, firstWords(r.status)))
	}
	for _, m := range adrLink.FindAllStringSubmatch(r.status, -1) {
		n, _ := strconv.Atoi(m[1])
		r.links = append(r.links, link{num: n, file: m[2]})
	}
	for _, s := range sentences(r.status) {
		for _, kind := range []string{supersededBy, supersedes, amendedBy, amends} {
			if !strings.HasPrefix(s, kind+" ") {
				continue
			}
			for _, m := range adrLink.FindAllStringSubmatch(s, -1) {
				n, _ := strconv.Atoi(m[1])
				r.rels = append(r.rels, relation{kind: kind, to: n})
			}
			break
		}
	}
	return r, problems
}

// firstWords returns the beginning of s, for a message.
func firstWords(s string) string {
	if f := strings.Fields(s); len(f) > 4 {
		return strings.Join(f[:4], " ") + " …"
	}
	return s
}

// sentences splits a Status into its sentences: each ends at a full stop
// followed by a space or the end, outside parentheses, brackets and code.
func sentences(s string) []string {
	var out []string
	depth, code, start := 0, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '`':
			code = !code
		case code:
		case c == '(' || c == '[':
			depth++
		case (c == ')' || c == ']') && depth > 0:
			depth--
		case c == '.' && depth == 0 && (i+1 == len(s) || s[i+1] == ' '):
			out = append(out, strings.TrimSpace(s[start:i+1]))
			start = i + 1
		}
	}
	if rest := strings.TrimSpace(s[start:]); rest != "" {
		out = append(out, rest)
	}
	return out
}

// check finds what is wrong between the records: a Status that names a
// record without linking its file, a link to no record, a relation the
// other record does not state, a superseded record without exactly one
// successor.
func check(recs []*record) []error {
	byNum := map[int]*record{}
	for _, r := range recs {
		byNum[r.num] = r
	}
	var problems []error
	for _, r := range recs {
		where := "adr/" + r.file
		linked := map[int]bool{}
		for _, l := range r.links {
			linked[l.num] = true
			switch to := byNum[l.num]; {
			case to == nil:
				problems = append(problems, fmt.Errorf("%s: its Status links ADR %d, which does not exist", where, l.num))
			case l.file != to.file:
				problems = append(problems, fmt.Errorf("%s: its Status links ADR %d as %s: the file is %s", where, l.num, l.file, to.file))
			}
		}
		for _, m := range mention.FindAllStringSubmatch(r.status, -1) {
			n, _ := strconv.Atoi(m[1])
			if !linked[n] {
				problems = append(problems, fmt.Errorf("%s: its Status names ADR %d without linking it: write [ADR %d](%s)", where, n, n, fileOf(byNum, n)))
				linked[n] = true // once is enough
			}
		}
		successors := 0
		for _, rel := range r.rels {
			if rel.kind == supersededBy {
				successors++
			}
			to := byNum[rel.to]
			if to == nil {
				continue // reported with its link
			}
			later := rel.kind == supersededBy || rel.kind == amendedBy
			if later != (rel.to > r.num) {
				problems = append(problems, fmt.Errorf("%s: %s ADR %d: a record supersedes or amends only records older than itself", where, rel.kind, rel.to))
			}
			want := relation{kind: inverse[rel.kind], to: r.num}
			if !slices.Contains(to.rels, want) {
				problems = append(problems, fmt.Errorf("%s says %s ADR %d, but adr/%s does not say %s [ADR %d](%s): add that sentence to its Status (a sentence that begins with %q relates every record it links)", where, rel.kind, rel.to, to.file, want.kind, r.num, r.file, rel.kind))
			}
		}
		switch {
		case r.superseded && successors != 1:
			problems = append(problems, fmt.Errorf("%s: a superseded record names exactly one successor, in its first sentence: Superseded by [ADR N](file)", where))
		case !r.superseded && successors > 0:
			problems = append(problems, fmt.Errorf("%s: \"Superseded by\" must begin its Status, in place of \"Accepted\"", where))
		}
	}
	return problems
}

// fileOf returns record n's file name, for a message.
func fileOf(byNum map[int]*record, n int) string {
	if r := byNum[n]; r != nil {
		return r.file
	}
	return "NNNN-title.md"
}

// successorOf returns the record that superseded r, or nil.
func successorOf(byNum map[int]*record, r *record) *record {
	for _, rel := range r.rels {
		if rel.kind == supersededBy {
			return byNum[rel.to]
		}
	}
	return nil
}

// inForce returns the record that holds r's decision now: r, or the last
// of the records that superseded it in turn.
func inForce(byNum map[int]*record, r *record) *record {
	for range len(byNum) { // a cycle is reported by check; stop anyway
		next := successorOf(byNum, r)
		if next == nil {
			break
		}
		r = next
	}
	return r
}

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
			files: map[string]string{one: "Accepted.", "notes.md": "# Notes\n\nNot a record.\n"},
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
