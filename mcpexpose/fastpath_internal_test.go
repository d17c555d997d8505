package mcpexpose

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
)

// TestFastPathCallStaysOnItsSnapshot swaps the snapshot between the fast
// path's decision and the call, to one where the tool of the same name is
// a task tool with another handler: the call runs on the snapshot its
// record holds (this tool is no task), and the next call, decided on the
// new one, runs as a task, answered by the edge too.
func TestFastPathCallStaysOnItsSnapshot(t *testing.T) {
	app := agnara.New("pin", nil)
	direct := app.Capability(func(context.Context) (string, error) { return "direct", nil },
		&agnara.CapabilityOptions{Name: "direct", Description: "Answers at once."})
	tasked := app.Capability(func(context.Context) (string, error) { return "tasked", nil },
		&agnara.CapabilityOptions{Name: "tasked", Description: "Runs as a task."})
	// A task tool in both snapshots, so that the server runs tasks.
	background := app.Capability(func(context.Context) (string, error) { return "background", nil },
		&agnara.CapabilityOptions{Name: "background", Description: "Runs as a task."})
	compile := func(build func(*Exposure)) *Snapshot {
		exp := New(app)
		exp.Tool(background, &ToolOptions{Task: TaskRequired})
		build(exp)
		snap, err := exp.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	before := compile(func(e *Exposure) { e.Tool(direct, &ToolOptions{Name: "pin.work"}) })
	after := compile(func(e *Exposure) { e.Tool(tasked, &ToolOptions{Name: "pin.work", Task: TaskRequired}) })

	h, err := NewHandler(before, &HandlerOptions{Server: &ServerOptions{Swappable: true}})
	if err != nil {
		t.Fatal(err)
	}
	swapped := 0
	h.fastDecided = func(context.Context) {
		if swapped++; swapped == 1 {
			if err := h.Swap(after); err != nil {
				t.Error(err)
			}
		}
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	call := func() string {
		t.Helper()
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pin.work","arguments":{},"_meta":{` +
			`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"pin","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
		req, err := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "pin.work"} {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	first := call()
	if swapped != 1 || h.Snapshot() != after {
		t.Fatalf("the swap did not land between the decision and the call (hook ran %d times)", swapped)
	}
	if !strings.Contains(first, `\"result\":\"direct\"`) || strings.Contains(first, "taskId") || h.FastPathRequests() != 1 {
		t.Fatalf("decided on the old snapshot, the call answered %s (fast path answered %d)", first, h.FastPathRequests())
	}
	second := call()
	if !strings.Contains(second, "taskId") || h.FastPathRequests() != 2 {
		t.Fatalf("decided on the new snapshot, the call answered %s (fast path answered %d), want the edge's task", second, h.FastPathRequests())
	}
}

// auditCount counts the audit records of decided calls.
type auditCount struct{ n atomic.Int32 }

func (a *auditCount) Record(context.Context, AuditRecord) { a.n.Add(1) }

// TestFastPathDropsACallWhoseCallerLeft retries a confirmation over
// loopback HTTP and has the client leave once the fast path has decided
// to answer, before the call runs: as on the SDK path, which hands no
// request whose context is done to the server, nothing of the call runs —
// no audit record, no handler, and the single-use request state is not
// spent, so the client's next retry with the same state completes.
//
// It also counts, for the record, how often a handler runs when 100
// clients each send a call and close the connection at once, with the
// fast path and without it: a race between the server and the closing
// connection, reported, not asserted.
func TestFastPathDropsACallWhoseCallerLeft(t *testing.T) {
	app := agnara.New("gone", nil)
	var purged, touched atomic.Int32
	purge := app.Capability(func(context.Context) (string, error) { purged.Add(1); return "purged", nil },
		&agnara.CapabilityOptions{Name: "purge", Description: "Needs a yes.", Confirm: "Purge it?"})
	touch := app.Capability(func(context.Context) (string, error) { touched.Add(1); return "touched", nil },
		&agnara.CapabilityOptions{Name: "touch", Description: "Counts."})
	exp := New(app)
	exp.Tool(purge, &ToolOptions{Name: "purge"})
	exp.Tool(touch, &ToolOptions{Name: "touch"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var audits auditCount
	h, err := NewHandler(snap, &HandlerOptions{Server: &ServerOptions{Audit: &audits}})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		served <- struct{}{}
	}))
	defer srv.Close()
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	body := func(tool, extra string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}` + extra + `,` + meta + `}}`
	}
	post := func(ctx context.Context, tool, b string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader(b))
		if err != nil {
			return "", err
		}
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool} {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		return string(out), err
	}
	mustPost := func(b string) string {
		t.Helper()
		out, err := post(context.Background(), "purge", b)
		if err != nil {
			t.Fatal(err)
		}
		<-served
		return out
	}

	ask := mustPost(body("purge", ""))
	var msg struct {
		Result struct {
			RequestState  string                     `json:"requestState"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(ask[strings.Index(ask, "{"):])), &msg); err != nil || msg.Result.RequestState == "" || len(msg.Result.InputRequests) != 1 {
		t.Fatalf("no confirmation asked (%v): %s", err, ask)
	}
	var key string
	for k := range msg.Result.InputRequests {
		key = k
	}
	yes := body("purge", `,"requestState":"`+msg.Result.RequestState+`","inputResponses":{"`+key+`":{"action":"accept","content":{"confirm":true}}}`)
	fastBefore, auditsBefore := h.FastPathRequests(), audits.n.Load()

	decided := make(chan struct{})
	h.fastDecided = func(ctx context.Context) {
		close(decided)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
			t.Error("the server did not see the client leave within 10s")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := post(ctx, "purge", yes)
		errc <- err
	}()
	<-decided
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the client that left got an answer")
	}
	<-served
	h.fastDecided = nil
	if got := audits.n.Load() - auditsBefore; got != 0 || purged.Load() != 0 || h.FastPathRequests() != fastBefore {
		t.Fatalf("for a call whose client left before it ran: %d audit records, handler ran %d times, fast path answered %d; want none of these",
			got, purged.Load(), h.FastPathRequests()-fastBefore)
	}
	if out := mustPost(yes); !strings.Contains(out, `purged`) || purged.Load() != 1 {
		t.Fatalf("the retry after the dropped one = %s (handler ran %d times), want the purge done with the same state", out, purged.Load())
	}

	// Disconnect at once, counted on both paths.
	for _, fast := range []bool{true, false} {
		hh, err := NewHandler(snap, &HandlerOptions{DisableFastPath: !fast})
		if err != nil {
			t.Fatal(err)
		}
		var done atomic.Int32
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer done.Add(1)
			hh.ServeHTTP(w, r)
		}))
		const n = 100
		before := touched.Load()
		b := body("touch", "")
		raw := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: touch\r\nContent-Length: %d\r\n\r\n%s", s.Listener.Addr(), len(b), b)
		for range n {
			c, err := net.Dial("tcp", s.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.WriteString(c, raw); err != nil {
				t.Fatal(err)
			}
			c.Close()
		}
		deadline := time.Now().Add(30 * time.Second)
		for done.Load() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		s.Close()
		if done.Load() != n {
			t.Fatalf("fast path %v: the server finished %d of %d requests", fast, done.Load(), n)
		}
		t.Logf("fast path %v: %d clients sent a call and left at once; the handler ran for %d of them", fast, n, touched.Load()-before)
	}
}
