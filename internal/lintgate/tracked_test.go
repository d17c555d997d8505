package lintgate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"go/build"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/peers"
)

// maxTracked is the size above which a tracked file needs a reason in
// largeAllowed: source is small, and what is large is usually a build
// output or data that belongs elsewhere.
const maxTracked = 1 << 20

// largeAllowed lists the tracked files that may exceed maxTracked, as
// path.Match patterns on the slash-separated path from the module root,
// each with its reason. Add a file here only with one.
var largeAllowed = []struct{ pattern, why string }{
	{"go.sum", "the module's checksums"},
	{"bench/go.sum", "the benchmark module's checksums"},
	{"conformance/package-lock.json", "the lockfile of the npm peers (make deps)"},
	{"conformance/server/testdata/traffic-*.jsonl", "recorded conformance traffic the fixture's tests replay"},
	{"docs/images/*.png", "the docs' screenshots (make screenshots)"},
}

// trackedFile is a regular file in git's index: what a commit holds.
type trackedFile struct {
	path    string // slash-separated, from the module root
	mode    string // 100644, or 100755 with the executable bit
	content []byte
}

// executableFormat names the executable format content starts with (ELF,
// Mach-O, PE, WebAssembly), or returns "".
func executableFormat(content []byte) string {
	switch {
	case bytes.HasPrefix(content, []byte("\x7fELF")):
		return "ELF"
	case bytes.HasPrefix(content, []byte("\x00asm")):
		return "WebAssembly"
	case len(content) >= 4:
		switch binary.BigEndian.Uint32(content) {
		case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe: // 32, 64-bit, both byte orders; universal
			return "Mach-O"
		}
	}
	// A PE file is an MZ stub whose header at offset 0x3c points to "PE\0\0";
	// a text file that merely starts with MZ is not one.
	if bytes.HasPrefix(content, []byte("MZ")) && len(content) >= 0x40 {
		at := int64(binary.LittleEndian.Uint32(content[0x3c:]))
		if at+4 <= int64(len(content)) && bytes.Equal(content[at:at+4], []byte("PE\x00\x00")) {
			return "PE"
		}
	}
	return ""
}

// largeAllowedWhy returns why p may be large, or "" when it may not.
func largeAllowedWhy(p string) string {
	for _, a := range largeAllowed {
		if ok, _ := path.Match(a.pattern, p); ok { // the patterns above are well formed (TestLargeAllowedPatterns)
			return a.why
		}
	}
	return ""
}

// fileProblems says what is wrong with tracking f, each with what to do.
func fileProblems(f trackedFile) []string {
	var out []string
	if kind := executableFormat(f.content); kind != "" {
		out = append(out, fmt.Sprintf("%s: an executable (%s) is tracked, a build output: `git rm --cached %s`, delete it, and ignore it with an anchored pattern in .gitignore (/%s)", f.path, kind, f.path, f.path))
	} else if f.mode == "100755" && !bytes.HasPrefix(f.content, []byte("#!")) {
		out = append(out, fmt.Sprintf("%s: tracked with the executable bit but not a script (no #! line): `git update-index --chmod=-x %s`, or `git rm --cached` it if it is a build output", f.path, f.path))
	}
	if len(f.content) > maxTracked && largeAllowedWhy(f.path) == "" {
		out = append(out, fmt.Sprintf("%s: %.1f MiB, over the 1 MiB limit for tracked files: `git rm --cached` it and ignore it if it is a build output or data that belongs elsewhere; if it must be tracked (a lockfile, recorded traffic, an image), add it to largeAllowed in internal/lintgate/tracked_test.go with the reason", f.path, float64(len(f.content))/(1<<20)))
	}
	return out
}

// gitCheckout returns the git program for the checkout at top, or ends the
// test through peers.Missing when there is none to ask: git is not
// installed, or there is no .git at or above top (a source archive, a
// module zip), so what is tracked cannot be known. That is a skip for a
// plain `go test ./...` there, and a failure under AGNARA_REQUIRE_PEERS=1,
// which make test and CI set: the gate itself never passes without
// running this check.
func gitCheckout(t *testing.T, top string) string {
	t.Helper()
	git := peers.Program(t, "git", "install git (the tracked-files check asks it what the repository tracks)")
	if os.Getenv("GIT_DIR") != "" {
		return git
	}
	for dir := top; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return git
		}
		if filepath.Dir(dir) == dir {
			peers.Missing(t, "no .git at or above "+top+" (a source archive?): the tracked-files check needs a git clone to list what is tracked")
			return ""
		}
	}
}

// runGit runs git in top with stdin and returns its standard output, or
// fails the test with what git said; okCodes are exit codes that are not
// failures.
func runGit(t *testing.T, git, top string, stdin []byte, args []string, okCodes ...int) []byte {
	t.Helper()
	cmd := exec.Command(git, args...)
	cmd.Dir = top
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		for _, c := range okCodes {
			if exit.ExitCode() == c {
				return out
			}
		}
	}
	if err != nil {
		t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), top, err, stderr.Bytes())
	}
	return out
}

// tracked returns the regular files in git's index under top, with the
// content the index holds for them (not the working tree's: the index is
// what the next commit records).
func tracked(t *testing.T, git, top string) []trackedFile {
	t.Helper()
	// Each record: "<mode> <object> <stage>\t<path>", NUL-terminated.
	var files []trackedFile
	var objects bytes.Buffer
	sawGoMod := false
	for _, rec := range strings.Split(string(runGit(t, git, top, nil, []string{"ls-files", "-s", "-z"})), "\x00") {
		if rec == "" {
			continue
		}
		meta, p, ok := strings.Cut(rec, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 {
			t.Fatalf("git ls-files -s printed %q", rec)
		}
		sawGoMod = sawGoMod || p == "go.mod"
		if mode := fields[0]; mode == "100644" || mode == "100755" { // not a symbolic link (120000) or a submodule (160000)
			files = append(files, trackedFile{path: p, mode: mode})
			objects.WriteString(fields[1] + "\n")
		}
	}
	if !sawGoMod {
		peers.Missing(t, "the git repository around "+top+" does not track its go.mod: not a clone of this module, so the tracked-files check has nothing to read")
	}
	// Each answer: "<object> blob <size>\n<content>\n", in the order asked.
	r := bufio.NewReader(bytes.NewReader(runGit(t, git, top, objects.Bytes(), []string{"cat-file", "--batch"})))
	for i := range files {
		header, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("git cat-file --batch: %s: %v", files[i].path, err)
		}
		fields := strings.Fields(header)
		if len(fields) != 3 || fields[1] != "blob" {
			t.Fatalf("git cat-file --batch: %s: %q", files[i].path, header)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil {
			t.Fatalf("git cat-file --batch: %s: %q", files[i].path, header)
		}
		files[i].content = make([]byte, size+1) // and the newline after it
		if _, err := io.ReadFull(r, files[i].content); err != nil {
			t.Fatalf("git cat-file --batch: %s: %v", files[i].path, err)
		}
		files[i].content = files[i].content[:size]
	}
	return files
}

// TestTrackedFilesAreSource fails on every tracked executable (an ELF,
// Mach-O, PE or WebAssembly binary, or a file with the executable bit that
// is not a #! script) and on every tracked file over 1 MiB that
// largeAllowed does not name, saying what to do about each.
func TestTrackedFilesAreSource(t *testing.T) {
	top := root(t)
	files := tracked(t, gitCheckout(t, top), top)
	if len(files) < 100 {
		t.Fatalf("git tracks only %d files under %s: the listing is broken", len(files), top)
	}
	for _, f := range files {
		for _, p := range fileProblems(f) {
			t.Error(p)
		}
	}
}

// mainPackages returns the directories, slash-separated from top, of every
// package main under top, nested modules (bench/) included, as go build
// sees them on this platform.
func mainPackages(t *testing.T, top string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if p != top && ignoredDir(d.Name()) {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(p, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return err
		}
		if pkg.Name == "main" {
			rel, err := filepath.Rel(top, p)
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// TestBuildOutputsAreIgnored: the binary `go build` leaves in the
// directory of each package main (named after the directory, with .exe on
// Windows) is ignored by git, so that it cannot be committed by accident.
// Tracked or not, each is checked against the ignore rules alone.
func TestBuildOutputsAreIgnored(t *testing.T) {
	top := root(t)
	git := gitCheckout(t, top)
	mains := mainPackages(t, top)
	if len(mains) < 10 {
		t.Fatalf("found only %d main packages under %s (%q): the walk is broken", len(mains), top, mains)
	}
	var outputs []string
	for _, dir := range mains {
		bin := path.Join(dir, path.Base(dir))
		outputs = append(outputs, bin, bin+".exe")
	}
	// check-ignore prints the paths that are ignored; it exits 1 when none is.
	out := runGit(t, git, top, []byte(strings.Join(outputs, "\x00")+"\x00"), []string{"check-ignore", "--no-index", "--stdin", "-z"}, 1)
	ignored := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		ignored[p] = true
	}
	for _, bin := range outputs {
		if !ignored[bin] {
			t.Errorf("%s: `go build` in %s leaves this binary there, and git does not ignore it: add /%s (or a pattern that covers it) to .gitignore", bin, path.Dir(bin), bin)
		}
	}
}

// TestLargeAllowedPatterns: every pattern of largeAllowed is well formed
// (a malformed one would match nothing) and has a reason.
func TestLargeAllowedPatterns(t *testing.T) {
	for _, a := range largeAllowed {
		if _, err := path.Match(a.pattern, ""); err != nil {
			t.Errorf("largeAllowed %q: %v", a.pattern, err)
		}
		if a.why == "" {
			t.Errorf("largeAllowed %q has no reason", a.pattern)
		}
	}
}

// The check itself: each kind of build output and oversized file is
// reported, and sources, scripts and allowed large files are not.
func TestFileProblems(t *testing.T) {
	big := bytes.Repeat([]byte("x"), maxTracked+1)
	pe := make([]byte, 0x80)
	copy(pe, "MZ")
	binary.LittleEndian.PutUint32(pe[0x3c:], 0x40)
	copy(pe[0x40:], "PE\x00\x00")
	for _, tc := range []struct {
		name string
		file trackedFile
		want []string
	}{
		{"source", trackedFile{"a/b.go", "100644", []byte("package b\n")}, nil},
		{"script", trackedFile{"run.sh", "100755", []byte("#!/usr/bin/env bash\necho\n")}, nil},
		{"ELF", trackedFile{"conformance/server/server", "100755", []byte("\x7fELF\x02\x01\x01")}, []string{"an executable (ELF) is tracked, a build output: `git rm --cached conformance/server/server`"}},
		{"ELF without the bit", trackedFile{"x/x", "100644", []byte("\x7fELF\x02\x01\x01")}, []string{"an executable (ELF) is tracked"}},
		{"Mach-O 64", trackedFile{"x/x", "100755", []byte("\xcf\xfa\xed\xfe\x07")}, []string{"an executable (Mach-O) is tracked"}},
		{"Mach-O universal", trackedFile{"x/x", "100644", []byte("\xca\xfe\xba\xbe\x00")}, []string{"an executable (Mach-O) is tracked"}},
		{"PE", trackedFile{"x/x.exe", "100644", pe}, []string{"an executable (PE) is tracked"}},
		{"text starting with MZ", trackedFile{"notes.txt", "100644", append([]byte("MZ is a prefix"), make([]byte, 0x80)...)}, nil},
		{"WebAssembly", trackedFile{"x/x.wasm", "100644", []byte("\x00asm\x01\x00\x00\x00")}, []string{"an executable (WebAssembly) is tracked"}},
		{"executable bit on data", trackedFile{"docs/a.md", "100755", []byte("# A\n")}, []string{"tracked with the executable bit but not a script (no #! line): `git update-index --chmod=-x docs/a.md`"}},
		{"over 1 MiB", trackedFile{"data/dump.json", "100644", big}, []string{"data/dump.json: 1.0 MiB, over the 1 MiB limit for tracked files: `git rm --cached` it and ignore it"}},
		{"a large lockfile", trackedFile{"conformance/package-lock.json", "100644", big}, nil},
		{"large recorded traffic", trackedFile{"conformance/server/testdata/traffic-2026-07-28.jsonl", "100644", big}, nil},
		{"a large image", trackedFile{"docs/images/inbox.png", "100644", big}, nil},
		{"large elsewhere in docs", trackedFile{"docs/inbox.png", "100644", big}, []string{"over the 1 MiB limit"}},
		{"large and executable", trackedFile{"cmd/agnara/agnara", "100755", append([]byte("\x7fELF"), big...)}, []string{"an executable (ELF) is tracked", "over the 1 MiB limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fileProblems(tc.file)
			if len(got) != len(tc.want) {
				t.Fatalf("problems %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], tc.file.path+": ") || !strings.Contains(got[i], w) {
					t.Errorf("problem %q does not say %q", got[i], w)
				}
			}
		})
	}
}
