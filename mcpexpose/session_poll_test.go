package mcpexpose_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// WaitIn says when the polled tool reports progress: "before" it waits
// for its gate, "after", or "" for never.
type WaitIn struct {
	Tell string `json:"tell,omitempty"`
}

// pollApp has one tool, "wait", that returns once gate is closed, and
// reports progress before or after it waits.
func pollApp(t testing.TB, gate <-chan struct{}) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("poll", nil)
	wait := app.Capability(func(ctx context.Context, in WaitIn) (string, error) {
		ec, _ := execution.FromContext(ctx)
		if in.Tell == "before" {
			ec.Progress(1, 2, "waiting")
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(20 * time.Second):
			return "", errors.New("never let through")
		}
		if in.Tell == "after" {
			ec.Progress(2, 2, "let through")
		}
		return "through <gate>", nil
	}, &agnara.CapabilityOptions{Name: "wait", Description: "Waits for its gate."})
	exp := mcpexpose.New(app)
	exp.Tool(wait, &mcpexpose.ToolOptions{Name: "wait"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestPolledCallDifferential holds the edge's polled calls (ADR 74, stage
// 2c) to the SDK's: a call on a 2025-11-25 session whose POST outlasts
// Limits.PollAfter, with and without progress before and after the poll,
// and one that answers in time, sent to a handler whose edge answers it
// and to one with DisableFastPath, whose SDK polls it. The POST's stream
// (primed, the events before the poll, the close event with its retry:
// field) and the GET that resumes it after its priming event (the rest,
// and the answer) must be the same on both, stream ids masked.
func TestPolledCallDifferential(t *testing.T) {
	const rev = "2025-11-25"
	for _, tc := range []struct {
		name      string
		args      string
		meta      string
		pollAfter time.Duration
		polled    bool
	}{
		{"outlasts", `{}`, "", 20 * time.Millisecond, true},
		{"tells-before", `{"tell":"before"}`, `,"_meta":{"progressToken":"p"}`, time.Second, true},
		{"tells-after", `{"tell":"after"}`, `,"_meta":{"progressToken":7}`, 20 * time.Millisecond, true},
		{"in-time", `{"tell":"after"}`, `,"_meta":{"progressToken":"p"}`, time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edgeGate, sdkGate := make(chan struct{}), make(chan struct{})
			opts := mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{PollAfter: tc.pollAfter, PollRetry: 40 * time.Millisecond}}
			edgeH, _, edgeURL, sdkURL := servePair(t, pollApp(t, edgeGate), pollApp(t, sdkGate), opts)
			client := &http.Client{Timeout: 30 * time.Second}
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":` + tc.args + tc.meta + `}}`
			run := func(url string, gate chan struct{}) (post, get exchange) {
				c := openSession(t, client, url, "", rev)
				if !tc.polled {
					close(gate) // answered in time
				}
				post = c.send(t, wireRequest{name: tc.name, header: sessionHeader(rev), body: body})
				if tc.polled {
					close(gate)
				}
				m := firstEvent.FindStringSubmatch(post.raw)
				if m == nil {
					t.Fatalf("the POST's stream is not primed: %d %s", post.status, post.raw)
				}
				return post, c.resume(t, rev, m[1]+"_0")
			}
			before := edgeH.FastPathRequests()
			edgePost, edgeGet := run(edgeURL, edgeGate)
			if edgeH.FastPathRequests() != before+1 {
				t.Error("the edge did not answer the call")
			}
			sdkPost, sdkGet := run(sdkURL, sdkGate)
			if !edgePost.equal(sdkPost) {
				t.Errorf("the POST:\nedge: %d %v\n%s\nsdk:  %d %v\n%s", edgePost.status, edgePost.header, edgePost.body, sdkPost.status, sdkPost.header, sdkPost.body)
			}
			if !edgeGet.equal(sdkGet) {
				t.Errorf("the GET resuming it:\nedge: %d %v\n%s\nsdk:  %d %v\n%s", edgeGet.status, edgeGet.header, edgeGet.body, sdkGet.status, sdkGet.header, sdkGet.body)
			}
			if polledHere := strings.Contains(edgePost.raw, "event: close\nretry: 40\n"); polledHere != tc.polled {
				t.Errorf("the POST ended with a close event: %v, want %v:\n%s", polledHere, tc.polled, edgePost.raw)
			}
			if strings.Contains(edgePost.raw, `"id":7`) == tc.polled || !strings.Contains(edgeGet.raw, `through \u003cgate\u003e`) {
				t.Errorf("the answer is not where it belongs (polled: %v):\nPOST:\n%s\nGET:\n%s", tc.polled, edgePost.raw, edgeGet.raw)
			}
		})
	}
}

// TestPolledStreamResumesOnlyForItsCaller attacks a polled call on the
// edge: once its POST has ended with the close event, another caller's
// GET with the stream's Last-Event-ID (on the session, with their own
// valid token) is refused as the SDK refuses a stranger (403) and is sent
// nothing of the call; the session's own caller then resumes it and gets
// the answer.
func TestPolledStreamResumesOnlyForItsCaller(t *testing.T) {
	const rev = "2025-11-25"
	gate := make(chan struct{})
	h, err := mcpexpose.NewHandler(pollApp(t, gate), &mcpexpose.HandlerOptions{Tokens: tokens,
		Limits: &mcpexpose.Limits{PollAfter: 20 * time.Millisecond, PollRetry: 40 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Timeout: 30 * time.Second}
	wendy := openSession(t, client, srv.URL, "Bearer writer", rev)
	post := wendy.send(t, wireRequest{name: "polled", header: sessionHeader(rev), body: `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"wait","arguments":{}}}`})
	m := firstEvent.FindStringSubmatch(post.raw)
	if m == nil || !strings.Contains(post.raw, "event: close\nretry: 40\n") {
		t.Fatalf("the POST did not end polled: %d %s", post.status, post.raw)
	}
	if h.FastPathRequests() == 0 {
		t.Fatal("the edge did not answer the call")
	}
	// While the call still waits at its gate: a stream the edge would
	// hold open for its caller is refused at once to another.
	rita := &sessionConn{url: wendy.url, id: wendy.id, authz: "Bearer reader", client: &http.Client{Timeout: 5 * time.Second}}
	stolen := rita.resume(t, rev, m[1]+"_0")
	if stolen.status != http.StatusForbidden || strings.Contains(stolen.raw, "through") {
		t.Fatalf("another caller's resume: %d %s", stolen.status, stolen.raw)
	}
	close(gate)
	got := wendy.resume(t, rev, m[1]+"_0")
	if got.status != http.StatusOK || !strings.Contains(got.raw, `"id":7,"result"`) {
		t.Fatalf("the caller's own resume: %d %s", got.status, got.raw)
	}
}
