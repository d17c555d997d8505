package mcpexpose

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
)

// waitIn is the input of the handshake tests' waiting tool.
type waitIn struct {
	Tag string `json:"tag"`
}

// waiting is an application whose tool "wait" blocks until it is released
// or its context ends, so that tests can act while a session's call is in
// flight; "echo" answers at once.
type waiting struct {
	snap    *Snapshot
	started chan string   // each call's tag, as it starts
	release chan struct{} // closed to let every call return
	ended   chan error    // each call's context error as it returns
}

func newWaiting(t *testing.T) *waiting {
	t.Helper()
	wt := &waiting{started: make(chan string, 16), release: make(chan struct{}), ended: make(chan error, 16)}
	app := agnara.New("hs", nil)
	exp := New(app)
	exp.Tool(app.Capability(func(ctx context.Context, in waitIn) (string, error) {
		wt.started <- in.Tag
		select {
		case <-wt.release:
			wt.ended <- nil
			return "released " + in.Tag, nil
		case <-ctx.Done():
			wt.ended <- ctx.Err()
			return "", ctx.Err()
		}
	}, &agnara.CapabilityOptions{Name: "wait", Description: "Waits."}), &ToolOptions{Name: "wait"})
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) { return "hi", nil },
		&agnara.CapabilityOptions{Name: "hi", Description: "Answers at once."}), &ToolOptions{Name: "hi"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	wt.snap = snap
	return wt
}

// hsPost POSTs body on session sid (none when empty) at revision rev and
// returns the status and body.
func hsPost(t *testing.T, url, sid, rev, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if rev != "" {
		req.Header.Set("Mcp-Protocol-Version", rev)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Header.Del("Date")
	return resp.StatusCode, resp.Header, string(b)
}

// hsOpen opens a 2025-11-25 session on url and returns its id.
func hsOpen(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hs","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d, no session", resp.StatusCode)
	}
	if status, _, body := hsPost(t, url, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", status, body)
	}
	return sid
}

// hsCall is a tools/call of tool; a tag is the wait tool's argument.
func hsCall(id, tool, tag string) string {
	args := `{}`
	if tag != "" {
		args = `{"tag":"` + tag + `"}`
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}

func hsServe(t *testing.T, snap *Snapshot, opts *HandlerOptions) (*Handler, string) {
	t.Helper()
	h, err := NewHandler(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv.URL + "/mcp"
}

var hsStream = regexp.MustCompile(`(?m)^id: [A-Z2-7]{26}_`)

func hsMask(b string) string { return hsStream.ReplaceAllString(b, "id: …_") }

// TestSessionEdgeCallsAsTheSDKDoes holds the edge's answers to a
// session's calls in flight to the SDK's, on a handler with the edge and
// one without: a notifications/cancelled naming a call in flight cancels
// it, whoever runs it, and the POST ends as it ends on the SDK; a call
// whose id is in flight is refused as the SDK refuses it; the call's
// context is not ended by its POST's connection going away.
func TestSessionEdgeCallsAsTheSDKDoes(t *testing.T) {
	type outcome struct {
		cancelled, duplicate, released string
		ctxErr                         error
	}
	run := func(t *testing.T, disable bool) outcome {
		wt := newWaiting(t)
		h, url := hsServe(t, wt.snap, &HandlerOptions{DisableFastPath: disable})
		sid := hsOpen(t, url)
		var o outcome

		// Cancelled by the client.
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("21", "wait", "c"))
			o.cancelled = hsMask(body)
		}()
		if tag := <-wt.started; tag != "c" {
			t.Fatalf("started %q", tag)
		}
		if status, _, body := hsPost(t, url, sid, "2025-11-25", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":21}}`); status != http.StatusAccepted {
			t.Fatalf("notifications/cancelled: %d %s", status, body)
		}
		select {
		case o.ctxErr = <-wt.ended:
		case <-time.After(30 * time.Second):
			close(wt.release)
			t.Fatal("a notifications/cancelled naming the call did not cancel it")
		}
		wg.Wait()

		// A duplicate id, while the first call runs.
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("31", "wait", "d"))
			o.released = hsMask(body)
		}()
		<-wt.started
		status, hdr, body := hsPost(t, url, sid, "2025-11-25", hsCall("31", "hi", ""))
		o.duplicate = strings.Join([]string{http.StatusText(status), hdr.Get("Content-Type"), hdr.Get("Cache-Control"), hdr.Get("Connection"), body}, "|")
		close(wt.release)
		<-wt.ended
		wg.Wait()
		if !disable && h.FastPathRequests() < 2 {
			t.Errorf("the edge answered %d requests, want the calls", h.FastPathRequests())
		}
		return o
	}
	edge, sdk := run(t, false), run(t, true)
	if edge != sdk {
		t.Errorf("edge: %+v\nsdk:  %+v", edge, sdk)
	}
	if edge.ctxErr != context.Canceled {
		t.Errorf("the cancelled call's context ended with %v, want context.Canceled", edge.ctxErr)
	}
	if !strings.Contains(edge.duplicate, "duplicate in-flight request ID 31") {
		t.Errorf("the duplicate id was answered %q", edge.duplicate)
	}
}

// TestSessionEdgeKeepsTheIdleTimer: the edge keeps a session's idle timer
// for the calls it answers as the SDK keeps it for its own: calls keep the
// session alive however long they come, one in flight pauses it however
// long it runs, and once idle the session ends.
func TestSessionEdgeKeepsTheIdleTimer(t *testing.T) {
	for _, disable := range []bool{false, true} {
		name := "edge"
		if disable {
			name = "sdk"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wt := newWaiting(t)
			const timeout = 1500 * time.Millisecond
			h, url := hsServe(t, wt.snap, &HandlerOptions{DisableFastPath: disable, Limits: &Limits{SessionTimeout: timeout}})
			sid := hsOpen(t, url)
			// Calls for longer than the timeout: the session stays.
			for end := time.Now().Add(3 * timeout / 2); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if status, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("1", "hi", "")); status != http.StatusOK || !strings.Contains(body, `"hi"`) {
					t.Fatalf("a call while calls keep coming: %d %s", status, body)
				}
			}
			// One call in flight for longer than the timeout: the session
			// stays.
			done := make(chan string)
			go func() {
				_, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("2", "wait", "long"))
				done <- body
			}()
			<-wt.started
			time.Sleep(3 * timeout / 2)
			close(wt.release)
			if body := <-done; !strings.Contains(body, "released long") {
				t.Fatalf("the long call: %s", body)
			}
			if status, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("3", "hi", "")); status != http.StatusOK {
				t.Fatalf("a call after the long one: %d %s", status, body)
			}
			// Idle: the session ends (watched without a request, which
			// would keep it).
			eventually(t, "the idle session ends", func() bool { return h.sessions.lookup(sid) == nil })
			// The edge forgets the session as the SDK closes it, the SDK
			// only once it is closed: a call in between is not yet
			// refused. Ended, the session cannot be kept alive by a call:
			// wait for the refusal itself.
			status, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("4", "hi", ""))
			for deadline := time.Now().Add(10 * time.Second); status != http.StatusNotFound && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				status, _, body = hsPost(t, url, sid, "2025-11-25", hsCall("4", "hi", ""))
			}
			if status != http.StatusNotFound {
				t.Errorf("a call of the ended session: %d %s", status, body)
			}
			if disable == (h.FastPathRequests() > 0) {
				t.Errorf("the edge answered %d requests", h.FastPathRequests())
			}
		})
	}
}

// TestSessionEdgeStoresNothingAfterClose: a session deleted while the edge
// runs one of its calls keeps no event of it: the call's answer is not
// stored once SessionClosed has forgotten the session.
func TestSessionEdgeStoresNothingAfterClose(t *testing.T) {
	wt := newWaiting(t)
	h, url := hsServe(t, wt.snap, nil)
	sid := hsOpen(t, url)
	done := make(chan string)
	go func() {
		_, _, body := hsPost(t, url, sid, "2025-11-25", hsCall("1", "wait", "x"))
		done <- body
	}()
	<-wt.started
	req, _ := http.NewRequest("DELETE", url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	close(wt.release)
	body := <-done
	if strings.Contains(body, "released x") {
		t.Errorf("the answer of a call of a deleted session was sent: %s", body)
	}
	if h.FastPathRequests() != 1 {
		t.Errorf("the edge answered %d requests, want the call", h.FastPathRequests())
	}
	if size, streams, messages := h.events.retained(); size != 0 || streams != 0 || messages != 0 {
		t.Errorf("after the session closed the event store keeps %d bytes, %d streams, %d messages", size, streams, messages)
	}
}
