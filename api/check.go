package main

import (
	"errors"
	"fmt"
	"go/constant"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
)

// config says what to check.
type config struct {
	dir     string // the module's root
	version string // the release whose API is the baseline; "" means agnara.Version
}

// The files of the check, relative to the module's root.
const (
	apiDir    = "api"
	nextFile  = "api/next.txt"
	changelog = "CHANGELOG.md"
)

// baselineName is the baseline of release version, relative to the root.
func baselineName(version string) string {
	return apiDir + "/v" + version + ".zip"
}

// check compares the working tree's API with the baseline and api/next.txt
// (see the package comment), and counts the packages a service author
// imports against the SDK's (surface.go). It returns what it found when
// the API holds, and an error that says what to do otherwise.
func check(cfg config) (string, error) {
	cur, _, err := load(cfg.dir, false)
	if err != nil {
		return "", err
	}
	version, err := releaseVersion(cfg, cur)
	if err != nil {
		return "", err
	}
	name := baselineName(version)
	base, err := readBaseline(filepath.Join(cfg.dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s is missing: the check compares the API with the last release's, and the module says it is %s (agnara.Version); at the release commit, `make api-release` writes it (CONTRIBUTING.md, \"The API holds still\")", name, version)
	}
	if err != nil {
		return "", err
	}
	next, err := os.ReadFile(filepath.Join(cfg.dir, nextFile))
	if err != nil {
		return "", fmt.Errorf("%w: it records the accepted incompatible changes since %s; `make api-release` writes an empty one", err, version)
	}
	recs, err := parseNext(next)
	if err != nil {
		return "", err
	}
	logText, err := os.ReadFile(filepath.Join(cfg.dir, changelog))
	if err != nil {
		return "", err
	}
	changes := incompatible(apidiff.ModuleChanges(base, cur))
	s := surfaceOf(cur)
	if err := errors.Join(compare(version, changes, recs, breaking(logText)), s.check()); err != nil {
		return "", err
	}
	return fmt.Sprintf("the API of %d packages holds against v%s (%s); incompatible changes recorded in %s: %d; the packages a service author imports export %d identifiers (fewer than go-sdk mcp's %d)", len(cur.Packages), version, name, nextFile, len(recs), s.total, sdkSurface), nil
}

// incompatible returns the report's incompatible changes, sorted.
func incompatible(r apidiff.Report) []string {
	var out []string
	for _, c := range r.Changes {
		if !c.Compatible {
			out = append(out, c.Message)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// compare fails on a change that no record names, on a record that names
// no change, and on a record whose changelog words are not in the
// Unreleased "Breaking" text.
func compare(version string, changes []string, recs []record, breakingText string) error {
	recorded := map[string]bool{}
	var problems []string
	for _, r := range recs {
		if recorded[r.change] {
			problems = append(problems, fmt.Sprintf("%s:%d: %q is recorded twice: remove this line", nextFile, r.line, r.change))
			continue
		}
		recorded[r.change] = true
		if !slices.Contains(changes, r.change) {
			problems = append(problems, fmt.Sprintf("%s:%d: %q is not a change since v%s (undone, or worded otherwise now): remove the line, or replace it with the change as this check prints it", nextFile, r.line, r.change, version))
		}
		if !strings.Contains(breakingText, r.changelog) {
			problems = append(problems, fmt.Sprintf("%s:%d: its changelog words %q are not in a bullet under \"Breaking\" in %s's \"## Unreleased\": add the bullet that tells users what changed and what to do, or quote it word for word", nextFile, r.line, r.changelog, changelog))
		}
	}
	var missing []string
	for _, c := range changes {
		if !recorded[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 && len(problems) == 0 {
		return nil
	}
	var b strings.Builder
	if len(missing) > 0 {
		fmt.Fprintf(&b, "the exported API changed incompatibly since v%s (%s), and %s does not record it:\n\n", version, baselineName(version), nextFile)
		for _, c := range missing {
			fmt.Fprintf(&b, "\t%s\n", c)
		}
		fmt.Fprintf(&b, "\nOnce released, an exported identifier changes only on purpose (DESIGN 9b). Undo the change, or, if it is meant,\n"+
			"add a bullet under \"Breaking\" in %s's \"## Unreleased\" that tells users what changed and what to do instead,\n"+
			"then record each line above in %s, below a line quoting that bullet's words:\n\n"+
			"\t%s <words of the CHANGELOG bullet>\n\t%s\n\n"+
			"(CONTRIBUTING.md, \"The API holds still\").\n", changelog, nextFile, changelogPrefix, missing[0])
	}
	if len(problems) > 0 {
		if len(missing) > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s is out of date:\n\n", nextFile)
		for _, p := range problems {
			fmt.Fprintf(&b, "\t%s\n", p)
		}
	}
	return errors.New(strings.TrimSuffix(b.String(), "\n"))
}

// releaseVersion is cfg.version, or else the module's agnara.Version: the
// release the working tree follows, whose API is the baseline.
func releaseVersion(cfg config, cur *apidiff.Module) (string, error) {
	if cfg.version != "" {
		return strings.TrimPrefix(cfg.version, "v"), nil
	}
	for _, p := range cur.Packages {
		if p.Path() != cur.Path+"/agnara" {
			continue
		}
		if c, ok := p.Scope().Lookup("Version").(*types.Const); ok && c.Val().Kind() == constant.String {
			return constant.StringVal(c.Val()), nil
		}
	}
	return "", fmt.Errorf("found no constant agnara.Version in %s to name the last release: pass -version", cur.Path)
}

// release writes the baseline of the working tree's release (make
// api-release), removes the older baselines, and empties api/next.txt,
// whose records the release's CHANGELOG section now carries.
func release(cfg config) (string, error) {
	cur, fset, err := load(cfg.dir, true)
	if err != nil {
		return "", err
	}
	version, err := releaseVersion(cfg, cur)
	if err != nil {
		return "", err
	}
	name := baselineName(version)
	if err := os.MkdirAll(filepath.Join(cfg.dir, apiDir), 0o755); err != nil {
		return "", err
	}
	if err := writeBaseline(filepath.Join(cfg.dir, name), cur, fset); err != nil {
		return "", err
	}
	old, err := filepath.Glob(filepath.Join(cfg.dir, apiDir, "v*.zip"))
	if err != nil {
		return "", err
	}
	for _, o := range old {
		if o != filepath.Join(cfg.dir, name) {
			if err := os.Remove(o); err != nil {
				return "", err
			}
		}
	}
	next := filepath.Join(cfg.dir, nextFile)
	data, err := os.ReadFile(next)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.WriteFile(next, header(data), 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %s, the API of %d packages at v%s, and emptied %s", name, len(cur.Packages), version, nextFile), nil
}
