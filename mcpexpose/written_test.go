package mcpexpose

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// cutCall POSTs a tools/call of echo with text on session over a bare
// TCP connection, reads the answer's stream up to its first event, the
// priming event, and drops the connection there, as a client whose
// connection is cut mid-stream: it returns that event's id.
func cutCall(t *testing.T, addr, session string, id int, text string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"es.echo","arguments":{"text":"` + text + `"}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n%s", addr, session, len(body), body)
	r := bufio.NewReaderSize(conn, 256)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("call %d: HTTP %d", id, resp.StatusCode)
	}
	prime := readLines(t, bufio.NewReaderSize(resp.Body, 64), 4)
	ids := eventIDs([]byte(prime))
	if len(ids) != 1 || !strings.HasPrefix(prime, "event: prime\n") {
		t.Fatalf("call %d began with %q, want its priming event", id, prime)
	}
	return ids[0]
}

// resumeCut resumes a stream cut by cutCall with Last-Event-ID. The SDK
// notices the cut only when its handler's write fails or the handler
// returns, and until then answers a resumption 409 ("stream ID conflicts
// with ongoing stream"); a client retries it, and so does this, for up to
// 5 s, when retry is set. The edge keeps a written answer whole before it
// writes it, so it is asked once.
func resumeCut(t *testing.T, url, session, last string, retry bool) (*http.Response, []byte) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		resp, body := resumeGET(t, url, session, last)
		if !retry || resp.StatusCode != http.StatusConflict || time.Now().After(deadline) {
			return resp, body
		}
	}
}

// TestWrittenStreamsResume: a call whose answer the edge wrote whole and
// kept only in the store's written log (ADR 88) is resumed whole by a
// client whose connection was cut after the priming event, with
// Last-Event-ID, also after other calls and among streams the store keeps
// otherwise (a call with progress: its stream is written event by
// event); the same on a handler without the edge; and nothing of it is
// kept once the session is deleted.
func TestWrittenStreamsResume(t *testing.T) {
	for _, fast := range []bool{true, false} {
		t.Run(fmt.Sprintf("edge=%v", fast), func(t *testing.T) {
			h, srv := sessionServer(t, &HandlerOptions{DisableFastPath: !fast})
			resp, body := legacyPost(t, srv.URL, "", initializeBody)
			session := resp.Header.Get("Mcp-Session-Id")
			if resp.StatusCode != http.StatusOK || session == "" {
				t.Fatalf("initialize: HTTP %d: %s", resp.StatusCode, body)
			}
			legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			addr := srv.Listener.Addr().String()
			big := strings.Repeat("y", 3000) // past net/http's chunking buffer: sent with its length
			cuts := map[int]string{}
			for i := 1; i <= 6; i++ {
				text := "answer-" + strconv.Itoa(i)
				if i == 4 {
					text += big
				}
				if i%2 == 0 {
					cuts[i] = cutCall(t, addr, session, i, text)
					continue
				}
				resp, body := legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"es.echo","arguments":{"text":"`+text+`"},"_meta":{"progressToken":"p"}}}`)
				if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), text) {
					t.Fatalf("call %d: HTTP %d: %.300s", i, resp.StatusCode, body)
				}
			}
			if fast && h.FastPathRequests() == 0 {
				t.Fatal("the edge answered nothing")
			}
			for i, last := range cuts {
				resp, body := resumeCut(t, srv.URL, session, last, !fast)
				want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"result":`
				stream, _, _ := strings.Cut(last, "_")
				if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(want)) || !bytes.Contains(body, []byte("answer-"+strconv.Itoa(i))) ||
					!bytes.Contains(body, []byte("id: "+stream+"_1\n")) || bytes.Count(body, []byte("event: message")) != 1 {
					t.Errorf("resuming call %d after %s: HTTP %d: %.400s", i, last, resp.StatusCode, body)
				}
			}
			if deleteSession(t, srv.URL, session, "") != http.StatusNoContent {
				t.Fatal("DELETE failed")
			}
			if size, streams, messages := h.events.retained(); size != 0 || streams != 0 || messages != 0 {
				t.Errorf("after DELETE the store holds %d bytes, %d streams, %d messages", size, streams, messages)
			}
		})
	}
}

// TestEventStoreWritten checks the written log against the store's
// contract: a whole stream is replayed as Open and Appends would replay
// it, counted against the one budget, forgotten oldest first among the
// other streams, its priming event dropped past a stream's quarter, and
// forgotten with its session.
func TestEventStoreWritten(t *testing.T) {
	ctx := context.Background()
	replay := func(s *eventStore, session, stream string, index int) (string, error) {
		var got []string
		for data, err := range s.After(ctx, session, stream, index) {
			if err != nil {
				return "", err
			}
			got = append(got, string(data))
		}
		return strings.Join(got, "|"), nil
	}
	msg := func(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }
	// keep keeps a written stream and returns its id.
	keep := func(s *eventStore, session string, primed bool, msg []byte) string {
		var id [writtenIDLen]byte
		s.writtenID(&id, s.keepWritten(session, primed, msg))
		return string(id[:])
	}
	// id is the id of the stream named so in the test.
	var ids map[string]string
	id := func(name string) string {
		if ids[name] != "" {
			return ids[name]
		}
		return name
	}

	t.Run("replay", func(t *testing.T) {
		ids = map[string]string{}
		s := newEventStore(1 << 20)
		ids["a"] = keep(s, "S", true, []byte("A"))
		ids["b"] = keep(s, "S", false, []byte("B"))
		for _, c := range []struct {
			stream string
			index  int
			want   string
		}{{"a", -1, "|A"}, {"a", 0, "A"}, {"a", 1, ""}, {"b", -1, "B"}, {"b", 0, ""}} {
			if got, err := replay(s, "S", id(c.stream), c.index); err != nil || got != c.want {
				t.Errorf("after %s_%d: %q, %v; want %q", c.stream, c.index, got, err, c.want)
			}
		}
		for _, other := range []string{s.prefix + "AAAAAAAAAAAAD", s.prefix + "HAAAAAAAAAAAB", s.prefix + "AAAAAAAAAAAa1", s.prefix, "AAAAAAAAAAAAAAAAAAAAAAAAAB"} {
			if _, err := replay(s, "S", other, 0); !errors.Is(err, mcp.ErrEventsPurged) {
				t.Errorf("stream %q, which the store never named: %v, want ErrEventsPurged", other, err)
			}
		}
		if _, err := replay(s, "T", id("a"), 0); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("another session's stream: %v, want ErrEventsPurged", err)
		}
		if size, streams, messages := s.retained(); streams != 2 || messages != 3 || size <= 0 {
			t.Errorf("retained %d bytes, %d streams, %d messages; want 2 streams, 3 messages", size, streams, messages)
		}
	})

	t.Run("oldest first", func(t *testing.T) {
		ids = map[string]string{}
		s := newEventStore(8000)
		_ = s.Open(ctx, "S", "open1")
		_ = s.Append(ctx, "S", "open1", msg(1300, 'o'))
		ids["w1"] = keep(s, "S", true, msg(1300, 'w'))
		_ = s.Open(ctx, "S", "open2")
		_ = s.Append(ctx, "S", "open2", msg(1300, 'p'))
		ids["w2"] = keep(s, "S", true, msg(1300, 'x'))
		ids["w3"] = keep(s, "S", true, msg(1800, 'y'))
		ids["w4"] = keep(s, "S", true, msg(1800, 'z')) // over the budget: open1 goes, then w1
		for stream, kept := range map[string]bool{"open1": false, "w1": false, "open2": true, "w2": true, "w3": true, "w4": true} {
			_, err := replay(s, "S", id(stream), 0)
			if kept != (err == nil) {
				t.Errorf("%s: %v, kept %v", stream, err, kept)
			}
		}
		if size, _, _ := s.retained(); size > 8000 {
			t.Errorf("the store counts %d, over its budget", size)
		}
	})

	t.Run("quarter", func(t *testing.T) {
		ids = map[string]string{}
		s := newEventStore(4000)
		ids["w"] = keep(s, "S", true, msg(1200, 'q'))
		if _, err := replay(s, "S", id("w"), -1); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("from before the dropped priming event: %v, want ErrEventsPurged", err)
		}
		if got, err := replay(s, "S", id("w"), 0); err != nil || len(got) != 1200 {
			t.Errorf("after the priming event: %d bytes, %v", len(got), err)
		}
	})

	t.Run("closed", func(t *testing.T) {
		ids = map[string]string{}
		s := newEventStore(1 << 20)
		ids["a"] = keep(s, "S", true, []byte("A"))
		ids["b"] = keep(s, "T", true, []byte("B"))
		ids["c"] = keep(s, "S", true, []byte("C"))
		_ = s.SessionClosed(ctx, "S")
		if _, err := replay(s, "S", id("c"), 0); !errors.Is(err, mcp.ErrEventsPurged) {
			t.Errorf("a closed session's stream: %v", err)
		}
		if got, err := replay(s, "T", id("b"), 0); err != nil || got != "B" {
			t.Errorf("another session's stream: %q, %v", got, err)
		}
		_ = s.SessionClosed(ctx, "T")
		if size, streams, messages := s.retained(); size != 0 || streams != 0 || messages != 0 || len(s.written) != 0 {
			t.Errorf("after both closed: %d bytes, %d streams, %d messages, %d log entries", size, streams, messages, len(s.written))
		}
	})

	t.Run("sessions come and go", func(t *testing.T) {
		ids = map[string]string{}
		s := newEventStore(1 << 20)
		ids["old"] = keep(s, "old", true, []byte("O")) // an idle session's answer, never forgotten
		for i := range 1000 {
			session := "S" + strconv.Itoa(i)
			keep(s, session, true, []byte("A"))
			_ = s.SessionClosed(ctx, session)
		}
		if len(s.written) > 4 {
			t.Errorf("after 1000 sessions came and went the log holds %d entries, want the idle one's and few more", len(s.written))
		}
		if got, err := replay(s, "old", id("old"), 0); err != nil || got != "O" {
			t.Errorf("the idle session's answer: %q, %v", got, err)
		}
	})
}
