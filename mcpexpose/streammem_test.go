package mcpexpose

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
)

// measureAlone runs the calling test again in a process of its own and
// reports what it logged and whether it failed: there no other test's
// goroutines, timers and garbage come and go while it measures the live
// heap. In a package's whole run they did, by more than the margins the
// measurements hold (an idle session measured 5.0 KiB against go-sdk's
// 4.6, where alone it measures 5.5 against 5.7). It returns true in the
// test that started the process, which has nothing more to do, and false
// in the process, which measures.
func measureAlone(t *testing.T) bool {
	t.Helper()
	const env = "AGNARA_MEASURE_ALONE"
	if os.Getenv(env) == t.Name() {
		return false
	}
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v", "-test.timeout=5m")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); strings.Contains(line, "_test.go:") {
			t.Log(line)
		}
	}
	if err != nil {
		t.Errorf("%s, measured in a process of its own: %v\n%s", t.Name(), err, out)
	}
	return true
}

// holdGET opens the GET stream of the handshake-era session over a bare
// TCP connection with small buffers, as holdListen opens a listen, so that
// what the held stream costs the test's heap is the server's; it returns a
// func that drops the connection.
func holdGET(t *testing.T, srv *httptest.Server, session string) func() {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n", srv.Listener.Addr(), session)
	r := bufio.NewReaderSize(conn, 256)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		rb, _ := io.ReadAll(resp.Body)
		conn.Close()
		t.Fatalf("GET stream: HTTP %d: %s", resp.StatusCode, rb)
	}
	if opening := readLines(t, bufio.NewReaderSize(resp.Body, 256), 2); opening != ": ok\n\n" {
		conn.Close()
		t.Fatalf("the GET stream opened with %q, want the SDK's comment", opening)
	}
	drop := func() { conn.Close() }
	t.Cleanup(drop)
	return drop
}

// heldCost is the live heap, goroutine stacks and goroutines a held
// stream adds.
type heldCost struct {
	kib, stackKiB, goroutines float64
}

func (c heldCost) String() string {
	return fmt.Sprintf("%.1f KiB of heap + %.1f KiB of stacks (%.1f goroutines)", c.kib, c.stackKiB, c.goroutines)
}

// liveAfterGC returns the live heap and the stacks in use.
func liveAfterGC() (heap, stacks uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// costOf runs open n times and returns what each adds to the live heap
// and to the goroutines, after a warm-up of a few; with AGNARA_HEAPPROFILE
// set, it writes the heap profile of the held streams to that path with
// the name appended.
func costOf(t *testing.T, name string, n int, open func()) heldCost {
	t.Helper()
	for range 5 {
		open()
	}
	heap, stacks := liveAfterGC()
	goroutines := runtime.NumGoroutine()
	for range n {
		open()
	}
	heap2, stacks2 := liveAfterGC()
	grown, grownStacks := int64(heap2)-int64(heap), int64(stacks2)-int64(stacks)
	if p := os.Getenv("AGNARA_HEAPPROFILE"); p != "" {
		f, err := os.Create(p + "-" + name + ".pprof")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			t.Fatal(err)
		}
	}
	return heldCost{kib: float64(grown) / float64(n) / 1024, stackKiB: float64(grownStacks) / float64(n) / 1024, goroutines: float64(runtime.NumGoroutine()-goroutines) / float64(n)}
}

// TestStreamMemory measures what the server holds for each kind of
// long-lived stream: a 2025-11-25 session, the GET stream of one, and a
// 2026-07-28 subscriptions/listen (docs/PERFORMANCE.md, issue 40 item 5).
func TestStreamMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("a measurement")
	}
	if measureAlone(t) {
		return
	}
	const n = 200
	if os.Getenv("AGNARA_HEAPPROFILE") != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 1
	}
	_, ssrv := sessionServer(t, &HandlerOptions{Limits: &Limits{MaxSessions: -1}})
	var sessions []string
	session := costOf(t, "session", n, func() {
		status, id, _, body := initialize(t, ssrv.URL, "")
		if status != http.StatusOK || id == "" {
			t.Fatalf("initialize: HTTP %d: %s", status, body)
		}
		sessions = append(sessions, id)
	})
	get := costOf(t, "get", n, func() {
		id := sessions[0]
		sessions = sessions[1:]
		holdGET(t, ssrv, id)
	})
	_, lsrv := listenServer(t, HandlerOptions{Limits: &Limits{MaxStreams: -1}})
	listen := costOf(t, "listen", n, func() {
		if drop, status, _, body := holdListen(t, lsrv); drop == nil {
			t.Fatalf("listen: HTTP %d: %s", status, body)
		}
	})
	_, ssdk := listenServer(t, HandlerOptions{Limits: &Limits{MaxStreams: -1}, DisableFastPath: true})
	sdkListen := costOf(t, "listen-sdk", n, func() {
		if drop, status, _, body := holdListen(t, ssdk); drop == nil {
			t.Fatalf("listen: HTTP %d: %s", status, body)
		}
	})
	t.Logf("a 2025-11-25 session %v; its GET stream %v more; a 2026-07-28 listen the edge holds %v; one the SDK holds (DisableFastPath) %v", session, get, listen, sdkListen)
	// Bounds a little above what was measured (go-sdk v1.8.0, Go 1.26:
	// 5.6, 16.5, 18.2 and 29.5 KiB of heap; 1, 2, 2 and 4 goroutines), so
	// that what the docs quote stays true: a change that makes a held
	// stream costlier fails here.
	for _, c := range []struct {
		what      string
		cost      heldCost
		kib, gors float64
	}{{"a session", session, 8, 1}, {"a GET stream", get, 20, 2}, {"a listen the edge holds", listen, 21, 2}, {"a listen the SDK holds", sdkListen, 34, 4}} {
		if c.cost.kib > c.kib || c.cost.goroutines > c.gors+0.05 {
			t.Errorf("%s holds %v, want at most %.0f KiB of heap and %.0f goroutines", c.what, c.cost, c.kib, c.gors)
		}
	}
	// Issue 40 item 5c: a listen costs no more than a session's GET stream.
	if l, g := listen.kib+listen.stackKiB, session.kib+session.stackKiB+get.kib+get.stackKiB; l > g {
		t.Errorf("a listen holds %.1f KiB live, a session with its GET stream %.1f", l, g)
	}
}
