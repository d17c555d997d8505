package mcpexpose_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/httpserver"
	"github.com/agnara-go/agnara/mcpexpose"
)

// serveHardened serves h with NewHTTPServer(t) on a loopback port.
func serveHardened(t *testing.T, h http.Handler, timeouts *mcpexpose.HTTPTimeouts) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpexpose.NewHTTPServer(h, timeouts)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// A client that sends its body a byte at a time is cut off by the server
// once Read has passed, instead of holding the connection.
func TestHardenedServerCutsSlowBodies(t *testing.T) {
	f := newFixture(t)
	h, err := mcpexpose.NewHandler(f.snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveHardened(t, h, &mcpexpose.HTTPTimeouts{Read: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST / HTTP/1.1\r\nHost: "+addr+"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")
	closed := make(chan error, 1)
	go func() {
		// Drip one byte every 50 ms for up to 10 s; the server must close
		// the connection long before.
		for range 200 {
			time.Sleep(50 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				closed <- err
				return
			}
		}
		closed <- nil
	}()
	// The server answers (408 or 400) or just closes; either way the read
	// ends well before the drip would.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, rerr := bufio.NewReader(conn).ReadString('\n')
	var ne net.Error
	if errors.As(rerr, &ne) && ne.Timeout() {
		t.Fatal("the server kept a slow body's connection open for 10s")
	}
}

func TestNewHTTPServerTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *mcpexpose.HTTPTimeouts
		want [4]time.Duration // read header, read, write, idle
	}{
		{"defaults", nil, [4]time.Duration{httpserver.DefaultReadHeaderTimeout, httpserver.DefaultReadTimeout, httpserver.DefaultWriteTimeout, httpserver.DefaultIdleTimeout}},
		{"set", &mcpexpose.HTTPTimeouts{ReadHeader: time.Second, Read: 2 * time.Second, Write: time.Hour, Idle: 3 * time.Second}, [4]time.Duration{time.Second, 2 * time.Second, time.Hour, 3 * time.Second}},
		{"off", &mcpexpose.HTTPTimeouts{Write: -1}, [4]time.Duration{httpserver.DefaultReadHeaderTimeout, httpserver.DefaultReadTimeout, 0, httpserver.DefaultIdleTimeout}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := mcpexpose.NewHTTPServer(http.NotFoundHandler(), tc.in)
			got := [4]time.Duration{srv.ReadHeaderTimeout, srv.ReadTimeout, srv.WriteTimeout, srv.IdleTimeout}
			if got != tc.want {
				t.Errorf("timeouts %v, want %v", got, tc.want)
			}
			if srv.MaxHeaderBytes != httpserver.DefaultMaxHeaderBytes {
				t.Errorf("MaxHeaderBytes %d", srv.MaxHeaderBytes)
			}
		})
	}
}
