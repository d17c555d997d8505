package mcpexpose

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// pollSnapshot has one tool, "poll.wait", whose handler returns "done"
// once release is closed.
func pollSnapshot(t *testing.T, release <-chan struct{}) *Snapshot {
	t.Helper()
	app := agnara.New("poll", nil)
	wait := app.Capability(func(ctx context.Context) (string, error) {
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Second):
			return "", errors.New("never released")
		}
	}, &agnara.CapabilityOptions{Name: "wait", Description: "Wait to be released."})
	exp := New(app)
	exp.Tool(wait, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// sseFields returns the values of every line of an event stream that
// starts with field and ": ", in order.
func sseFields(body []byte, field string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+": "); ok {
			out = append(out, v)
		}
	}
	return out
}

// TestPollEndsStreamAndResumes calls a tool that outlasts PollAfter on a
// 2025-11-25 session, over plain HTTP: the POST's stream ends with a
// retry: field of PollRetry and no result, and a GET with the priming
// event's id as Last-Event-ID gets the result, replayed from the event
// store (the suite's server-sse-polling scenario, step by step).
func TestPollEndsStreamAndResumes(t *testing.T) {
	release := make(chan struct{})
	h, err := NewHandler(pollSnapshot(t, release), &HandlerOptions{Limits: &Limits{PollAfter: time.Millisecond, PollRetry: 40 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free()

	resp, body := legacyPost(t, srv.URL, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: HTTP %d, session %q: %s", resp.StatusCode, session, body)
	}
	legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The handler waits for release, so the POST's stream can only end
	// because it was polled.
	resp, body = legacyPost(t, srv.URL, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"poll.wait","arguments":{}}}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/call: HTTP %d: %s", resp.StatusCode, body)
	}
	if got := sseFields(body, "retry"); len(got) != 1 || got[0] != "40" {
		t.Fatalf("the polled stream's retry fields are %q, want [40]:\n%s", got, body)
	}
	if bytes.Contains(body, []byte(`"id":7`)) {
		t.Fatalf("the result came on the polled stream:\n%s", body)
	}
	ids := eventIDs(body)
	if len(ids) != 1 {
		t.Fatalf("event ids %q, want the priming event's", ids)
	}
	if h.FastPathRequests() != 1 {
		t.Errorf("the edge answered %d requests, want the call (ADR 76)", h.FastPathRequests())
	}

	free()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", ids[0])
	resp, body = legacyDo(t, req)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"id":7,"result"`)) || !bytes.Contains(body, []byte(`done`)) {
		t.Fatalf("resuming after %s: HTTP %d, want the result:\n%s", ids[0], resp.StatusCode, body)
	}
}

// resumeWatch is an http.RoundTripper that reports, by closing resumed,
// the first GET that resumes a stream (Last-Event-ID).
type resumeWatch struct {
	once    sync.Once
	resumed chan struct{}
}

func (rw *resumeWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
		rw.once.Do(func() { close(rw.resumed) })
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestPollGoClient calls, through the Go SDK client at 2025-11-25, a tool
// that returns only once the client has resumed its stream: the client
// follows the retry: field of the polled stream, reconnects with
// Last-Event-ID, and gets the result; the call is not run again. Without
// polling the handler never sees a resume and the call fails.
func TestPollGoClient(t *testing.T) {
	rw := &resumeWatch{resumed: make(chan struct{})}
	var runs sync.Map
	app := agnara.New("poll", nil)
	wait := app.Capability(func(ctx context.Context) (string, error) {
		runs.Store(time.Now(), true)
		select {
		case <-rw.resumed:
			return "after the resume", nil
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Second):
			return "", errors.New("the client never resumed the stream")
		}
	}, &agnara.CapabilityOptions{Name: "wait", Description: "Wait for the client to resume."})
	exp := New(app)
	exp.Tool(wait, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(snap, &HandlerOptions{Limits: &Limits{PollAfter: time.Millisecond, PollRetry: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: rw}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "poll.wait", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "after the resume") {
		t.Fatalf("result %+v, want the text returned after the resume", res)
	}
	n := 0
	runs.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("the handler ran %d times, want once", n)
	}
	if h.FastPathRequests() == 0 {
		t.Error("the edge did not answer the call (ADR 76)")
	}
}

// TestPollLimits checks the options' range and defaults.
func TestPollLimits(t *testing.T) {
	for _, l := range []*Limits{{PollAfter: -1}, {PollRetry: -1}} {
		if _, err := l.withDefaults(); err == nil {
			t.Errorf("%+v: no error", *l)
		}
	}
	got, err := (&Limits{PollAfter: time.Second}).withDefaults()
	if err != nil || got.PollRetry != defaultPollRetry || got.PollAfter != time.Second {
		t.Errorf("defaults: %+v, %v", got, err)
	}
}

// TestPolledCallsOnTheEdge: with PollAfter set, the Go SDK client's call
// on a 2025-11-25 session, which may be polled, and on a 2025-06-18
// session, which is never polled, are both answered by the edge (ADR 74,
// stage 2c); with DisableFastPath, by the SDK.
func TestPolledCallsOnTheEdge(t *testing.T) {
	app := agnara.New("poll", nil)
	echo := app.Capability(func(_ context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return in.Text, nil
	}, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."})
	exp := New(app)
	exp.Tool(echo, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		sdk     bool // DisableFastPath
	}{{"2025-06-18", false}, {"2025-11-25", false}, {"2025-11-25", true}} {
		h, err := NewHandler(snap, &HandlerOptions{Limits: &Limits{PollAfter: time.Minute}, DisableFastPath: tc.sdk})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
		if err != nil {
			t.Fatal(err)
		}
		before := h.FastPathRequests()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "poll.echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Fatalf("%s: %+v, %v", tc.version, res, err)
		}
		if edge := h.FastPathRequests() > before; edge == tc.sdk {
			t.Errorf("%s (DisableFastPath %v): the edge answered the call: %v", tc.version, tc.sdk, edge)
		}
		cs.Close()
		cancel()
	}
}
