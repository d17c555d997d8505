// Package peers finds what some of agnara-go's tests run against besides Go
// — Node.js, the npm packages `make deps` installs from
// conformance/package-lock.json (the TypeScript SDK client, the public npm
// MCP servers), Chromium, git, and the engines of internal/enginetest — and
// decides, in one place, what a test does when one is missing.
//
// A missing peer skips the test with a message naming what is missing and
// the command that installs it (`make deps`, `make engines`), so that a Go
// contributor's first `go test ./...` on a fresh clone passes. With
// AGNARA_REQUIRE_PEERS=1, which `make test`, `make check` and CI (.ci/run)
// set, the same message fails the test instead, so the full gate never
// passes by skipping (ADR 27).
package peers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Env names the environment variable that turns a missing peer from a skip
// into a failure: "1" fails, "0" or unset skips, anything else fails as a
// mistake.
const Env = "AGNARA_REQUIRE_PEERS"

// Missing ends the test because a peer it needs is missing; why says what
// is missing and how to install it. It skips the test, or fails it when
// [Env] is "1". Like t.Skip and t.Fatal, it must be called from the
// goroutine running the test.
func Missing(t testing.TB, why string) {
	t.Helper()
	switch v := os.Getenv(Env); v {
	case "1":
		t.Fatalf("%s (%s=1: a missing peer fails the test)", why, Env)
	case "", "0":
		t.Skipf("%s (skipped; %s=1 fails instead, as make test and CI do)", why, Env)
	default:
		t.Fatalf("%s (and %s=%q is neither 1, fail, nor 0, skip)", why, Env, v)
	}
}

// Program returns the path of program, found on PATH or else in one of
// dirs (glob patterns such as /usr/lib/postgresql/*/bin, where the last
// match, the newest version, wins). When it is in neither, it ends the test
// through [Missing], saying "<program> is not installed: <install>".
func Program(t testing.TB, program, install string, dirs ...string) string {
	t.Helper()
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	for _, pattern := range dirs {
		matches, err := filepath.Glob(filepath.Join(pattern, program))
		if err != nil {
			t.Fatalf("peers: %s: %v", pattern, err)
		}
		if len(matches) > 0 {
			return matches[len(matches)-1]
		}
	}
	Missing(t, fmt.Sprintf("%s is not installed: %s", program, install))
	return ""
}

// Node returns the path of node, which runs the npm peers.
func Node(t testing.TB) string {
	t.Helper()
	return Program(t, "node", "install Node.js 20 or later with npm, then run `make deps`")
}

// NPM returns the absolute path of name under conformance/node_modules
// (a package, such as "@modelcontextprotocol/sdk", or a file in one, such
// as "@modelcontextprotocol/server-memory/dist/index.js"), which `make
// deps` installs from conformance/package-lock.json. When it is not there,
// it ends the test through [Missing], naming `make deps`.
func NPM(t testing.TB, name string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatalf("peers: %v", err)
	}
	path := filepath.Join(root, "conformance", "node_modules", filepath.FromSlash(name))
	if _, err := os.Stat(path); err != nil {
		Missing(t, fmt.Sprintf("%s is not installed in conformance/node_modules: run `make deps` (npm ci in conformance/)", name))
		return ""
	}
	return path
}

// moduleRoot returns the nearest directory at or above the working
// directory (the test's package) that holds a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod at or above the test's directory")
		}
		dir = parent
	}
}
