// Package readmetest checks that the Go snippets of README.md and
// docs/getting-started.md compile as written, imports included, so that a
// reader can paste them; and that docs/architecture.md names files,
// functions and imports the code has (architecture_test.go).
package readmetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// goBlocks returns the ```go blocks of markdown, with the line each starts
// on.
func goBlocks(markdown string) (blocks []string, lines []int) {
	re := regexp.MustCompile("(?ms)^```go\n(.*?)^```$")
	for _, m := range re.FindAllStringSubmatchIndex(markdown, -1) {
		blocks = append(blocks, markdown[m[2]:m[3]])
		lines = append(lines, strings.Count(markdown[:m[0]], "\n")+1)
	}
	return blocks, lines
}

// pages are the documents whose Go snippets must compile as written: the
// first a new user reads.
var pages = []string{"README.md", "docs/getting-started.md"}

func TestReadmeSnippetsCompile(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		t.Run(page, func(t *testing.T) { checkPage(t, root, page) })
	}
}

func checkPage(t *testing.T, root, page string) {
	readme, err := os.ReadFile(filepath.Join(root, page))
	if err != nil {
		t.Fatal(err)
	}
	blocks, lines := goBlocks(string(readme))
	if len(blocks) == 0 {
		t.Fatalf("%s has no Go snippet", page)
	}
	for i, src := range blocks {
		if !strings.HasPrefix(src, "package ") {
			t.Errorf("%s:%d: the snippet is not a whole file: start it with its package clause and imports", page, lines[i])
			continue
		}
		// Inside the module (so that it builds against this checkout), in
		// a directory the go command's ./... patterns ignore.
		dir, err := os.MkdirTemp(filepath.Join(root, "internal", "readmetest"), "_snippet")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "snippet.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, dir)
		cmd := exec.Command("go", "vet", "./"+filepath.ToSlash(rel))
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s:%d: the snippet does not compile as written: %v\n%s", page, lines[i], err, out)
		}
	}
}

func TestHelloIsTheReadmeSnippet(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	hello, err := os.ReadFile(filepath.Join("..", "..", "examples", "hello", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	want := string(hello[strings.Index(string(hello), "package main"):])
	blocks, _ := goBlocks(string(readme))
	for _, b := range blocks {
		if b == want {
			return
		}
	}
	t.Error("README.md no longer shows examples/hello/main.go whole (from its package clause): update one or the other")
}

// TestReadmeInstallLinesWork runs the shell lines of README.md's "Install"
// section as written, in a new module beside a link named agnara-go to
// this checkout (what the section tells a reader to have), with the hello
// example as its code, and builds it: so the section's lines are the ones
// that work today.
func TestReadmeInstallLinesWork(t *testing.T) {
	svc, run := helloService(t)
	run("go build -o " + filepath.Join(t.TempDir(), "hello") + " .")
	mod, err := os.ReadFile(filepath.Join(svc, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mod), "github.com/agnara-go/agnara v0.0.0-00010101000000-000000000000") {
		t.Errorf("go.mod after the README's lines does not require agnara-go at the placeholder version the README names:\n%s", mod)
	}
}

// helloService makes the module of README.md's "Install" section: a new
// module beside a link named agnara-go to this checkout, with the hello
// example as its code, after the section's lines. It returns the
// module's directory and a function that runs a shell line in it.
func helloService(t *testing.T) (dir string, run func(line string) string) {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := installLines(t, string(readme))
	tmp := t.TempDir()
	if err := os.Symlink(root, filepath.Join(tmp, "agnara-go")); err != nil {
		t.Fatal(err)
	}
	svc := filepath.Join(tmp, "svc")
	hello, err := os.ReadFile(filepath.Join(root, "examples", "hello", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(svc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(svc, "main.go"), hello, 0o644); err != nil {
		t.Fatal(err)
	}
	run = func(line string) string {
		t.Helper()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = svc
		// A module of its own: not this checkout's go.work or flags.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%q: %v\n%s", line, err, out)
		}
		return string(out)
	}
	run("go mod init example.com/svc")
	for _, line := range lines {
		run(line)
	}
	return svc, run
}

// maxHelloModules is how many modules a service built from examples/hello
// may list in its go.sum: the figure of mcp-go, another Go MCP server
// library (issue 39, ADR 71).
const maxHelloModules = 18

// gatewayModules are modules of the gateway product (and its tests):
// none may reach a service's go.sum.
var gatewayModules = []string{
	"github.com/jackc/pgx/v5", "github.com/redis/go-redis/v9", "modernc.org/sqlite",
	"github.com/chromedp/chromedp", "github.com/prometheus/client_golang", "github.com/go-chi/chi/v5",
}

// TestHelloServicePaysForWhatItUses: the go.sum of README.md's "Install"
// module lists at most maxHelloModules modules, and none of
// gatewayModules. A module carries in its go.sum what the packages it
// imports import, and what their tests import: a core test that imports
// a database client puts it there (STYLE.md). The failure says why each
// module is there (go mod why -m).
func TestHelloServicePaysForWhatItUses(t *testing.T) {
	svc, run := helloService(t)
	sum, err := os.ReadFile(filepath.Join(svc, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	var mods []string
	for _, line := range strings.Split(string(sum), "\n") {
		if mod, _, ok := strings.Cut(line, " "); ok && !slices.Contains(mods, mod) {
			mods = append(mods, mod)
		}
	}
	t.Logf("go.sum lists %d modules: %s", len(mods), strings.Join(mods, " "))
	var why []string
	for _, mod := range mods {
		if slices.Contains(gatewayModules, mod) {
			why = append(why, mod)
		}
	}
	if len(why) > 0 {
		t.Errorf("go.sum lists modules of the gateway product: %s\n%s", strings.Join(why, " "), run("go mod why -m "+strings.Join(why, " ")))
	}
	if len(mods) > maxHelloModules {
		t.Errorf("go.sum lists %d modules, more than %d; go mod why -m for each:\n%s", len(mods), maxHelloModules, run("go mod why -m "+strings.Join(mods, " ")))
	}
}

// installLines returns the commands of the first ```sh block of README.md's
// "## Install" section; it fails the test when there is none.
func installLines(t *testing.T, readme string) []string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n## Install\n")
	if !ok {
		t.Fatal(`README.md has no "## Install" section`)
	}
	if next := strings.Index(section, "\n## "); next >= 0 {
		section = section[:next]
	}
	m := regexp.MustCompile("(?ms)^```sh\n(.*?)^```$").FindStringSubmatch(section)
	if m == nil {
		t.Fatal(`README.md's "Install" has no sh block`)
	}
	var lines []string
	for _, l := range strings.Split(m[1], "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) == 0 {
		t.Fatal(`README.md's "Install" sh block has no command`)
	}
	return lines
}
