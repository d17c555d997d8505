package adrcheck

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite adr/README.md from the records")

// root is the module's directory, from this package's.
const root = "../.."

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
			if _, err := fmt.Sscanf(name, "%04d", &num); err != nil {
				t.Fatalf("fixture %s: %v", name, err)
			}
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

// joined reports problems one a line, or nil.
func joined(problems []error) error { return errors.Join(problems...) }
