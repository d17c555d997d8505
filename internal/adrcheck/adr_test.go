package adrcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// joined reports problems one a line, or nil.
func joined(problems []error) error { return errors.Join(problems...) }
