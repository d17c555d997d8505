package mcpexpose_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
)

// commentListener is a listener whose connections report each keep-alive
// comment the server writes on them: the connection's number, on seen.
type commentListener struct {
	net.Listener
	seen  chan int
	conns atomic.Int32
}

func (l *commentListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &commentConn{Conn: c, id: int(l.conns.Add(1)), seen: l.seen}, nil
}

type commentConn struct {
	net.Conn
	id   int
	seen chan<- int
}

func (c *commentConn) Write(p []byte) (int, error) {
	for range bytes.Count(p, []byte(": keepalive\n\n")) {
		select {
		case c.seen <- c.id:
		default: // the test has what it waits for
		}
	}
	return c.Conn.Write(p)
}

// TestClientsReadThroughKeepAlive: the TypeScript SDK client (handshake
// era, its GET stream) and Go SDK clients (a 2026-07-28 listen, a
// 2025-11-25 GET stream) read past keep-alive comments: after each of
// their streams carried several, every one hears a list change on the
// same stream and session, and lists and calls as before.
func TestClientsReadThroughKeepAlive(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	const every = 20 * time.Millisecond
	la := newLiveApp(t)
	h, err := mcpexpose.NewHandler(la.snap(t, "echo"), swappable(&mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{StreamKeepAlive: every}}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	cl := &commentListener{Listener: srv.Listener, seen: make(chan int, 1024)}
	srv.Listener = cl
	srv.Start()
	t.Cleanup(srv.Close)
	url := srv.URL

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ts := exec.CommandContext(ctx, node, filepath.Join("..", "conformance", "ts-listen.mjs"), url, "live.extra")
	ts.Stderr = os.Stderr
	out, err := ts.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("TypeScript client: want ready, got %q (%v)", lines.Text(), lines.Err())
	}
	clients := map[string]*listener{
		"2026-07-28": listen(t, url, "", ""),
		"2025-11-25": listen(t, url, "", "2025-11-25"),
	}

	// Three streams (the TypeScript client's GET, the Go clients' listen
	// and GET), three comments on each.
	const streams, comments = 3, 3
	seen := map[int]int{}
	timeout := time.After(10 * time.Second)
	for full := 0; full < streams; {
		select {
		case conn := <-cl.seen:
			if seen[conn]++; seen[conn] == comments {
				full++
			}
		case <-timeout:
			t.Fatalf("comments by connection after 10s: %v; want %d on each of %d streams", seen, comments, streams)
		}
	}

	if err := h.Swap(la.snap(t, "echo", "extra")); err != nil {
		t.Fatal(err)
	}
	for version, l := range clients {
		l.await(t, version)
		res, err := l.cs.ListTools(ctx, nil)
		if err != nil || toolNames(res.Tools) != "live.echo,live.extra" {
			t.Fatalf("%s: tools after the swap = %v, %v", version, res, err)
		}
		call, err := l.cs.CallTool(ctx, callParams("live.extra", map[string]any{}))
		if err != nil || call.IsError || textOf(t, call) != `{"result":"extra"}` {
			t.Fatalf("%s: live.extra after the swap = %+v, %v", version, call, err)
		}
	}
	if !lines.Scan() {
		t.Fatalf("TypeScript client printed nothing after the swap: %v", lines.Err())
	}
	var got struct {
		SameSession bool     `json:"sameSession"`
		After       []string `json:"after"`
		Result      struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
		t.Fatalf("TypeScript client printed %q: %v", lines.Bytes(), err)
	}
	if err := ts.Wait(); err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	if !got.SameSession || strings.Join(got.After, ",") != "live.echo,live.extra" || got.Result.IsError {
		t.Errorf("TypeScript client saw %+v", got)
	}
}
