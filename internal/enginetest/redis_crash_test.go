package enginetest

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// do sends one inline command to the server at addr and returns its
// one-line answer.
func do(t *testing.T, addr, command string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(command + "\r\n")); err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return strings.TrimSpace(line)
}

func TestRedisKillAndSnapshot(t *testing.T) {
	r := Redis(t)
	do(t, r.Addr(), "SET kept 1")
	r.Snapshot()
	do(t, r.Addr(), "SET lost 1")

	r.Kill()
	if c, err := net.Dial("tcp", r.Addr()); err == nil {
		c.Close()
		t.Fatal("killed server still accepts connections")
	}
	r.Start()
	if got := do(t, r.Addr(), "EXISTS kept"); got != ":1" {
		t.Errorf("after a restart from the snapshot, EXISTS kept = %s, want :1", got)
	}
	if got := do(t, r.Addr(), "EXISTS lost"); got != ":0" {
		t.Errorf("after a restart from the snapshot, EXISTS lost = %s, want :0 (written after it)", got)
	}
}
