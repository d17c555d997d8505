// Package enginetest starts the real engines agnara-go's tests run against
// (redis-server, PostgreSQL, PgBouncer and HAProxy from Debian's packages),
// each on a free loopback port in a temporary directory, stopped when the
// test ends.
//
// An engine that is not installed skips the test with the command that
// installs it (make engines, or apt-get install), or fails it with the same
// message under AGNARA_REQUIRE_PEERS=1, which make test and CI set
// (internal/peers). Only 127.0.0.1 is ever bound or dialled.
package enginetest

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/peers"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("enginetest: free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lookPath finds program on PATH or in the extra directories (which may be
// glob patterns; the newest version sorts last), or skips the test saying
// which Debian package to install; under AGNARA_REQUIRE_PEERS=1 it fails
// instead (peers.Program).
func lookPath(t testing.TB, program, pkg string, extra ...string) string {
	t.Helper()
	return peers.Program(t, program, fmt.Sprintf("run `make engines` (or `apt-get install -y %s`)", pkg), extra...)
}

// process is a started engine: its command and where its output goes.
type process struct {
	cmd  *exec.Cmd
	out  *syncWriter // both output streams
	done chan struct{}
}

// start runs cmd in its own process group with its output captured, and
// stops it (SIGTERM, then SIGKILL after 10 s) when the test ends.
func start(t testing.TB, cmd *exec.Cmd) *process {
	t.Helper()
	p, err := spawn(cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.stop)
	return p
}

// spawn starts cmd, as cred (nil: this process's user), in its own process
// group with its output captured; the kernel kills it if this test binary
// dies. Stopping it is the caller's: an engine shared by a binary's tests
// outlives the test that started it.
func spawn(cmd *exec.Cmd, cred *syscall.Credential) (*process, error) {
	p := &process{cmd: cmd, out: &syncWriter{b: &bytes.Buffer{}}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := cmd.Start(); err != nil {
		return nil, errorf("start %s: %v", cmd.Path, err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	return p, nil
}

// stop ends the process and waits for it; stopping twice is harmless.
func (p *process) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// exited reports whether the process has ended.
func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitDial waits until 127.0.0.1:port accepts connections, or fails the
// test with the engine's output after 20 s or when the process exits.
func waitDial(t testing.TB, p *process, name string, port int) {
	t.Helper()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if p != nil && p.exited() {
			t.Fatalf("enginetest: %s exited before listening on %s:\n%s", name, addr, p.output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("enginetest: %s did not listen on %s within 20s:\n%s", name, addr, p.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *process) output() string {
	if p == nil {
		return ""
	}
	p.out.mu.Lock()
	defer p.out.mu.Unlock()
	return p.out.b.String()
}

// isRoot reports whether the tests run as root (CI does): PostgreSQL then
// runs as the postgres user.
func isRoot() bool { return os.Geteuid() == 0 }

func errorf(format string, args ...any) error { return fmt.Errorf("enginetest: "+format, args...) }
