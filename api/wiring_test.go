package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the agnara-go checkout this module sits in.
const root = ".."

// TestMakeRunsTheCheck: `make check` and `make test` both run the check
// on the checkout, so that neither passes with the API changed and not
// recorded.
func TestMakeRunsTheCheck(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := string(data)
	for _, target := range []string{"check", "test"} {
		m := regexp.MustCompile(`(?m)^` + target + `:([^\n]*)$`).FindStringSubmatch(mk)
		if m == nil {
			t.Errorf("the Makefile has no %q target", target)
			continue
		}
		if !slices.Contains(strings.Fields(m[1]), "api-check") {
			t.Errorf("`make %s` does not run api-check (its prerequisites: %s)", target, strings.TrimSpace(m[1]))
		}
	}
	for target, want := range map[string]string{
		"api-check":   `$(GO) run . -dir "$(CURDIR)"` + "\n",
		"api-release": `$(GO) run . -dir "$(CURDIR)" -write` + "\n",
	} {
		m := regexp.MustCompile(`(?m)^` + target + `:\n\t(.*\n)`).FindStringSubmatch(mk)
		if m == nil {
			t.Errorf("the Makefile has no %q target", target)
			continue
		}
		if !strings.HasPrefix(m[1], "cd api && ") || !strings.HasSuffix(m[1], want) {
			t.Errorf("`make %s` runs %q, want `cd api && ... %s`", target, strings.TrimSpace(m[1]), strings.TrimSpace(want))
		}
	}
}

// TestContributingSaysHow: the failure points at CONTRIBUTING.md's "The
// API holds still", which must say how to record a change and how to
// release.
func TestContributingSaysHow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## The API holds still\n")
	if !ok {
		t.Fatal(`CONTRIBUTING.md has no "## The API holds still" section, which the check's failures name`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, want := range []string{"make api-check", "make api-release", nextFile, changelogPrefix, "Breaking", "## Unreleased", "adr/0070-"} {
		if !strings.Contains(section, want) {
			t.Errorf("CONTRIBUTING.md's \"The API holds still\" does not mention %q", want)
		}
	}
}

// TestNextFileParses: the checkout's api/next.txt is well formed, and
// its opening comments, which a release keeps, are the whole header.
func TestNextFileParses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(nextFile)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parseNext(data); err != nil {
		t.Error(err)
	}
	if len(header(data)) == 0 {
		t.Errorf("%s opens with no comment saying what it is; a release would leave it empty", nextFile)
	}
}
