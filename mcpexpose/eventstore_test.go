package mcpexpose

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type storeEchoIn struct {
	Text string `json:"text"`
}

func storeSnapshot(t testing.TB) *Snapshot {
	t.Helper()
	app := agnara.New("es", nil)
	echo := app.Capability(func(_ context.Context, in storeEchoIn) (string, error) {
		return in.Text, nil
	}, &agnara.CapabilityOptions{Name: "echo", Description: "Echo the text back."})
	exp := New(app)
	exp.Tool(echo, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// legacyPost sends body on session (none for initialize) and returns the
// response and its body.
func legacyPost(t *testing.T, url, session, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return legacyDo(t, req)
}

func legacyDo(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// resumeGET resumes a 2025-11-25 session's stream after lastEventID with
// a GET, and returns the answer with its whole body.
func resumeGET(t *testing.T, url, session, lastEventID string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", lastEventID)
	return legacyDo(t, req)
}

// eventIDs returns the ids of the events in an event stream, in order.
func eventIDs(body []byte) []string {
	var ids []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestReplayBounded makes many calls on one long-lived handshake-era
// session, as the soak does, and checks what the handler's event store
// keeps after each: never more than its budget plus the stream being
// written, with far fewer streams than calls (the SDK's MemoryEventStore
// keeps one per call until the session ends). The most recent stream can
// still be resumed; a forgotten one is refused; closing the session releases
// everything.
func TestReplayBounded(t *testing.T) {
	const budget = 32 << 10
	const calls = 1500
	h, err := NewHandler(storeSnapshot(t), &HandlerOptions{Limits: &Limits{ReplayBytes: budget}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	resp, body := legacyPost(t, srv.URL, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: HTTP %d, session %q: %s", resp.StatusCode, session, body)
	}
	legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	text := strings.Repeat("x", 200)
	// The slack is one stream with its priming event and one response.
	const slack = streamCost + 64 + 2*messageCost + 1024
	var first, last []string // event ids of the first and last calls
	peak := int64(0)
	for i := 1; i <= calls; i++ {
		resp, body := legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"es.echo","arguments":{"text":"`+text+`"}}}`)
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(text)) {
			t.Fatalf("call %d: HTTP %d: %.300s", i, resp.StatusCode, body)
		}
		size, _, _ := h.events.retained()
		if size > budget+slack {
			t.Fatalf("after call %d the store holds %d bytes, over its budget %d + %d", i, size, budget, slack)
		}
		peak = max(peak, size)
		if i == 1 {
			first = eventIDs(body)
		}
		last = eventIDs(body)
	}
	size, streams, messages := h.events.retained()
	t.Logf("after %d calls: %d bytes (peak %d), %d streams, %d messages", calls, size, peak, streams, messages)
	if size < budget/2 || streams < 2 {
		t.Errorf("the store holds %d bytes in %d streams: it keeps nothing to replay", size, streams)
	}
	if streams > calls/10 {
		t.Errorf("the store holds %d streams after %d calls", streams, calls)
	}
	if len(first) != 2 || len(last) != 2 {
		t.Fatalf("event ids %q and %q, want a priming event and a response each", first, last)
	}

	resume := func(lastEventID string) (*http.Response, []byte) { return resumeGET(t, srv.URL, session, lastEventID) }
	// After the priming event of the last call: its response is replayed.
	if resp, body := resume(last[0]); resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"id":`+strconv.Itoa(calls)+`,`)) {
		t.Errorf("resuming the last stream: HTTP %d: %.300s", resp.StatusCode, body)
	}
	// The first call's stream has been forgotten.
	if resp, body := resume(first[0]); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("resuming a forgotten stream: HTTP %d, want 400: %.300s", resp.StatusCode, body)
	}

	req, err := http.NewRequest(http.MethodDelete, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, body := legacyDo(t, req); resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: HTTP %d: %s", resp.StatusCode, body)
	}
	if size, streams, messages := h.events.retained(); size != 0 || streams != 0 || messages != 0 {
		t.Errorf("after DELETE the store holds %d bytes, %d streams, %d messages", size, streams, messages)
	}
}

// TestEventStore checks the store's contract with the SDK directly.
func TestEventStore(t *testing.T) {
	ctx := context.Background()
	msg := func(n int) []byte { return make([]byte, n) }
	collect := func(s *eventStore, session, stream string, index int) ([]int, error) {
		var sizes []int
		for d, err := range s.After(ctx, session, stream, index) {
			if err != nil {
				return sizes, err
			}
			sizes = append(sizes, len(d))
		}
		return sizes, nil
	}

	t.Run("replay after an index", func(t *testing.T) {
		s := newEventStore(1 << 20)
		s.Open(ctx, "a", "s1")
		for _, n := range []int{0, 10, 20} {
			if err := s.Append(ctx, "a", "s1", msg(n)); err != nil {
				t.Fatal(err)
			}
		}
		for index, want := range map[int]string{-1: "[0 10 20]", 0: "[10 20]", 2: "[]", 5: "[]"} {
			got, err := collect(s, "a", "s1", index)
			if err != nil || fmtInts(got) != want {
				t.Errorf("After(%d) = %v, %v; want %s", index, got, err, want)
			}
		}
	})

	t.Run("least recently written stream forgotten first", func(t *testing.T) {
		// Room for four streams of one message, less a little.
		s := newEventStore(4*(streamCost+3+messageCost+100) - 10)
		for _, id := range []string{"s1", "s2", "s3"} {
			s.Open(ctx, "a", id)
			s.Append(ctx, "a", id, msg(100))
		}
		s.Append(ctx, "a", "s1", msg(1)) // s2 is now the least recently written
		s.Open(ctx, "a", "s4")
		s.Append(ctx, "a", "s4", msg(100))
		if _, err := collect(s, "a", "s2", -1); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("s2: %v, want ErrEventsPurged", err)
		}
		for _, id := range []string{"s1", "s3", "s4"} {
			if _, err := collect(s, "a", id, -1); err != nil {
				t.Errorf("%s: %v", id, err)
			}
		}
		// A forgotten stream is not recreated: its indices are unknown.
		if err := s.Append(ctx, "a", "s2", msg(1)); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("Append to a forgotten stream: %v, want ErrEventsPurged", err)
		}
		if size, _, _ := s.retained(); size > s.max {
			t.Errorf("size %d over the budget %d", size, s.max)
		}
	})

	t.Run("standalone stream keeps its indices", func(t *testing.T) {
		s := newEventStore(streamCost + 2*messageCost + 250)
		s.Open(ctx, "a", "")
		s.Append(ctx, "a", "", msg(100)) // index 0
		s.Append(ctx, "a", "", msg(100)) // index 1
		s.Open(ctx, "a", "s1")           // drops the standalone stream's messages
		s.Append(ctx, "a", "s1", msg(200))
		if _, err := collect(s, "a", "", 0); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("After(0) of the trimmed standalone stream: %v, want ErrEventsPurged", err)
		}
		if err := s.Append(ctx, "a", "", msg(7)); err != nil { // index 2
			t.Fatal(err)
		}
		if got, err := collect(s, "a", "", 1); err != nil || fmtInts(got) != "[7]" {
			t.Errorf("After(1) = %v, %v; want [7]", got, err)
		}
	})

	t.Run("a message over the budget is kept alone", func(t *testing.T) {
		s := newEventStore(1000)
		s.Open(ctx, "a", "s1")
		s.Append(ctx, "a", "s1", msg(100))
		s.Open(ctx, "a", "s2")
		s.Append(ctx, "a", "s2", msg(5000))
		if got, err := collect(s, "a", "s2", -1); err != nil || fmtInts(got) != "[5000]" {
			t.Errorf("s2: %v, %v", got, err)
		}
		if _, err := collect(s, "a", "s1", -1); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("s1: %v, want ErrEventsPurged", err)
		}
	})

	t.Run("one stream keeps a quarter of the budget", func(t *testing.T) {
		// A stream written on and on while its client is away (a polled
		// call that logs) drops its oldest messages, not the other streams.
		s := newEventStore(4000)
		s.Open(ctx, "a", "s1")
		s.Append(ctx, "a", "s1", msg(100))
		s.Open(ctx, "a", "s2")
		s.Append(ctx, "a", "s2", nil) // the priming event, index 0
		for range 100 {
			s.Append(ctx, "a", "s2", msg(100)) // indices 1 to 100
		}
		var held int64
		for _, d := range s.sessions["a"].get("s2").data {
			held += messageCost + int64(cap(d))
		}
		if held > s.max/4 {
			t.Errorf("s2 holds %d bytes, over a quarter of the budget %d", held, s.max)
		}
		if _, err := collect(s, "a", "s2", 0); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("s2 after its priming event: %v, want ErrEventsPurged", err)
		}
		if got, err := collect(s, "a", "s2", 98); err != nil || fmtInts(got) != "[100 100]" {
			t.Errorf("s2 After(98) = %v, %v; want its last two messages", got, err)
		}
		if got, err := collect(s, "a", "s1", -1); err != nil || fmtInts(got) != "[100]" {
			t.Errorf("s1 = %v, %v; want it kept", got, err)
		}
	})

	t.Run("closing sessions releases everything", func(t *testing.T) {
		s := newEventStore(1 << 20)
		for _, session := range []string{"a", "b"} {
			s.Open(ctx, session, "")
			s.Append(ctx, session, "", msg(10))
			for _, id := range []string{"s1", "s2"} {
				s.Open(ctx, session, id)
				s.Append(ctx, session, id, nil)
				s.Append(ctx, session, id, msg(30))
			}
		}
		s.SessionClosed(ctx, "a")
		if _, err := collect(s, "a", "s1", -1); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("closed session: %v, want ErrEventsPurged", err)
		}
		if _, streams, _ := s.retained(); streams != 3 {
			t.Errorf("%d streams after closing one session of two, want 3", streams)
		}
		s.SessionClosed(ctx, "b")
		if size, streams, messages := s.retained(); size != 0 || streams != 0 || messages != 0 || s.lru.Len() != 0 {
			t.Errorf("after closing every session: %d bytes, %d streams, %d messages, %d in the LRU list", size, streams, messages, s.lru.Len())
		}
	})
}

func fmtInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return "[" + strings.Join(s, " ") + "]"
}

func TestReplayBytesOption(t *testing.T) {
	snap := storeSnapshot(t)
	if _, err := NewHandler(snap, &HandlerOptions{Limits: &Limits{ReplayBytes: -1}}); err == nil {
		t.Error("a negative ReplayBytes was accepted")
	}
	h, err := NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	if h.events.max != defaultReplayBytes {
		t.Errorf("default budget %d, want %d", h.events.max, defaultReplayBytes)
	}
}
