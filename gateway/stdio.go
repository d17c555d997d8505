package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stopGrace is how long a child has to exit once its standard input is
// closed, and again after SIGTERM, before it is killed.
const stopGrace = 5 * time.Second

// stdioTransport is an mcp.Transport that runs a StdioUpstream as a child
// process for each connection: never through a shell, with exactly the
// environment the config gives it, its standard error logged (a burst of
// lines, such as a crash trace, as one record),
// each line it writes on standard output bounded, and its whole process
// group stopped when the connection closes.
type stdioTransport struct {
	upstream string
	cfg      *StdioUpstream
	logger   *slog.Logger
	maxLine  int
	lookup   func(string) (string, bool)

	mu   sync.Mutex
	last *child // the child of the latest Connect
}

func (t *stdioTransport) env() []string {
	env := make([]string, 0, len(t.cfg.Env)+len(t.cfg.PassEnv)+1)
	_, setsPath := t.cfg.Env["PATH"]
	for _, k := range t.cfg.PassEnv {
		if k == "PATH" {
			setsPath = true
		}
		if v, ok := t.lookup(k); ok && t.cfg.Env[k] == "" {
			env = append(env, k+"="+v)
		}
	}
	if !setsPath {
		if v, ok := t.lookup("PATH"); ok {
			env = append(env, "PATH="+v)
		}
	}
	for k, v := range t.cfg.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// Connect starts the child and connects to its standard input and output.
func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	cmd := exec.Command(t.cfg.Command, t.cfg.Args...)
	cmd.Env = t.env()
	cmd.Dir = t.cfg.Dir
	ownProcessGroup(cmd)
	var files []*os.File
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("starting the upstream's command %q: %w", t.cfg.Command, err)
	}
	// The child holds its ends now; the gateway keeps only its own.
	inR.Close()
	outW.Close()
	errW.Close()
	c := &child{cmd: cmd, stdin: inW, stdout: outR, done: make(chan struct{}), logged: make(chan struct{})}
	go func() {
		defer close(c.logged)
		logLines(errR, t.logger.With(slog.String("upstream", t.upstream), slog.Int("pid", cmd.Process.Pid)), t.cfg.Stderr)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	t.mu.Lock()
	t.last = c
	t.mu.Unlock()
	t.logger.Info("upstream process started", slog.String("upstream", t.upstream), slog.Int("pid", cmd.Process.Pid))
	return (&mcp.IOTransport{Reader: c.stdout, Writer: c, MaxLineLength: t.maxLine}).Connect(ctx)
}

// exit returns the latest child's exit status, once it has exited.
func (t *stdioTransport) exit() (status string, exited bool) {
	t.mu.Lock()
	c := t.last
	t.mu.Unlock()
	if c == nil {
		return "", false
	}
	select {
	case <-c.done:
		if c.err == nil {
			return "exit status 0", true
		}
		return c.err.Error(), true
	default:
		return "", false
	}
}

// child is one running upstream process. As the connection's writer it
// writes to the child's standard input; closing it stops the child.
type child struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	done   chan struct{} // closed when the process has exited
	err    error         // its exit status, once done
	logged chan struct{} // closed when its standard error is logged to its end

	stop sync.Once
}

func (c *child) Write(p []byte) (int, error) { return c.stdin.Write(p) }

// Close stops the child as the MCP stdio transport says: close its input,
// wait for it to exit, then SIGTERM, then SIGKILL, to its whole process
// group (a launcher such as npx starts the server as its own child).
func (c *child) Close() error {
	c.stop.Do(func() {
		c.stdin.Close()
		if !c.wait(stopGrace) {
			signalGroup(c.cmd, terminate)
			if !c.wait(stopGrace) {
				signalGroup(c.cmd, kill)
				c.wait(stopGrace)
			}
		}
		signalGroup(c.cmd, kill) // whatever of its group outlived it
		// Its last words (a burst waits for a pause) reach the log before
		// the gateway goes on, or exits; a process outside its group that
		// still holds the pipe is not waited for long.
		t := time.NewTimer(stopGrace)
		defer t.Stop()
		select {
		case <-c.logged:
		case <-t.C:
		}
	})
	return nil
}

func (c *child) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-t.C:
		return false
	}
}

func trimNewline(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
