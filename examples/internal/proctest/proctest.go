// Package proctest runs the examples' programs in tests, as a user would:
// built, started, and stopped when the test ends.
package proctest

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Build builds the program in dir (a package path relative to the test's
// directory, such as "." or "../devissuer") into a temporary directory and
// returns the binary's path.
func Build(t testing.TB, dir string) string {
	t.Helper()
	name := filepath.Base(filepath.Clean(dir))
	if name == "." || name == ".." {
		name = "program"
	}
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, dir).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", dir, err, out)
	}
	return bin
}

// Start starts bin with args, waits for the URL it prints on its first line
// of output, and returns it. The program is interrupted (then killed, after
// 10 seconds) when the test ends.
func Start(t testing.TB, bin string, args ...string) string {
	t.Helper()
	url, _ := StartProcess(t, bin, args...)
	return url
}

// StartProcess is Start that also returns the process, for tests that kill
// it themselves (a crash); stopping it at the end is then harmless.
func StartProcess(t testing.TB, bin string, args ...string) (string, *os.Process) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- strings.TrimSpace(s.Text())
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case url := <-line:
		return url, cmd.Process
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30s", filepath.Base(bin))
	}
	return "", nil
}
