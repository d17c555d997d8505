package enginetest

import (
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

// RedisServer is a throwaway redis-server on 127.0.0.1, without persistence.
// It can be stopped and started again on the same port, to test what a
// client does while Redis is down.
type RedisServer struct {
	t    testing.TB
	bin  string
	port int
	dir  string

	mu   sync.Mutex
	proc *process
}

// Redis starts a redis-server on a free loopback port, in a temporary
// directory, with no snapshot and no append-only file, and stops it when the
// test ends.
func Redis(t testing.TB) *RedisServer {
	t.Helper()
	r := &RedisServer{t: t, bin: lookPath(t, "redis-server", "redis-server"), port: FreePort(t), dir: t.TempDir()}
	r.Start()
	return r
}

// Addr returns the server's host:port.
func (r *RedisServer) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// URL returns the server's redis:// URL, database 0.
func (r *RedisServer) URL() string { return "redis://" + r.Addr() + "/0" }

// Start starts the server again after Stop, on the same port, empty. It is
// a no-op while the server runs.
func (r *RedisServer) Start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil && !r.proc.exited() {
		return
	}
	cmd := exec.Command(r.bin,
		"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", r.dir,
		"--protected-mode", "yes", "--daemonize", "no")
	r.proc = start(r.t, cmd)
	waitDial(r.t, r.proc, "redis-server", r.port)
}

// Stop stops the server and waits until it has exited.
func (r *RedisServer) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil {
		r.proc.stop()
	}
}
