package astest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/internal/peers"
)

// built is the outcome of building the server, shared by the test
// binary's tests: the binary's path, or why there is none.
var built struct {
	sync.Mutex
	done    bool
	path    string
	missing string // the modules cannot be downloaded: peers.Missing
	err     error  // any other failure: the test fails
}

// binary returns the path of the authorization server's binary, building
// it on the first call. A build is kept in the user's cache directory
// under a hash of the sources, the Go version and the platform, so later
// test binaries (and runs) with the same sources reuse it.
func binary(t testing.TB) string {
	t.Helper()
	built.Lock()
	defer built.Unlock()
	if !built.done {
		built.path, built.missing, built.err = build()
		built.done = true
	}
	switch {
	case built.missing != "":
		peers.Missing(t, built.missing)
	case built.err != nil:
		t.Fatal(built.err)
	}
	return built.path
}

// build builds peers/authserver, or finds it built.
func build() (path, missing string, err error) {
	src, err := sourceDir()
	if err != nil {
		return "", "", err
	}
	goCmd, err := goCommand()
	if err != nil {
		return "", "peers/authserver cannot be built: no go command on PATH or in $GOROOT/bin", nil
	}
	sum, err := sourceHash(src)
	if err != nil {
		return "", "", fmt.Errorf("astest: %v", err)
	}
	dir, err := cacheDir(sum)
	if err != nil {
		return "", "", fmt.Errorf("astest: %v", err)
	}
	path = filepath.Join(dir, "authserver")
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return path, "", nil
	}

	// The modules first, so that a machine that cannot download them skips
	// (or fails under AGNARA_REQUIRE_PEERS=1) instead of failing the build.
	if out, err := run(src, goCmd, "mod", "download"); err != nil {
		return "", fmt.Sprintf("the modules of peers/authserver cannot be downloaded (%v: %s): run make deps", err, bytes.TrimSpace(out)), nil
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", "", fmt.Errorf("astest: %v", err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "authserver")
	if out, err := run(src, goCmd, "build", "-o", bin, "."); err != nil {
		return "", "", fmt.Errorf("astest: go build in %s: %v\n%s", src, err, out)
	}
	// Rename is atomic: test binaries building at once each get a whole
	// binary.
	if err := os.Rename(bin, path); err != nil {
		return "", "", fmt.Errorf("astest: %v", err)
	}
	return path, "", nil
}

// run runs the go command in dir, with workspaces off (the nested module
// builds on its own go.mod and go.sum).
func run(dir, goCmd string, args ...string) ([]byte, error) {
	cmd := exec.Command(goCmd, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	return cmd.CombinedOutput()
}

// goCommand returns the go command: the one on PATH (go test puts its own
// toolchain's first), else the one in $GOROOT/bin.
func goCommand() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	p := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// sourceDir returns the directory of peers/authserver: found from this
// source file, or else above the working directory (with -trimpath).
func sourceDir() (string, error) {
	var starts []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for {
			src := filepath.Join(dir, "peers", "authserver")
			if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
				return src, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errNoSource
}

// sourceHash hashes what the binary is built from: the files of src (not
// its build outputs) with their names, the Go version and the platform.
func sourceHash(src string) (string, error) {
	var names []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != src && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if name := d.Name(); name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".go") {
			names = append(names, p)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return "", err
		}
		rel, _ := filepath.Rel(src, name)
		fmt.Fprintf(h, "%s %d\n", filepath.ToSlash(rel), len(data))
		h.Write(data)
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

// cacheDir returns (creating it) the directory for the build with this
// hash: in the user's cache directory, or else the temporary directory.
func cacheDir(sum string) (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "agnara-astest", "authserver-"+sum)
	return dir, os.MkdirAll(dir, 0o700)
}
