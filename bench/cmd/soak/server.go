package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/bench/load"
)

// build compiles examples/users of the repository at root into dir.
func build(ctx context.Context, root, dir string) (string, error) {
	goTool := os.Getenv("GO")
	if goTool == "" {
		goTool = "go"
	}
	bin := filepath.Join(dir, "users")
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./examples/users")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building examples/users: %v\n%s", err, out)
	}
	return bin, nil
}

// server is the running users example.
type server struct {
	cmd  *exec.Cmd
	pid  int
	url  string
	done chan struct{} // closed when the process has exited
}

// startServer starts bin on a free loopback port with every scope and
// waits for the URL it prints first. The child gets SIGKILL if this
// process dies first (Pdeathsig), so it cannot outlive the soak.
func startServer(ctx context.Context, bin string, logw io.Writer) (*server, error) {
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-dev-scopes", "users:read users:write users:admin", "-debug-goroutines")
	cmd.Stderr = logw
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, pid: cmd.Process.Pid, done: make(chan struct{})}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			urls <- strings.TrimSpace(sc.Text())
		}
		close(urls)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	timer := time.NewTimer(15 * time.Second)
	defer timer.Stop()
	select {
	case u, ok := <-urls:
		if !ok || u == "" {
			s.stop()
			return nil, errors.New("users: exited before printing its URL")
		}
		if err := load.CheckLoopback(u); err != nil {
			s.stop()
			return nil, err
		}
		s.url = u
		return s, nil
	case <-timer.C:
		s.stop()
		return nil, errors.New("users: no URL within 15s")
	case <-ctx.Done():
		s.stop()
		return nil, ctx.Err()
	}
}

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, then SIGKILL if the server has not exited within
// five seconds, and waits for the exit. It may be called more than once.
func (s *server) stop() {
	if s.exited() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return
	case <-time.After(5 * time.Second):
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		fmt.Fprintf(os.Stderr, "killing users (pid %d): %v\n", s.pid, err)
	}
	<-s.done
}

// readProc reads VmRSS and Threads from /proc/<pid>/status and counts the
// entries of /proc/<pid>/fd.
func readProc(pid int) (sample, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return sample{}, err
	}
	p, err := parseStatus(string(b))
	if err != nil {
		return sample{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return sample{}, err
	}
	if goroutinesURL != "" {
		if n, err := readGoroutines(goroutinesURL); err == nil {
			p.goroutines = n
		}
		if n, err := readGoroutines(strings.TrimSuffix(goroutinesURL, "goroutines") + "heap"); err == nil {
			p.heap = int64(n)
		}
	}
	p.fds = len(fds)
	return p, nil
}

// parseStatus returns VmRSS (in bytes) and Threads from the contents of
// /proc/<pid>/status.
func parseStatus(status string) (sample, error) {
	var p sample
	var haveRSS, haveThreads bool
	for line := range strings.SplitSeq(status, "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(v) // "12345 kB"
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					p.rss, haveRSS = n<<10, true
				}
			}
		}
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				p.threads, haveThreads = n, true
			}
		}
	}
	if !haveRSS || !haveThreads {
		return p, errors.New("no VmRSS or Threads")
	}
	return p, nil
}

// readHeap reads the server's live heap (bytes) from its /debug/heap.
func readHeap(url string) (int64, error) {
	n, err := readGoroutines(url)
	return int64(n), err
}

// goroutinesURL is the users example's /debug/goroutines, once started.
var goroutinesURL string

// readGoroutines reads the server's goroutine count, or another number
// the example serves on a line.
func readGoroutines(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
