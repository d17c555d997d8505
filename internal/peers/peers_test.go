package peers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a testing.TB that records a skip or a failure and, like the
// real one, ends the goroutine that asked for it. Only the methods the
// package calls are implemented; any other would panic on the nil TB.
type recorder struct {
	testing.TB
	skipped, failed bool
	message         string
}

func (r *recorder) Helper() {}

func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.message = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.message = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// verdict is what a lookup did to the test, and the path it returned if it
// let the test go on.
type verdict struct {
	Skipped, Failed bool
	Path            string
}

// run calls lookup with a recorder on a goroutine of its own, as the
// testing package runs a test, and returns what happened and the message.
func run(lookup func(testing.TB) string) (verdict, string) {
	r := &recorder{}
	var path string
	done := make(chan struct{})
	go func() {
		defer close(done)
		path = lookup(r)
	}()
	<-done
	return verdict{Skipped: r.skipped, Failed: r.failed, Path: path}, r.message
}

// executable writes an empty executable file at path.
func executable(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A missing peer skips by default and fails with AGNARA_REQUIRE_PEERS=1,
// with the same message naming what installs it; a value that is neither
// fails too, so a typo cannot turn the full gate into skips.
func TestMissing(t *testing.T) {
	const why = "the thing is not installed: run `make deps`"
	for _, tc := range []struct {
		env  string
		want verdict
		says string
	}{
		{"", verdict{Skipped: true}, "skipped; AGNARA_REQUIRE_PEERS=1 fails instead"},
		{"0", verdict{Skipped: true}, "skipped; AGNARA_REQUIRE_PEERS=1 fails instead"},
		{"1", verdict{Failed: true}, "AGNARA_REQUIRE_PEERS=1: a missing peer fails the test"},
		{"true", verdict{Failed: true}, `AGNARA_REQUIRE_PEERS="true" is neither 1, fail, nor 0, skip`},
	} {
		t.Run("env="+tc.env, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			got, msg := run(func(tb testing.TB) string { Missing(tb, why); return "went on" })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Missing (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(msg, why) || !strings.Contains(msg, tc.says) {
				t.Errorf("message %q, want %q then %q", msg, why, tc.says)
			}
		})
	}
}

// Program looks on PATH, then in the extra directories (the newest
// version of a glob wins), and otherwise goes through Missing with the
// install command.
func TestProgram(t *testing.T) {
	dir := t.TempDir()
	onPath := filepath.Join(dir, "path", "agnara-peer-on-path")
	executable(t, onPath)
	executable(t, filepath.Join(dir, "lib", "14", "bin", "agnara-peer-versioned"))
	newest := filepath.Join(dir, "lib", "15", "bin", "agnara-peer-versioned")
	executable(t, newest)
	t.Setenv("PATH", filepath.Join(dir, "path"))
	versions := filepath.Join(dir, "lib", "*", "bin")

	for _, tc := range []struct {
		name, program, env string
		want               verdict
		says               string
	}{
		{"on PATH", "agnara-peer-on-path", "1", verdict{Path: onPath}, ""},
		{"newest in a glob", "agnara-peer-versioned", "1", verdict{Path: newest}, ""},
		{"missing skips", "agnara-peer-absent", "", verdict{Skipped: true}, "agnara-peer-absent is not installed: run `make engines`"},
		{"missing fails when required", "agnara-peer-absent", "1", verdict{Failed: true}, "agnara-peer-absent is not installed: run `make engines`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			got, msg := run(func(tb testing.TB) string { return Program(tb, tc.program, "run `make engines`", versions) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Program (-want +got):\n%s", diff)
			}
			if !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not say %q", msg, tc.says)
			}
		})
	}
}

// NPM finds a package or a file under conformance/node_modules of the
// module the test runs in, from any of its directories, and names `make
// deps` when it is not installed.
func TestNPM(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "conformance", "node_modules", "@scope", "server")
	entry := filepath.Join(pkg, "dist", "index.js")
	executable(t, entry)
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.com/m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)

	for _, tc := range []struct {
		name, npm, env string
		want           verdict
		says           string
	}{
		{"package", "@scope/server", "1", verdict{Path: pkg}, ""},
		{"file", "@scope/server/dist/index.js", "1", verdict{Path: entry}, ""},
		{"missing skips", "@scope/other", "", verdict{Skipped: true}, "@scope/other is not installed in conformance/node_modules: run `make deps`"},
		{"missing fails when required", "@scope/server/dist/absent.js", "1", verdict{Failed: true}, "run `make deps`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(Env, tc.env)
			got, msg := run(func(tb testing.TB) string { return NPM(tb, tc.npm) })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NPM (-want +got):\n%s", diff)
			}
			if !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not say %q", msg, tc.says)
			}
		})
	}
}
