package enginetest

import (
	"bufio"
	"net"
	"strings"
	"syscall"
	"time"
)

// Kill ends the server at once with SIGKILL, as a crash or the kernel's
// out-of-memory killer would, and waits until it has exited. Start brings
// it back on the same port.
func (r *RedisServer) Kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil || r.proc.exited() {
		return
	}
	syscall.Kill(-r.proc.cmd.Process.Pid, syscall.SIGKILL)
	<-r.proc.done
}

// Snapshot makes the running server write its data to dump.rdb in its
// directory (SAVE), which the next Start loads. A test can so restart Redis
// from a copy of its data older than its last writes, as a Redis with RDB
// snapshots does after a crash: Snapshot, write more, Kill, Start. Without
// a Snapshot, Start begins empty.
func (r *RedisServer) Snapshot() {
	r.t.Helper()
	c, err := net.DialTimeout("tcp", r.Addr(), 5*time.Second)
	if err != nil {
		r.t.Fatalf("enginetest: redis-server SAVE: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write([]byte("SAVE\r\n")); err != nil {
		r.t.Fatalf("enginetest: redis-server SAVE: %v", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "+OK" {
		r.t.Fatalf("enginetest: redis-server SAVE answered %q, %v", line, err)
	}
}
