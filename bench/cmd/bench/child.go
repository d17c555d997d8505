package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/agnara-go/agnara/bench/load"
)

// child is one running benchmark server.
type child struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	url   string
	pid   int
	done  chan struct{} // closed when the process has exited
	once  sync.Once
}

// startServer starts the server binary bin on a free loopback port, with
// the extra command-line arguments args, and waits for the URL it prints.
// The server's standard error goes to logw. It exits by itself when its
// standard input closes, so it cannot outlive this process.
func startServer(ctx context.Context, name, bin string, logw io.Writer, args ...string) (*child, error) {
	cmd := exec.Command(bin, append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	cmd.Stderr = logw
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd, stdin: stdin, pid: cmd.Process.Pid, done: make(chan struct{})}
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
		close(c.done)
	}()
	timer := time.NewTimer(15 * time.Second)
	defer timer.Stop()
	select {
	case u, ok := <-urls:
		if !ok || u == "" {
			c.stop()
			return nil, fmt.Errorf("%s: exited before printing its URL", name)
		}
		if err := load.CheckLoopback(u); err != nil {
			c.stop()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		c.url = u
		return c, nil
	case <-timer.C:
		c.stop()
		return nil, fmt.Errorf("%s: no URL within 15s", name)
	case <-ctx.Done():
		c.stop()
		return nil, ctx.Err()
	}
}

// exited reports whether the process has ended.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop ends the server: its standard input is closed, which makes it exit;
// if it has not within two seconds, it is killed. stop waits for the exit
// and may be called more than once.
func (c *child) stop() {
	c.once.Do(func() {
		_ = c.stdin.Close()
		select {
		case <-c.done:
			return
		case <-time.After(2 * time.Second):
		}
		if err := c.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			fmt.Fprintf(os.Stderr, "killing %s (pid %d): %v\n", c.name, c.pid, err)
		}
		<-c.done
	})
}

// children tracks the servers alive, so that every exit path stops them.
type children struct {
	mu   sync.Mutex
	live map[*child]bool
}

func (cs *children) add(c *child) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.live == nil {
		cs.live = map[*child]bool{}
	}
	cs.live[c] = true
}

func (cs *children) stop(c *child) {
	c.stop()
	cs.mu.Lock()
	delete(cs.live, c)
	cs.mu.Unlock()
}

func (cs *children) stopAll() {
	cs.mu.Lock()
	all := make([]*child, 0, len(cs.live))
	for c := range cs.live {
		all = append(all, c)
	}
	cs.live = nil
	cs.mu.Unlock()
	for _, c := range all {
		c.stop()
	}
}
