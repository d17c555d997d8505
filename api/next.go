package main

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// A record is one accepted incompatible change in api/next.txt: the line
// the check prints for it, below the CHANGELOG.md words that tell users.
type record struct {
	line      int    // in api/next.txt, from 1
	change    string // as apidiff words it, e.g. "./policy.Principal.ID: removed"
	changelog string // words from a bullet under "Breaking" in Unreleased
}

// changelogPrefix starts a line of api/next.txt that quotes CHANGELOG.md;
// the changes below it, up to the next such line, are the ones it covers.
const changelogPrefix = "changelog:"

// parseNext reads api/next.txt: lines starting with # and blank lines are
// comments; a "changelog: <words>" line opens a group; each other line is
// a change, in the group above it.
func parseNext(data []byte) ([]record, error) {
	var recs []record
	var quote string
	quoteLine, covered := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, changelogPrefix); ok {
			if quoteLine != 0 && covered == 0 {
				return nil, fmt.Errorf("api/next.txt:%d: a %q line with no change below it: record the changes it covers below it, or remove it", quoteLine, changelogPrefix)
			}
			quote = normalize(rest)
			if quote == "" {
				return nil, fmt.Errorf("api/next.txt:%d: %q quotes nothing: quote words of the CHANGELOG.md bullet under \"Breaking\" that tells users of the changes below", n, changelogPrefix)
			}
			quoteLine, covered = n, 0
			continue
		}
		if quoteLine == 0 {
			return nil, fmt.Errorf("api/next.txt:%d: %q has no %q line above it: add one quoting the CHANGELOG.md bullet under \"Breaking\" that tells users", n, line, changelogPrefix)
		}
		recs = append(recs, record{line: n, change: line, changelog: quote})
		covered++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if quoteLine != 0 && covered == 0 {
		return nil, fmt.Errorf("api/next.txt:%d: a %q line with no change below it: record the changes it covers below it, or remove it", quoteLine, changelogPrefix)
	}
	return recs, nil
}

// header returns the comment lines that open api/next.txt, which a release
// keeps when it empties the file.
func header(data []byte) []byte {
	var out bytes.Buffer
	for line := range strings.Lines(string(data)) {
		if !strings.HasPrefix(line, "#") {
			break
		}
		out.WriteString(line)
	}
	return out.Bytes()
}

// breaking returns the text of the "Breaking" sections under CHANGELOG.md's
// "## Unreleased", whitespace normalized, each section's headings
// excluded: what a record's changelog words must be found in.
func breaking(changelog []byte) string {
	var b strings.Builder
	unreleased, in := false, false
	for line := range strings.Lines(string(changelog)) {
		line = strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(line, "## ") {
			unreleased = strings.TrimSpace(line[3:]) == "Unreleased"
			in = false
			continue
		}
		if !unreleased {
			continue
		}
		if strings.HasPrefix(line, "#") {
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(line, "#")), "Breaking")
			continue
		}
		if in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return normalize(b.String())
}

// normalize collapses each run of white space to one space, so that words
// quoted on one line match a bullet wrapped over several.
func normalize(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
