// Package proctest runs the module's programs (the examples, cmd/agnara) in
// tests, as a user would: built, started, and stopped when the test ends.
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

	"github.com/agnara-go/agnara/internal/mcptest"
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
	p := StartCmd(t, bin, args...)
	return p.URL, p.cmd.Process
}

// Process is a started program: the URL it printed, what it writes to its
// standard error, and the means to stop it and see how it ended.
type Process struct {
	URL    string
	Stderr *mcptest.Buffer
	cmd    *exec.Cmd
	done   chan struct{}
	err    error
}

// Signal sends sig to the program.
func (p *Process) Signal(sig os.Signal) { p.cmd.Process.Signal(sig) }

// Pid is the program's process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait waits up to d for the program to exit and returns how it ended;
// ok is false when it is still running.
func (p *Process) Wait(d time.Duration) (err error, ok bool) {
	select {
	case <-p.done:
		return p.err, true
	case <-time.After(d):
		return nil, false
	}
}

// StartCmd is Start that returns the [Process], its standard error kept.
func StartCmd(t testing.TB, bin string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{Stderr: &mcptest.Buffer{}, cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		if _, ok := p.Wait(10 * time.Second); !ok {
			cmd.Process.Kill()
			<-p.done
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
	case p.URL = <-line:
		return p
	case <-p.done:
		t.Fatalf("%s exited before printing its URL: %v\n%s", filepath.Base(bin), p.err, p.Stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30s\n%s", filepath.Base(bin), p.Stderr)
	}
	return nil
}
