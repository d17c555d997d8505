package mcpexpose

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listenServer serves a swappable handler for storeSnapshot, whose
// listens stay open, on loopback.
func listenServer(t *testing.T, opts HandlerOptions) (*Handler, *httptest.Server) {
	t.Helper()
	server := ServerOptions{}
	if opts.Server != nil {
		server = *opts.Server
	}
	server.Swappable = true
	opts.Server = &server
	h, err := NewHandler(storeSnapshot(t), &opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// stream is one open subscriptions/listen response.
type stream struct {
	resp   *http.Response
	events *bufio.Reader
	cancel context.CancelFunc
}

// close drops the connection, as a client that goes away does.
func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the data of the stream's next event, or an error when the
// stream ended.
func (s *stream) next() (string, error) {
	for {
		line, err := s.events.ReadString('\n')
		if err != nil {
			return "", err
		}
		if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
			return d, nil
		}
	}
}

var listenID atomic.Int64

// listen POSTs a 2026-07-28 subscriptions/listen for tool list changes as
// token ("" for none). Open, the stream has delivered its acknowledgement;
// refused, it is nil and the answer's status, Retry-After and body are
// returned.
func listen(t *testing.T, url, token string) (s *stream, status int, retryAfter, body string) {
	t.Helper()
	id := listenID.Add(1)
	params := map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": mcptest.Meta(nil)}
	req := mcptest.Request(t, url, "subscriptions/listen", params, token)
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	req = req.WithContext(ctx)
	req.Body, req.ContentLength = io.NopCloser(strings.NewReader(string(b))), int64(len(b))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		rb, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, resp.Header.Get("Retry-After"), string(rb)
	}
	s = &stream{resp: resp, events: bufio.NewReader(resp.Body), cancel: cancel}
	ack, err := s.next()
	if err != nil || !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		s.close()
		t.Fatalf("listen %d: first event %q, %v; want the acknowledgement", id, ack, err)
	}
	t.Cleanup(s.close)
	return s, resp.StatusCode, "", ""
}

// holdListen is listen over a bare TCP connection with small buffers, so
// that what a held stream costs the test's own heap is the server's: it
// returns a func that drops the connection, or nil and the refusal.
func holdListen(t *testing.T, srv *httptest.Server) (drop func(), status int, retryAfter, body string) {
	t.Helper()
	return holdListenFor(t, srv, map[string]any{"toolsListChanged": true}, nil)
}

// holdListenFor is holdListen asking for the notifications notes, with
// the client capabilities caps (nil for none).
func holdListenFor(t *testing.T, srv *httptest.Server, notes, caps map[string]any) (drop func(), status int, retryAfter, body string) {
	t.Helper()
	id := listenID.Add(1)
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
		"params": map[string]any{"notifications": notes, "_meta": mcptest.Meta(caps)}})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n%s", srv.Listener.Addr(), len(b), b)
	r := bufio.NewReaderSize(conn, 256)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		defer conn.Close()
		rb, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, resp.Header.Get("Retry-After"), string(rb)
	}
	events := &stream{resp: resp, events: bufio.NewReaderSize(resp.Body, 256), cancel: func() {}}
	if ack, err := events.next(); err != nil || !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
		conn.Close()
		t.Fatalf("listen %d: first event %q, %v; want the acknowledgement", id, ack, err)
	}
	drop = func() { conn.Close() }
	t.Cleanup(drop)
	return drop, resp.StatusCode, "", ""
}

// listTools sends an ordinary 2026-07-28 tools/list and returns its status
// and JSON-RPC response.
func listTools(t *testing.T, url, token string) (int, map[string]any) {
	t.Helper()
	resp, _, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, token))
	return resp.StatusCode, msg
}

// refusedFor reports whether a refused listen's answer is the documented
// one: 503, Retry-After, -32000 naming limit.
func refusedFor(status int, retry, body, limit string) bool {
	return status == http.StatusServiceUnavailable && retry == "30" && strings.Contains(body, `"code":-32000`) && strings.Contains(body, "(limit "+limit+")")
}

// TestListenFloodIsBounded opens subscriptions/listen streams in a row, as
// the second attack run did (3,000 against agnara gateway, all held): past
// MaxStreams every listen gets 503 with Retry-After, no more streams are
// held than the cap, an ordinary tools/list is still answered, the heap
// grows with the cap and not with the flood, and a stream whose client goes
// away gives its slot back. The refusals are logged once.
func TestListenFloodIsBounded(t *testing.T) {
	const n, max = 400, 100
	var logs mcptest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))

	before, goroutines := heapAfterGC(), runtime.NumGoroutine()
	h, srv := listenServer(t, HandlerOptions{Server: &ServerOptions{Logger: logger}, Limits: &Limits{MaxStreams: max}})
	var held []func()
	for range max {
		drop, status, _, body := holdListen(t, srv)
		if drop == nil {
			t.Fatalf("listen within the cap: HTTP %d: %s", status, body)
		}
		held = append(held, drop)
	}
	atCap, goroutinesAtCap := heapAfterGC(), runtime.NumGoroutine()
	refused := 0
	for range n - max {
		drop, status, retry, body := holdListen(t, srv)
		if drop != nil || !refusedFor(status, retry, body, limitStreams) {
			t.Fatalf("listen past the cap: HTTP %d, Retry-After %q: %s", status, retry, body)
		}
		refused++
	}
	afterFlood := heapAfterGC()
	// The edge holds them (listen.go): the SDK holds no session for one.
	if total, _ := h.streams.count(""); total != max || liveSessions(h) != 0 {
		t.Errorf("counted %d streams, the SDK holds %d sessions; want %d streams and no session", total, liveSessions(h), max)
	}
	if status, msg := listTools(t, srv.URL, ""); status != http.StatusOK || msg["result"] == nil {
		t.Errorf("tools/list while the stream cap is full: HTTP %d %v", status, msg)
	}
	if got := strings.Count(logs.String(), "stream refused: limit reached"); got != 1 || !strings.Contains(logs.String(), "limit=MaxStreams") {
		t.Errorf("%d refusal records for %d refusals, want 1 naming the limit:\n%s", got, refused, logs.String())
	}

	// Clients that go away give their slots back, to new listens.
	for _, drop := range held[:10] {
		drop()
	}
	eventually(t, "closed streams free their slots", func() bool {
		total, _ := h.streams.count("")
		return total == max-10
	})
	for range 10 {
		if drop, status, _, body := holdListen(t, srv); drop == nil {
			t.Fatalf("listen after streams closed: HTTP %d: %s", status, body)
		}
	}
	if drop, status, retry, body := holdListen(t, srv); drop != nil || !refusedFor(status, retry, body, limitStreams) {
		t.Fatalf("listen past the cap again: HTTP %d, Retry-After %q: %s", status, retry, body)
	}

	// The same flood without a cap, for comparison.
	uBefore := heapAfterGC()
	hu, srvu := listenServer(t, HandlerOptions{Limits: &Limits{MaxStreams: -1}})
	for range n {
		if drop, status, _, body := holdListen(t, srvu); drop == nil {
			t.Fatalf("listen without a cap: HTTP %d: %s", status, body)
		}
	}
	uncapped := int64(heapAfterGC()) - int64(uBefore)
	if total, _ := hu.streams.count(""); total != n {
		t.Errorf("without a cap: %d streams counted, want %d", total, n)
	}
	perStream := float64(int64(atCap)-int64(before)) / max
	t.Logf("heap: %.1f MiB before, %.1f MiB holding %d streams (%.1f KiB and %.1f goroutines a stream), %.1f MiB after %d more were refused; %.1f MiB more holding %d streams without a cap",
		float64(before)/(1<<20), float64(atCap)/(1<<20), max, perStream/(1<<10), float64(goroutinesAtCap-goroutines)/max,
		float64(afterFlood)/(1<<20), refused, float64(uncapped)/(1<<20), n)
	if grown := int64(afterFlood) - int64(atCap); grown*4 > uncapped {
		t.Errorf("the refused flood grew the heap by %d bytes, holding %d streams without a cap %d: want under a quarter", grown, n, uncapped)
	}
}

// listenTokens is a verifier: "alice-<n>" and "bob-<n>" are alice and bob,
// holding only openid, valid for an hour; "brief" is brenda, expiring at
// the time stored in briefExpiry.
type listenTokens struct{ briefExpiry atomic.Int64 }

func (v *listenTokens) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	switch {
	case token == "brief":
		return &auth.TokenInfo{UserID: "brenda", Scopes: []string{"openid"}, Expiration: time.Unix(0, v.briefExpiry.Load())}, nil
	case strings.HasPrefix(token, "alice"):
		return &auth.TokenInfo{UserID: "alice", Scopes: []string{"openid"}, Expiration: time.Now().Add(time.Hour)}, nil
	case strings.HasPrefix(token, "bob"):
		return &auth.TokenInfo{UserID: "bob", Scopes: []string{"openid"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	return nil, auth.ErrInvalidToken
}

// TestListenStreamsPerPrincipal: one principal's streams are capped,
// however many tokens it holds, without taking another's slots; callers
// without a token count as one principal; a stream a principal closes is
// its slot back; without tokens only MaxStreams applies.
func TestListenStreamsPerPrincipal(t *testing.T) {
	var v listenTokens
	h, srv := listenServer(t, HandlerOptions{Tokens: v.verify, AllowAnonymous: true, Limits: &Limits{MaxStreamsPerPrincipal: 2}})
	for _, caller := range []string{"alice-1", "bob-1", ""} {
		var open []*stream
		for i := range 2 {
			s, status, _, body := listen(t, srv.URL, caller)
			if s == nil {
				t.Fatalf("%q listen %d: HTTP %d: %s", caller, i, status, body)
			}
			open = append(open, s)
		}
		s, status, retry, body := listen(t, srv.URL, strings.Replace(caller, "1", "2", 1))
		if s != nil || !refusedFor(status, retry, body, limitStreamsPerPrincipal) {
			t.Fatalf("%q third listen: HTTP %d, Retry-After %q: %s", caller, status, retry, body)
		}
		if caller == "alice-1" {
			open[0].close()
			eventually(t, "alice's closed stream frees her slot", func() bool {
				alice := &record{method: methodListen, ti: &auth.TokenInfo{UserID: "alice"}}
				h.srv.fill(context.Background(), alice, true)
				_, of := h.streams.count(alice.key())
				return of == 1
			})
			if s, status, _, body := listen(t, srv.URL, "alice-2"); s == nil {
				t.Fatalf("alice's listen after closing one: HTTP %d: %s", status, body)
			}
		}
	}
	if total, _ := h.streams.count(""); total != 6 {
		t.Errorf("counted %d streams, want 6", total)
	}

	// Without tokens the per-principal cap would be a second, smaller
	// MaxStreams: it does not apply.
	_, open := listenServer(t, HandlerOptions{Limits: &Limits{MaxStreamsPerPrincipal: 2}})
	for i := range 3 {
		if s, status, _, body := listen(t, open.URL, ""); s == nil {
			t.Fatalf("tokenless listen %d: HTTP %d: %s", i, status, body)
		}
	}
}

// TestListenStreamLifetime: a listen ends by itself after StreamLifetime,
// and one opened with a token at the token's expiry, cleanly — the
// listen's own result, with its id, and the response closes — and gives
// its slot back; a Go SDK client whose listen so ended goes on working.
func TestListenStreamLifetime(t *testing.T) {
	var v listenTokens
	cases := []struct {
		name  string
		opts  HandlerOptions
		token string
	}{
		{"lifetime", HandlerOptions{Limits: &Limits{StreamLifetime: 300 * time.Millisecond}}, ""},
		{"token expiry", HandlerOptions{Tokens: v.verify}, "brief"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, srv := listenServer(t, tc.opts)
			v.briefExpiry.Store(time.Now().Add(300 * time.Millisecond).UnixNano())
			s, status, _, body := listen(t, srv.URL, tc.token)
			if s == nil {
				t.Fatalf("listen: HTTP %d: %s", status, body)
			}
			ended := make(chan string, 1)
			go func() {
				var last string
				for {
					d, err := s.next()
					if err != nil {
						ended <- last
						return
					}
					last = d
				}
			}()
			var last string
			select {
			case last = <-ended:
			case <-time.After(10 * time.Second):
				t.Fatal("the stream is still open after 10s")
			}
			var msg struct {
				ID     int64           `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(last), &msg); err != nil || msg.ID != listenID.Load() || msg.Result == nil || msg.Error != nil {
				t.Errorf("the stream's last event %q (%v): want the listen's result, id %d", last, err, listenID.Load())
			}
			eventually(t, "the ended stream frees its slot", func() bool {
				total, _ := h.streams.count("")
				return total == 0
			})
		})
	}

	// A Go SDK client listens when it has a list-changed handler.
	h, srv := listenServer(t, HandlerOptions{Limits: &Limits{StreamLifetime: 300 * time.Millisecond}})
	var changed atomic.Int32
	cs := connectTo(t, srv.URL, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) }})
	eventually(t, "the client's listen is open", func() bool { total, _ := h.streams.count(""); return total == 1 })
	eventually(t, "the client's listen ends", func() bool { total, _ := h.streams.count(""); return total == 0 })
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("the client after its listen ended: %v", err)
	}
}

// connectTo connects a Go SDK client at 2026-07-28.
func connectTo(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, opts)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHandshakeEraListenIsNotOffered: a handshake-era session that POSTs
// subscriptions/listen is answered -32601 at once, holding nothing: the
// stateful SDK handler does not end a request whose connection ends, so a
// listen there would park its handler past its client.
func TestHandshakeEraListenIsNotOffered(t *testing.T) {
	h, srv := listenServer(t, HandlerOptions{})
	status, session, _, body := initialize(t, srv.URL, "")
	if status != http.StatusOK || session == "" {
		t.Fatalf("initialize: HTTP %d: %s", status, body)
	}
	legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL,
		strings.NewReader(`{"jsonrpc":"2.0","id":5,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(b), `"code":-32601`) {
		t.Fatalf("a session's listen answered %q (%v), want -32601 at once", b, err)
	}
	if total, _ := h.streams.count(""); total != 0 || liveSessions(h) != 1 {
		t.Errorf("after the refused listen: %d streams counted, %d sessions; want 0 and the one", total, liveSessions(h))
	}
}
