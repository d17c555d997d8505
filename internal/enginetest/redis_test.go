package enginetest

import (
	"net"
	"testing"
)

func TestRedisStartsStopsAndRestarts(t *testing.T) {
	r := Redis(t)
	ping := func() error {
		c, err := net.Dial("tcp", r.Addr())
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			return err
		}
		buf := make([]byte, 7)
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		if string(buf[:n]) != "+PONG\r\n" {
			t.Fatalf("PING answered %q", buf[:n])
		}
		return nil
	}
	if err := ping(); err != nil {
		t.Fatalf("running server: %v", err)
	}
	r.Stop()
	if err := ping(); err == nil {
		t.Fatal("stopped server still answers")
	}
	r.Start()
	if err := ping(); err != nil {
		t.Fatalf("restarted server: %v", err)
	}
}
