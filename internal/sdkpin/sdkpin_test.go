// Package sdkpin ties what agnara-go recorded of the MCP Go SDK's behaviour
// to the SDK version it was recorded with (ADR 36). The fast path is proven
// equal to the SDK by differential tests, a fuzz target, golden wire files
// and a recorded conformance run (ADR 68); each of those says what one
// version of the SDK does. testdata/pin.txt names that version, once. When
// go.mod builds another, TestRecordingsMatchTheSDK fails and prints the
// steps of CONTRIBUTING.md's "Upgrading the MCP SDK" with the versions
// filled in: what to record again, and how.
//
// The go.mod it reads is the module's own, or the one named by -gomod:
//
//	go test ./internal/sdkpin/ -gomod /tmp/scratch/go.mod
package sdkpin

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var goMod = flag.String("gomod", "", "the go.mod whose go-sdk version must be the pinned one (default: the module's own)")

// pinFile names the SDK version the recordings were made with.
const pinFile = "testdata/pin.txt"

// A step is one of CONTRIBUTING.md's "Upgrading the MCP SDK", as the
// failure prints it. In how, vOLD is the pinned version and vNEW the one
// go.mod builds; commands run from the module root.
type step struct {
	n     int    // its number in CONTRIBUTING.md's list
	files string // what it makes or checks again: a glob from the module root naming at least one file; "" for none
	what  string
	how   []string
}

// steps are what an SDK upgrade does once go.mod names the new version,
// in order; the last, setting the pin, is the message's own. A new test
// that records the SDK's answers adds a step 2 here and its command there.
var steps = []step{
	{n: 1, what: "bump the bench module too, and read what changed in the SDK; note each new check on a tools/call or tools/list request", how: []string{
		"(cd bench && go get github.com/modelcontextprotocol/go-sdk@vNEW && go mod tidy)",
		"go mod download github.com/modelcontextprotocol/go-sdk@vOLD github.com/modelcontextprotocol/go-sdk@vNEW",
		`diff -ru "$(go env GOMODCACHE)/github.com/modelcontextprotocol/go-sdk@vOLD/mcp" "$(go env GOMODCACHE)/github.com/modelcontextprotocol/go-sdk@vNEW/mcp"`,
	}},
	{n: 2, files: "mcpexpose/testdata/*.txtar", what: "golden wire exchanges at 2026-07-28, asserted by TestGoldenWire and sent both ways by TestFastPathDifferential", how: []string{
		"go test ./mcpexpose/ -run '^TestGoldenWire$' -update",
	}},
	{n: 2, files: "conformance/server/testdata/traffic-2026-07-28.jsonl", what: "the requests of a recorded run of the official conformance suite, replayed both ways by TestFastPathConformanceTraffic", how: []string{
		"go build -o /tmp/agnara-fixture ./conformance/server",
		": > conformance/server/testdata/traffic-2026-07-28.jsonl",
		"/tmp/agnara-fixture -addr 127.0.0.1:0 -record conformance/server/testdata/traffic-2026-07-28.jsonl > /tmp/agnara-fixture.url &",
		"until [ -s /tmp/agnara-fixture.url ]; do sleep 0.2; done",
		`(cd conformance && npx --no-install conformance server --url "$(head -n 1 /tmp/agnara-fixture.url)" --requirements 2026-07-28)`,
		"kill %1",
	}},
	{n: 2, files: "mcpimport/testdata/snapshot-v1.golden.json", what: "an imported catalog as the SDK client decodes it, and its digest (TestSnapshotGolden)", how: []string{
		"go test ./mcpimport/ -run '^TestSnapshotGolden$' -update",
	}},
	{n: 3, what: "review every diff: a changed answer is a change users see; a changed digest changes every importer's catalog identity (ADR 9), to be decided on its own", how: []string{
		"git diff",
	}},
	{n: 4, files: "mcpexpose/fastpath_test.go", what: "the differential corpus (func corpus) is written, not recorded: add a case for each new check from step 1, then run the differential tests", how: []string{
		"go test -race -count=1 -run 'TestFastPath|TestGoldenWire' ./mcpexpose/ ./conformance/server/",
	}},
	{n: 5, what: "fuzz the differential target", how: []string{
		"go test -run '^$' -fuzz '^FuzzFastPath$' -fuzztime 10m ./mcpexpose/",
	}},
	{n: 6, what: "run the conformance suite with the fast path and without it", how: []string{
		"make conformance",
	}},
	{n: 7, files: "bench/results/results.md", what: "measure again, for docs/PERFORMANCE.md and bench/hotspots/README.md", how: []string{
		"make bench",
		"(cd bench && go test -run '^$' -bench . -benchmem ./hotspots)",
	}},
	{n: 7, files: "docs/*.md", what: "check every fact the docs, ADRs and comments state for vOLD", how: []string{
		"git grep -n -F 'vOLD' -- ':!*.sum' ':!bench/results'",
	}},
}

// TestRecordingsMatchTheSDK fails when go.mod builds a go-sdk other than
// the one the recordings were made with, and says what to do.
func TestRecordingsMatchTheSDK(t *testing.T) {
	module, pinned := readPin(t)
	path := *goMod
	if path == "" {
		path = filepath.Join(moduleRoot(t), "go.mod")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	built, err := requirement(data, module)
	if err != nil {
		t.Fatalf("%s: %v; the recordings were made with %s %s (internal/sdkpin/%s)", path, err, module, pinned, pinFile)
	}
	if built != pinned {
		t.Fatal(upgradeMessage(path, module, pinned, built))
	}
}

// upgradeMessage says what differs and what to do, step by step, with the
// versions filled in.
func upgradeMessage(path, module, pinned, built string) string {
	fill := strings.NewReplacer("vOLD", pinned, "vNEW", built)
	var b strings.Builder
	fmt.Fprintf(&b, "%s builds %s %s, but what agnara-go recorded of the SDK was made with %s (internal/sdkpin/%s).\n", path, module, built, pinned, pinFile)
	fmt.Fprintf(&b, "Upgrade as CONTRIBUTING.md says (\"Upgrading the MCP SDK\"), from the repository root:\n")
	last := 0
	for _, s := range steps {
		what := s.what
		if s.files != "" {
			what = s.files + ": " + what
		}
		fmt.Fprintf(&b, "  %d. %s\n", s.n, fill.Replace(what))
		for _, c := range s.how {
			fmt.Fprintf(&b, "       %s\n", fill.Replace(c))
		}
		last = s.n
	}
	fmt.Fprintf(&b, "  %d. last, set internal/sdkpin/%s to %s %s.", last+1, pinFile, module, built)
	return b.String()
}

// TestUpgradeMessageNamesEveryStep holds the failure's text to the table:
// every step with its files, every command with both versions filled in,
// and the pin to change.
func TestUpgradeMessageNamesEveryStep(t *testing.T) {
	msg := upgradeMessage("go.mod", "example.com/sdk", "v1.8.0", "v1.9.0")
	want := []string{"go.mod builds example.com/sdk v1.9.0", "made with v1.8.0", "8. last, set internal/sdkpin/testdata/pin.txt to example.com/sdk v1.9.0"}
	fill := strings.NewReplacer("vOLD", "v1.8.0", "vNEW", "v1.9.0")
	for _, s := range steps {
		want = append(want, fmt.Sprintf("  %d. %s", s.n, s.files))
		for _, c := range s.how {
			want = append(want, fill.Replace(c))
		}
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("the message lacks %q:\n%s", w, msg)
		}
	}
	if strings.Contains(msg, "vOLD") || strings.Contains(msg, "vNEW") {
		t.Errorf("a placeholder is left in the message:\n%s", msg)
	}
}

// TestStepsNameFilesThatExist keeps the table true to the tree.
func TestStepsNameFilesThatExist(t *testing.T) {
	root := moduleRoot(t)
	for _, s := range steps {
		if s.files == "" {
			continue
		}
		m, err := filepath.Glob(filepath.Join(root, s.files))
		if err != nil || len(m) == 0 {
			t.Errorf("step %d: %s names no file (%v): the recording moved; update the table", s.n, s.files, err)
		}
	}
}

// TestContributingSaysHow ties CONTRIBUTING.md's upgrade steps to the
// table: each step's files and commands appear in that step's paragraph as
// written here, and the section names the pin.
func TestContributingSaysHow(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(moduleRoot(t), "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	const heading = "## Upgrading the MCP SDK"
	_, section, ok := strings.Cut(string(data), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("CONTRIBUTING.md has no %q section", heading)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	if !strings.Contains(section, "internal/sdkpin/"+pinFile) {
		t.Errorf("CONTRIBUTING.md's %q does not name the pin, internal/sdkpin/%s", heading, pinFile)
	}
	for _, s := range steps {
		start := strings.Index(section, fmt.Sprintf("\n%d. ", s.n))
		if start < 0 {
			t.Errorf("CONTRIBUTING.md's %q has no step %d", heading, s.n)
			continue
		}
		para := section[start+1:]
		if end := strings.Index(para, fmt.Sprintf("\n%d. ", s.n+1)); end >= 0 {
			para = para[:end]
		}
		for _, w := range append([]string{s.files}, s.how...) {
			if !strings.Contains(para, w) {
				t.Errorf("step %d of CONTRIBUTING.md's %q lacks %q", s.n, heading, w)
			}
		}
	}
}

// TestRequirementAgreesWithTheGoCommand checks this package's reading of
// the module's own go.mod against the go command's (go list -m), which
// applies replacements as a build does.
func TestRequirementAgreesWithTheGoCommand(t *testing.T) {
	module, _ := readPin(t)
	root := moduleRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := requirement(data, module)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-json", module)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", module, err)
	}
	var m struct {
		Version string
		Replace *struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("go list -m -json %s: %v\n%s", module, err, out)
	}
	want := m.Version
	if m.Replace != nil {
		want = m.Replace.Path + " " + m.Replace.Version
		if m.Replace.Path == module {
			want = m.Replace.Version
		}
	}
	if got != want {
		t.Errorf("go.mod read as %s %s; the go command builds %s", module, got, want)
	}
}

func TestRequirement(t *testing.T) {
	const m = "github.com/modelcontextprotocol/go-sdk"
	for _, tc := range []struct {
		name, gomod string
		want        string // the version, or a part of the error
		fails       bool
	}{
		{name: "one line", gomod: "module x\n\ngo 1.25\n\nrequire " + m + " v1.8.0\n", want: "v1.8.0"},
		{name: "block", gomod: "module x\n\nrequire (\n\tgithub.com/google/go-cmp v0.7.0\n\t" + m + " v1.9.0 // indirect\n)\n", want: "v1.9.0"},
		{name: "quoted path", gomod: "module x\nrequire \"" + m + "\" v1.8.1\n", want: "v1.8.1"},
		{name: "back-quoted path", gomod: "module x\nrequire `" + m + "` v1.8.3\n", want: "v1.8.3"},
		{name: "comments and other directives", gomod: "// require " + m + " v0.1.0\nmodule x\n\nexclude " + m + " v1.7.0\nretract v0.0.1\nrequire (\n\t// " + m + " v0.2.0\n\t" + m + " v1.8.0\n)\n", want: "v1.8.0"},
		{name: "a longer path is another module", gomod: "module x\nrequire " + m + "-extra v2.0.0\nrequire " + m + " v1.8.0\n", want: "v1.8.0"},
		{name: "replaced by another version", gomod: "module x\nrequire " + m + " v1.8.0\nreplace " + m + " => " + m + " v1.9.0\n", want: "v1.9.0"},
		{name: "a replacement of another version does not apply", gomod: "module x\nrequire " + m + " v1.8.0\nreplace " + m + " v1.7.0 => " + m + " v1.9.0\n", want: "v1.8.0"},
		{name: "a versioned replacement wins", gomod: "module x\nrequire " + m + " v1.8.0\nreplace (\n\t" + m + " => " + m + " v1.9.0\n\t" + m + " v1.8.0 => " + m + " v1.8.2\n)\n", want: "v1.8.2"},
		{name: "replaced by a directory", gomod: "module x\nrequire " + m + " v1.8.0\nreplace " + m + " => ../go-sdk\n", want: "replaced by the directory ../go-sdk", fails: true},
		{name: "replaced by a fork", gomod: "module x\nrequire " + m + " v1.8.0\nreplace " + m + " => example.com/fork v1.8.0\n", want: "replaced by example.com/fork v1.8.0", fails: true},
		{name: "not required", gomod: "module x\nrequire github.com/google/go-cmp v0.7.0\n", want: "does not require " + m, fails: true},
		{name: "required twice", gomod: "module x\nrequire " + m + " v1.8.0\nrequire " + m + " v1.9.0\n", want: "requires " + m + " twice", fails: true},
		{name: "no version", gomod: "module x\nrequire " + m + "\n", want: "line 2", fails: true},
		{name: "unterminated block", gomod: "module x\nrequire (\n\t" + m + " v1.8.0\n", want: "unterminated", fails: true},
		{name: "unterminated quote", gomod: "module x\nrequire \"" + m + " v1.8.0\n", want: "line 2", fails: true},
		{name: "two replacements of one kind", gomod: "module x\nrequire " + m + " v1.8.0\nreplace " + m + " => " + m + " v1.9.0\nreplace " + m + " => " + m + " v1.9.1\n", want: "replaced twice", fails: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := requirement([]byte(tc.gomod), m)
			switch {
			case tc.fails && err == nil:
				t.Fatalf("got %q, want an error with %q", got, tc.want)
			case tc.fails && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %q, want it to say %q", err, tc.want)
			case !tc.fails && err != nil:
				t.Fatalf("error %v, want %s", err, tc.want)
			case !tc.fails:
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Fatalf("version (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// readPin returns the module and version testdata/pin.txt names: its one
// line that is neither blank nor a comment.
func readPin(t *testing.T) (module, version string) {
	t.Helper()
	data, err := os.ReadFile(pinFile)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%s: want one line \"<module> <version>\", got %q", pinFile, lines)
	}
	f := strings.Fields(lines[0])
	if len(f) != 2 || !strings.HasPrefix(f[1], "v") {
		t.Fatalf("%s: want \"<module> <version>\", got %q", pinFile, lines[0])
	}
	return f[0], f[1]
}

// moduleRoot is the nearest directory above this one with a go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// requirement returns the version of module that the go.mod in data
// builds: the version it requires, or that of the replacement which
// applies to it (one for that version before one for every version). A
// replacement by a directory or by another module is an error: no version
// of module describes what would be built.
func requirement(data []byte, module string) (string, error) {
	ds, err := directives(data)
	if err != nil {
		return "", err
	}
	var required []string
	for _, d := range ds {
		if d.verb == "require" && d.args[0] == module {
			if len(d.args) != 2 {
				return "", fmt.Errorf("line %d: want \"require %s <version>\"", d.line, module)
			}
			required = append(required, d.args[1])
		}
	}
	switch len(required) {
	case 0:
		return "", fmt.Errorf("go.mod does not require %s", module)
	case 1:
	default:
		return "", fmt.Errorf("go.mod requires %s twice (%s)", module, strings.Join(required, ", "))
	}
	version := required[0]
	var every, exact []directive // replacements for every version, for this one
	for _, d := range ds {
		if d.verb != "replace" || d.args[0] != module {
			continue
		}
		switch arrow := slices.Index(d.args, "=>"); {
		case arrow == 1:
			every = append(every, d)
		case arrow == 2 && d.args[1] == version:
			exact = append(exact, d)
		case arrow != 2:
			return "", fmt.Errorf("line %d: want \"replace %s [version] => target [version]\"", d.line, module)
		}
	}
	for _, rs := range [][]directive{exact, every} {
		switch len(rs) {
		case 0:
			continue
		case 1:
		default:
			return "", fmt.Errorf("go.mod has %s replaced twice (lines %d and %d)", module, rs[0].line, rs[1].line)
		}
		to := rs[0].args[slices.Index(rs[0].args, "=>")+1:]
		switch {
		case len(to) == 1:
			return "", fmt.Errorf("line %d: %s is replaced by the directory %s", rs[0].line, module, to[0])
		case len(to) != 2:
			return "", fmt.Errorf("line %d: want \"replace %s [version] => target [version]\"", rs[0].line, module)
		case to[0] != module:
			return "", fmt.Errorf("line %d: %s is replaced by %s %s", rs[0].line, module, to[0], to[1])
		}
		return to[1], nil
	}
	return version, nil
}

// A directive is one go.mod statement, inside a block or not, with its
// arguments unquoted.
type directive struct {
	verb string
	args []string // at least one
	line int
}

// directives splits a go.mod into its statements, as the go command reads
// them: "//" comments, "verb (" ... ")" blocks, quoted or back-quoted
// strings.
func directives(data []byte) ([]directive, error) {
	var out []directive
	block, blockLine := "", 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		f, err := fields(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		switch {
		case len(f) == 0:
		case block != "" && len(f) == 1 && f[0] == ")":
			block = ""
		case block != "":
			out = append(out, directive{verb: block, args: f, line: n})
		case len(f) == 2 && f[1] == "(":
			block, blockLine = f[0], n
		case len(f) == 1:
			return nil, fmt.Errorf("line %d: %q has no arguments", n, f[0])
		default:
			out = append(out, directive{verb: f[0], args: f[1:], line: n})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if block != "" {
		return nil, fmt.Errorf("line %d: unterminated %s block", blockLine, block)
	}
	return out, nil
}

// fields splits one go.mod line into its tokens, without its comment.
func fields(line string) ([]string, error) {
	var out []string
	for {
		line = strings.TrimLeft(line, " \t\r")
		switch {
		case line == "" || strings.HasPrefix(line, "//"):
			return out, nil
		case line[0] == '"' || line[0] == '`':
			i := 1
			for i < len(line) && line[i] != line[0] {
				if line[0] == '"' && line[i] == '\\' {
					i++ // the escaped character
				}
				i++
			}
			if i >= len(line) {
				return nil, errors.New("unterminated quoted string")
			}
			s, err := strconv.Unquote(line[:i+1])
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			line = line[i+1:]
		default:
			end := strings.IndexAny(line, " \t\r")
			if c := strings.Index(line, "//"); c >= 0 && (end < 0 || c < end) {
				end = c
			}
			if end < 0 {
				end = len(line)
			}
			out = append(out, line[:end])
			line = line[end:]
		}
	}
}
