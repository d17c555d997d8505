package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/examples/internal/userservice"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
)

// localInstance is the users application served in this process as the
// users example serves it (mcpexpose.NewHTTPServer on loopback, /mcp and
// /readyz), with a short StreamKeepAlive: the test reads its handler's
// Load, and hears each stream request (a listen, a GET) whose handler
// returned.
type localInstance struct {
	*instance
	h     *mcpexpose.Handler
	ended chan string // the method of each stream request served
}

func startLocal(t *testing.T, name string, keepAlive time.Duration) *localInstance {
	t.Helper()
	app, caps := userservice.NewApp(userservice.NewStore(), nil)
	t.Cleanup(func() { app.Close() })
	exp := mcpexpose.New(app)
	exp.Tool(caps.Get, nil)
	exp.Tool(caps.List, nil)
	exp.Tool(caps.Create, nil)
	exp.Tool(caps.Delete, nil)
	// Resources to subscribe to: the server offers subscriptions/listen.
	exp.ResourceTemplate(caps.Get, &mcpexpose.ResourceTemplateOptions{URITemplate: "users://{id}", Name: "user"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev := policy.NewPrincipal("developer", strings.Fields(scopes))
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
		Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev},
		Limits: &mcpexpose.Limits{StreamKeepAlive: keepAlive},
	})
	if err != nil {
		t.Fatal(err)
	}
	in := &localInstance{h: h, ended: make(chan string, 256)}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		stream := r.Method == http.MethodGet || r.Header.Get("Mcp-Method") == "subscriptions/listen"
		h.ServeHTTP(w, r)
		if stream {
			in.ended <- r.Method
		}
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := mcpexpose.NewHTTPServer(mux, nil)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("%s: %v", name, err)
		}
	})
	in.instance = &instance{name: name, addr: ln.Addr().String(), url: "http://" + ln.Addr().String() + "/mcp"}
	return in
}

// rawStream sends one request over a connection of its own to the
// HAProxy front at addr and reads the answer's head; on 200 it reads the
// stream up to and including the line opening holds, and returns the
// connection, which the caller drops by closing it.
func rawStream(t *testing.T, addr, request, opening string) (net.Conn, int) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		conn.Close()
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		conn.Close()
		return nil, resp.StatusCode
	}
	events := bufio.NewReader(resp.Body)
	for {
		line, err := events.ReadString('\n')
		if err != nil {
			conn.Close()
			t.Fatalf("the stream ended before %q: %v", opening, err)
		}
		if strings.Contains(line, opening) {
			break
		}
	}
	conn.SetDeadline(time.Time{})
	t.Cleanup(func() { conn.Close() })
	return conn, http.StatusOK
}

// listenRequest is a 2026-07-28 subscriptions/listen POST to front, for
// updates of a user (what the users example offers to listen for).
func listenRequest(t *testing.T, front string, id int) string {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
		"params": map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"users://1"}}, "_meta": mcptest.Meta(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", front, len(body), body)
}

// getRequest is the GET stream request of the handshake-era session.
func getRequest(front, session string) string {
	return fmt.Sprintf("GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n", front, session)
}

// TestQuietStreamsFindDeadClients runs the floor behind HAProxy
// on the committed haproxy.cfg: HAProxy notices a client that went away
// only when it writes to it, and holds its connection to the instance
// open until then. Quiet streams write a comment every StreamKeepAlive,
// so a closed client's stream ends within two intervals: 60 listens
// opened and closed give their slots back, and a session whose GET stream
// dropped opens it again (200, not 409 "stream ID conflicts with ongoing
// stream").
func TestQuietStreamsFindDeadClients(t *testing.T) {
	for _, tc := range []struct {
		name  string
		abort bool // the shipped config's option abortonclose kept
	}{
		// The shipped config: HAProxy closes its connection to the
		// instance as soon as the client closes, which cancels the request;
		// the floor (two intervals) holds with room to spare.
		{name: "shipped config", abort: true},
		// A config without option abortonclose: HAProxy, having seen the
		// client's FIN, forwards the first comment after it, which the
		// client's host answers with a reset; the second write fails, and
		// HAProxy closes its connection to the instance. So a dead client
		// is found by the keep-alive within two intervals, plus HAProxy's
		// few milliseconds (grace is for those and a loaded machine).
		{name: "without abortonclose, found by the keep-alive"},
	} {
		t.Run(tc.name, func(t *testing.T) { quietStreamsFindDeadClients(t, tc.abort) })
	}
}

func quietStreamsFindDeadClients(t *testing.T, abort bool) {
	const every = time.Second
	var grace time.Duration
	if !abort {
		grace = 500 * time.Millisecond
	}
	within := 2*every + grace
	var locals []*localInstance
	var servers []string
	c := &cluster{}
	for i := range 3 {
		in := startLocal(t, fmt.Sprintf("users%d", i+1), every)
		locals = append(locals, in)
		c.instances = append(c.instances, in.instance)
		servers = append(servers, in.addr)
	}
	frontPort, statsPort := enginetest.FreePort(t), enginetest.FreePort(t)
	cfg := proxyConfig(t, frontPort, statsPort, servers)
	if !abort {
		if n := strings.Count(cfg, "\toption abortonclose\n"); n != 1 {
			t.Fatalf("haproxy.cfg holds option abortonclose %d times, want once", n)
		}
		cfg = strings.Replace(cfg, "\toption abortonclose\n", "", 1)
	}
	c.haproxy = enginetest.HAProxy(t, cfg, frontPort, statsPort)
	front := fmt.Sprintf("127.0.0.1:%d", frontPort)
	c.proxy = "http://" + front + "/mcp"
	c.stats = fmt.Sprintf("http://127.0.0.1:%d/stats;csv", statsPort)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("haproxy output:\n%s", tail(c.haproxy.Output(), 6000))
		}
	})
	for _, in := range c.instances {
		c.waitStatus(t, in, "UP")
	}

	// awaitEnded waits for n stream requests of method to end on the
	// instances, at most within since start, and returns how many did
	// and how long it took.
	awaitEnded := func(method string, n int, start time.Time) (int, time.Duration) {
		timeout := time.After(time.Until(start.Add(within)))
		got := 0
		for got < n {
			var m string
			select {
			case m = <-locals[0].ended:
			case m = <-locals[1].ended:
			case m = <-locals[2].ended:
			case <-timeout:
				return got, time.Since(start)
			}
			if m == method {
				got++
			}
		}
		return got, time.Since(start)
	}

	t.Run("60 listens opened and closed", func(t *testing.T) {
		const n = 60
		var conns []net.Conn
		for i := range n {
			conn, status := rawStream(t, front, listenRequest(t, front, i+1), "notifications/subscriptions/acknowledged")
			if conn == nil {
				t.Fatalf("listen %d through HAProxy: HTTP %d", i, status)
			}
			conns = append(conns, conn)
		}
		for _, in := range locals {
			if got := in.h.Load().Streams; got != n/len(locals) {
				t.Fatalf("%s counts %d open listens, want %d (round-robin)", in.name, got, n/len(locals))
			}
		}
		start := time.Now()
		for _, conn := range conns {
			conn.Close()
		}
		ended, took := awaitEnded(http.MethodPost, n, start)
		if ended < n {
			var held []int
			for _, in := range locals {
				held = append(held, in.h.Load().Streams)
			}
			t.Fatalf("%d of %d listens of closed clients ended within %v (two intervals and %v); the instances count %v", ended, n, within, grace, held)
		}
		t.Logf("%d closed listens ended %v after their clients closed (keep-alive every %v)", n, took.Round(time.Millisecond), every)
		for _, in := range locals {
			if got := in.h.Load().Streams; got != 0 {
				t.Errorf("%s still counts %d listens after their clients closed", in.name, got)
			}
		}
	})

	t.Run("a dropped GET stream opens again", func(t *testing.T) {
		req := mcptest.Request(t, c.proxy, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
			"clientInfo": map[string]any{"name": "t", "version": "1"}}, "")
		req.Header.Del("Mcp-Protocol-Version")
		req.Header.Del("Mcp-Method")
		resp, body, _ := mcptest.Do(t, req)
		session := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != http.StatusOK || session == "" {
			t.Fatalf("initialize through HAProxy: HTTP %d: %s", resp.StatusCode, body)
		}
		if code := rawLegacyStatus(t, c.proxy, session); code != http.StatusOK {
			t.Fatalf("a request in the new session through HAProxy: HTTP %d", code)
		}
		conn, status := rawStream(t, front, getRequest(front, session), ": ok")
		if conn == nil {
			t.Fatalf("the session's GET stream through HAProxy: HTTP %d", status)
		}
		start := time.Now()
		conn.Close()
		ended, _ := awaitEnded(http.MethodGet, 1, start)
		again, status := rawStream(t, front, getRequest(front, session), ": ok")
		took := time.Since(start)
		if ended == 0 || again == nil {
			t.Fatalf("the dropped GET stream still held %v after its client closed (within %v: two intervals and %v); the session's GET again: HTTP %d, want 200", took, within, grace, status)
		}
		t.Logf("the dropped GET stream opened again %v after its client closed (keep-alive every %v)", took.Round(time.Millisecond), every)
		if took > within {
			t.Errorf("the GET stream opened again %v after it dropped, want within two intervals and %v (%v)", took, grace, within)
		}
	})
}
