package mcpexpose

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
)

// openGET opens the GET stream of the handshake-era session at url and
// returns its reader, past the SDK's opening comment, and a func that
// drops the connection; or nil and the status.
func openGET(t *testing.T, url, session string) (*bufio.Reader, func(), int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, nil, resp.StatusCode
	}
	drop := func() {
		cancel()
		resp.Body.Close()
	}
	t.Cleanup(drop)
	r := bufio.NewReader(resp.Body)
	if opening := readLines(t, r, 2); opening != ": ok\n\n" {
		t.Fatalf("the GET stream opened with %q, want the SDK's comment", opening)
	}
	return r, drop, http.StatusOK
}

// openSession initializes a 2025-11-25 session at url and returns its id.
func openSession(t *testing.T, url string) string {
	t.Helper()
	status, session, _, body := initialize(t, url, "")
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: HTTP %d: %s", status, body)
	}
	legacyPost(t, url, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return session
}

// readLines reads n lines of r and returns them joined.
func readLines(t *testing.T, r *bufio.Reader, n int) string {
	t.Helper()
	var b strings.Builder
	for range n {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			t.Fatalf("after %q: %v", b.String(), err)
		}
	}
	return b.String()
}

// TestQuietStreamsWriteComments: a listen stream and a session's GET
// stream that have nothing to say write an SSE comment every
// StreamKeepAlive, each a whole block between events, for as long as they
// are open.
func TestQuietStreamsWriteComments(t *testing.T) {
	const every = 100 * time.Millisecond
	open := map[string]func(t *testing.T, url string) *bufio.Reader{
		"listen": func(t *testing.T, url string) *bufio.Reader {
			s, status, _, body := listen(t, url, "")
			if s == nil {
				t.Fatalf("listen: HTTP %d: %s", status, body)
			}
			if end := readLines(t, s.events, 1); end != "\n" { // the acknowledgement's
				t.Fatalf("the acknowledgement ended with %q", end)
			}
			return s.events
		},
		"GET": func(t *testing.T, url string) *bufio.Reader {
			r, _, status := openGET(t, url, openSession(t, url))
			if r == nil {
				t.Fatalf("GET stream: HTTP %d", status)
			}
			return r
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			_, srv := listenServer(t, HandlerOptions{Limits: &Limits{StreamKeepAlive: every}})
			r := open(t, srv.URL)
			for i := range 3 {
				got := make(chan string, 1)
				go func() {
					line1, _ := r.ReadString('\n')
					line2, _ := r.ReadString('\n')
					got <- line1 + line2
				}()
				start := time.Now()
				select {
				case block := <-got:
					if block != keepAliveComment {
						t.Fatalf("block %d of the quiet stream: %q, want %q", i, block, keepAliveComment)
					}
					t.Logf("comment %d after %v", i, time.Since(start).Round(time.Millisecond))
				case <-time.After(every + 10*time.Second):
					t.Fatalf("the quiet stream wrote no comment %d within %v", i, every+10*time.Second)
				}
			}
		})
	}
}

// brokenWriter is a response writer whose connection breaks when told:
// every write after break fails, as a write to a client that went away
// without the connection saying so (a proxy in front, a lost peer). Its
// request's context is never cancelled.
type brokenWriter struct {
	header  http.Header
	opening string        // closes began once written
	began   chan struct{} // closed when the stream has begun

	mu     sync.Mutex
	out    strings.Builder
	broken bool
	opened bool
}

func newBrokenWriter(opening string) *brokenWriter {
	return &brokenWriter{header: http.Header{}, opening: opening, began: make(chan struct{})}
}

func (b *brokenWriter) Header() http.Header { return b.header }

func (b *brokenWriter) WriteHeader(int) {}

func (b *brokenWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.broken {
		return 0, syscall.EPIPE
	}
	b.out.Write(p)
	if !b.opened && strings.Contains(b.out.String(), b.opening) {
		b.opened = true
		close(b.began)
	}
	return len(p), nil
}

func (b *brokenWriter) FlushError() error { return nil }

func (b *brokenWriter) written() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.out.String()
}

func (b *brokenWriter) breakNow() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.broken = true
}

// TestStreamWriteFailureEndsIt: a stream whose write fails, while its
// request's context says nothing, ends: the handler returns, a listen
// gives back its slot, and a session's GET stream can be opened again
// (200, where the SDK answers 409 to a second GET while the first is
// held).
func TestStreamWriteFailureEndsIt(t *testing.T) {
	const every = 50 * time.Millisecond
	listenBody, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": methodListen,
		"params": map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": mcptest.Meta(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		opening string
		request func(t *testing.T, url string) *http.Request
		after   func(t *testing.T, h *Handler, srv *httptest.Server, r *http.Request)
	}{
		{
			name:    "listen",
			opening: "notifications/subscriptions/acknowledged",
			request: func(t *testing.T, url string) *http.Request {
				r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(string(listenBody)))
				r.Header = mcptest.Request(t, url, methodListen, nil, "").Header
				return r
			},
			after: func(t *testing.T, h *Handler, _ *httptest.Server, _ *http.Request) {
				if total, _ := h.streams.count(""); total != 0 {
					t.Errorf("%d streams counted after the broken one ended, want 0", total)
				}
			},
		},
		{
			name:    "GET",
			opening: ": ok\n\n",
			request: func(t *testing.T, url string) *http.Request {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.Header.Set("Accept", "text/event-stream")
				r.Header.Set("Mcp-Session-Id", openSession(t, url))
				r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				return r
			},
			after: func(t *testing.T, _ *Handler, srv *httptest.Server, r *http.Request) {
				if got, _, status := openGET(t, srv.URL, r.Header.Get("Mcp-Session-Id")); got == nil {
					t.Errorf("the session's GET stream after the broken one ended: HTTP %d, want 200", status)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := listenServer(t, HandlerOptions{Limits: &Limits{StreamKeepAlive: every}})
			r := tc.request(t, srv.URL)
			w := newBrokenWriter(tc.opening)
			served := make(chan struct{})
			go func() {
				defer close(served)
				h.ServeHTTP(w, r)
			}()
			select {
			case <-w.began:
			case <-served:
				t.Fatalf("the stream ended before it began: %q", w.written())
			case <-time.After(10 * time.Second):
				t.Fatal("the stream did not begin within 10s")
			}
			w.breakNow()
			select {
			case <-served:
			case <-time.After(10 * time.Second):
				t.Fatalf("the stream whose writes fail is still served 10s later (keep-alive every %v)", every)
			}
			tc.after(t, h, srv, r)
		})
	}
}

// TestKeepAliveWritesBetweenEvents drives a stream's keep-alive by hand
// (its own timer set an hour away): a comment is written only into an
// event stream that has begun, has been quiet for the interval, and whose
// last write ended an event; never inside an event, never into another
// response.
func TestKeepAliveWritesBetweenEvents(t *testing.T) {
	type step struct {
		write string        // what the handler writes first
		quiet time.Duration // since the last write, when the timer fires
		want  string        // the response after the timer fired
	}
	const event = "event: message\ndata: {}\n\n"
	cases := []struct {
		name        string
		contentType string
		status      int // written before the steps, when set
		steps       []step
	}{
		{"quiet, between events", "text/event-stream", 0, []step{
			{write: event, quiet: 2 * time.Hour, want: event + keepAliveComment},
			{quiet: 2 * time.Hour, want: event + keepAliveComment + keepAliveComment},
		}},
		{"written within the interval", "text/event-stream", 0, []step{
			{write: event, quiet: time.Minute, want: event},
		}},
		{"inside an event", "text/event-stream", 0, []step{
			{write: "event: message\ndata: {", quiet: 2 * time.Hour, want: "event: message\ndata: {"},
			{write: "}\n", quiet: 2 * time.Hour, want: "event: message\ndata: {}\n"},
			{write: "\n", quiet: 2 * time.Hour, want: event + keepAliveComment},
		}},
		{"not an event stream", "application/json", 0, []step{
			{write: "{}\n\n", quiet: 2 * time.Hour, want: "{}\n\n"},
		}},
		{"an error", "text/event-stream", http.StatusConflict, []step{
			{write: event, quiet: 2 * time.Hour, want: event},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			rec.Header().Set("Content-Type", tc.contentType)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			a := &aliveWriter{w: rec, every: time.Hour, cancel: cancel}
			defer a.end()
			if tc.status != 0 {
				a.WriteHeader(tc.status)
			}
			for i, s := range tc.steps {
				if s.write != "" {
					if _, err := a.Write([]byte(s.write)); err != nil {
						t.Fatal(err)
					}
				}
				a.mu.Lock()
				a.last = time.Now().Add(-s.quiet)
				fire := a.timer != nil
				a.mu.Unlock()
				if fire {
					a.ping()
				}
				if got := rec.Body.String(); got != s.want {
					t.Errorf("step %d: the response is %q, want %q", i, got, s.want)
				}
			}
			if ctx.Err() != nil {
				t.Error("the request was cancelled")
			}
		})
	}
}

// TestStreamEndsAtWriteTimeout: served by an http.Server with a
// WriteTimeout (NewHTTPServer sets 10 minutes), a quiet listen stream ends
// at it: its first comment after it fails, and the stream gives its slot
// back, where a stream that never wrote would hold it until
// StreamLifetime.
func TestStreamEndsAtWriteTimeout(t *testing.T) {
	h, err := NewHandler(storeSnapshot(t), &HandlerOptions{Server: &ServerOptions{Swappable: true}, Limits: &Limits{StreamKeepAlive: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.WriteTimeout = 500 * time.Millisecond
	srv.Start()
	t.Cleanup(srv.Close)
	s, status, _, body := listen(t, srv.URL, "")
	if s == nil {
		t.Fatalf("listen: HTTP %d: %s", status, body)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = io.Copy(io.Discard, s.events)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the quiet stream is still open 10s after a WriteTimeout of 500ms")
	}
	// The slot is given back when the handler returns, which may be just
	// after the client saw the stream end (the failed write cancels the
	// request, and the connection can close before the deferred give-back
	// has run): wait for it, but a slot kept (a leak) fails.
	deadline := time.Now().Add(10 * time.Second)
	for {
		total, _ := h.streams.count("")
		if total == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d streams counted 10s after the stream ended, want 0", total)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStreamKeepAliveLimit checks the option's range and default: zero is
// 15 seconds, a value is kept, a negative one is refused by NewHandler.
func TestStreamKeepAliveLimit(t *testing.T) {
	for _, tc := range []struct {
		set, want time.Duration
	}{{0, 15 * time.Second}, {time.Second, time.Second}} {
		got, err := (&Limits{StreamKeepAlive: tc.set}).withDefaults()
		if err != nil || got.StreamKeepAlive != tc.want {
			t.Errorf("StreamKeepAlive %v: %v, %v; want %v", tc.set, got.StreamKeepAlive, err, tc.want)
		}
	}
	if _, err := NewHandler(storeSnapshot(t), &HandlerOptions{Limits: &Limits{StreamKeepAlive: -time.Second}}); err == nil || !strings.Contains(err.Error(), "Limits.StreamKeepAlive") {
		t.Errorf("a negative StreamKeepAlive: %v, want an error naming it", err)
	}
}
