package mcpexpose_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveApp is one application and the snapshots a live handler is swapped
// between. Every tool is public except live.admin (scope ledger:write).
type liveApp struct {
	app      *agnara.App
	started  chan struct{} // live.hold has begun
	release  chan struct{} // lets live.hold return
	purged   atomic.Int32
	builders map[string]func(*mcpexpose.Exposure)
}

func newLiveApp(t testing.TB) *liveApp {
	t.Helper()
	l := &liveApp{app: agnara.New("live", nil), started: make(chan struct{}, 8), release: make(chan struct{})}
	app := l.app
	echo := app.Capability(func(ctx context.Context, in EchoIn) (string, error) { return "echo " + in.Text, nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echo the text."})
	extra := app.Capability(func(ctx context.Context) (string, error) { return "extra", nil },
		&agnara.CapabilityOptions{Name: "extra", Description: "A tool enabled by a flag."})
	admin := app.Capability(func(ctx context.Context) (string, error) { return "admin", nil },
		&agnara.CapabilityOptions{Name: "admin", Description: "Only for writers.", Scopes: []string{"ledger:write"}})
	hold := app.Capability(func(ctx context.Context) (string, error) {
		l.started <- struct{}{}
		select {
		case <-l.release:
			return "held", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &agnara.CapabilityOptions{Name: "hold", Description: "Blocks until released."})
	purge := app.Capability(func(ctx context.Context, in PurgeIn) (string, error) {
		l.purged.Add(1)
		return "purged " + in.ID, nil
	}, &agnara.CapabilityOptions{Name: "purge", Description: "Purge a record.", Confirm: "Purge this record?"})
	purge2 := app.Capability(func(ctx context.Context, in PurgeIn) (string, error) {
		l.purged.Add(1)
		return "purged (v2) " + in.ID, nil
	}, &agnara.CapabilityOptions{Name: "purge2", Description: "Purge a record, and its backups.", Confirm: "Purge this record and its backups?"})
	l.builders = map[string]func(*mcpexpose.Exposure){
		"echo":   func(e *mcpexpose.Exposure) { e.Tool(echo, nil) },
		"extra":  func(e *mcpexpose.Exposure) { e.Tool(extra, nil) },
		"admin":  func(e *mcpexpose.Exposure) { e.Tool(admin, nil) },
		"hold":   func(e *mcpexpose.Exposure) { e.Tool(hold, nil) },
		"purge":  func(e *mcpexpose.Exposure) { e.Tool(purge, nil) },
		"purge2": func(e *mcpexpose.Exposure) { e.Tool(purge2, &mcpexpose.ToolOptions{Name: "live.purge"}) },
	}
	return l
}

// snap compiles a new exposure of the application with the named tools.
func (l *liveApp) snap(t testing.TB, tools ...string) *mcpexpose.Snapshot {
	t.Helper()
	exp := mcpexpose.New(l.app)
	for _, name := range tools {
		l.builders[name](exp)
	}
	s, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func swappable(opts *mcpexpose.HandlerOptions) *mcpexpose.HandlerOptions {
	if opts == nil {
		opts = &mcpexpose.HandlerOptions{}
	}
	server := mcpexpose.ServerOptions{}
	if opts.Server != nil {
		server = *opts.Server
	}
	server.Swappable = true
	opts.Server = &server
	return opts
}

// listener is a Go SDK client session that counts the tools/list_changed
// notifications it receives.
type listener struct {
	cs      *mcp.ClientSession
	changes chan struct{}
	count   atomic.Int32
}

// listen connects a Go SDK client with a ToolListChangedHandler. At
// 2026-07-28 the client opens a subscriptions/listen stream by itself;
// listen returns once the server has acknowledged it, so that a swap
// after it is heard.
func listen(t *testing.T, url, token, version string) *listener {
	t.Helper()
	l := &listener{changes: make(chan struct{}, 16)}
	acked := make(chan struct{}, 1)
	c := mcp.NewClient(&mcp.Implementation{Name: "listener", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			l.count.Add(1)
			l.changes <- struct{}{}
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/subscriptions/acknowledged" {
				select {
				case acked <- struct{}{}:
				default:
				}
			}
			return next(ctx, method, req)
		}
	})
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = bearer{token: token, base: http.DefaultTransport}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect (version %q): %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	l.cs = cs
	if cs.InitializeResult().ProtocolVersion >= "2026-07-28" {
		select {
		case <-acked:
		case <-ctx.Done():
			t.Fatal("the server never acknowledged subscriptions/listen")
		}
	}
	return l
}

// await waits for the next change notification.
func (l *listener) await(t *testing.T, who string) {
	t.Helper()
	select {
	case <-l.changes:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no notifications/tools/list_changed", who)
	}
}

func TestSwapTellsConnectedClients(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	la := newLiveApp(t)
	h, err := mcpexpose.NewHandler(la.snap(t, "echo"), swappable(nil))
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)

	// The TypeScript client (handshake era) connects, lists, says ready,
	// and waits.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ts := exec.CommandContext(ctx, node, filepath.Join("..", "conformance", "ts-listen.mjs"), url, "live.extra")
	ts.Stderr = os.Stderr
	out, err := ts.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		t.Fatalf("TypeScript client: want ready, got %q (%v)", lines.Text(), lines.Err())
	}

	clients := map[string]*listener{
		"2026-07-28": listen(t, url, "", ""),
		"2025-11-25": listen(t, url, "", "2025-11-25"),
	}
	for version, l := range clients {
		ir := l.cs.InitializeResult()
		if ir.ProtocolVersion != version || ir.Capabilities.Tools == nil || !ir.Capabilities.Tools.ListChanged {
			t.Fatalf("%s: negotiated %s with tools capability %+v, want listChanged", version, ir.ProtocolVersion, ir.Capabilities.Tools)
		}
	}
	legacyID := clients["2025-11-25"].cs.ID()

	if err := h.Swap(la.snap(t, "echo", "extra")); err != nil {
		t.Fatal(err)
	}

	for version, l := range clients {
		l.await(t, version)
		res, err := l.cs.ListTools(t.Context(), nil)
		if err != nil || toolNames(res.Tools) != "live.echo,live.extra" {
			t.Fatalf("%s: tools after the swap = %v, %v", version, res, err)
		}
		call, err := l.cs.CallTool(t.Context(), callParams("live.extra", map[string]any{}))
		if err != nil || call.IsError || textOf(t, call) != `{"result":"extra"}` {
			t.Fatalf("%s: live.extra after the swap = %+v, %v", version, call, err)
		}
	}
	if id := clients["2025-11-25"].cs.ID(); id != legacyID || id == "" {
		t.Errorf("the handshake-era session changed: %q, then %q", legacyID, id)
	}

	if !lines.Scan() {
		t.Fatalf("TypeScript client printed nothing after the swap: %v", lines.Err())
	}
	var got struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Tools struct {
				ListChanged bool `json:"listChanged"`
			} `json:"tools"`
		} `json:"capabilities"`
		SameSession bool     `json:"sameSession"`
		Before      []string `json:"before"`
		After       []string `json:"after"`
		Result      struct {
			Content []struct{ Text string } `json:"content"`
			IsError bool                    `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(lines.Bytes(), &got); err != nil {
		t.Fatalf("TypeScript client printed %q: %v", lines.Bytes(), err)
	}
	if err := ts.Wait(); err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	if got.ProtocolVersion != "2025-11-25" || !got.Capabilities.Tools.ListChanged || !got.SameSession ||
		strings.Join(got.Before, ",") != "live.echo" || strings.Join(got.After, ",") != "live.echo,live.extra" ||
		got.Result.IsError || len(got.Result.Content) != 1 || got.Result.Content[0].Text != `{"result":"extra"}` {
		t.Errorf("TypeScript client saw %+v", got)
	}
}

// TestSwapTellsOnlyCallersWhoseListChanged swaps out a tool only writers
// see: writers are told, in both eras; readers are not, until a later
// swap changes their list too.
func TestSwapTellsOnlyCallersWhoseListChanged(t *testing.T) {
	la := newLiveApp(t)
	h, err := mcpexpose.NewHandler(la.snap(t, "echo", "admin"), swappable(&mcpexpose.HandlerOptions{Tokens: tokens}))
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	type session struct {
		name string
		l    *listener
	}
	var writers, readers []session
	for _, version := range []string{"", "2025-11-25"} {
		writers = append(writers, session{"writer " + version, listen(t, url, "writer", version)})
		readers = append(readers, session{"reader " + version, listen(t, url, "reader", version)})
	}
	for _, s := range append(writers, readers...) {
		if _, err := s.l.cs.ListTools(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}

	// The writers' list loses live.admin; the readers' stays live.echo.
	if err := h.Swap(la.snap(t, "echo")); err != nil {
		t.Fatal(err)
	}
	for _, s := range writers {
		s.l.await(t, s.name)
	}
	// Everyone's list gains live.extra.
	if err := h.Swap(la.snap(t, "echo", "extra")); err != nil {
		t.Fatal(err)
	}
	for _, s := range writers {
		s.l.await(t, s.name)
	}
	for _, s := range readers {
		s.l.await(t, s.name)
		// A notification from the first swap would have come first, on
		// the same stream.
		if n := s.l.count.Load(); n != 1 {
			t.Errorf("%s was told %d times, want once: the first swap did not change its list", s.name, n)
		}
	}
	for _, s := range writers {
		if n := s.l.count.Load(); n != 2 {
			t.Errorf("%s was told %d times, want 2", s.name, n)
		}
	}
}

// TestRoundSpansSwap begins a round (a confirmation) on one snapshot and
// answers it on the next: it completes when the tool is the same, and is
// refused when the name now means another definition.
func TestRoundSpansSwap(t *testing.T) {
	la := newLiveApp(t)
	h, err := mcpexpose.NewHandler(la.snap(t, "echo", "purge"), swappable(nil))
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	args := map[string]any{"id": "r1"}

	state := stateOf(t, rawCall(t, url, "", "live.purge", args, nil))
	if err := h.Swap(la.snap(t, "echo", "purge", "extra")); err != nil {
		t.Fatal(err)
	}
	done := rawCall(t, url, "", "live.purge", args, map[string]any{"requestState": state, "inputResponses": yes})
	if res, _ := done["result"].(map[string]any); res == nil || !strings.Contains(fmt.Sprint(res["content"]), "purged r1") || la.purged.Load() != 1 {
		t.Fatalf("unchanged tool: the round after the swap = %v (purged %d)", done, la.purged.Load())
	}

	state = stateOf(t, rawCall(t, url, "", "live.purge", args, nil))
	if err := h.Swap(la.snap(t, "echo", "purge2", "extra")); err != nil {
		t.Fatal(err)
	}
	refused := rawCall(t, url, "", "live.purge", args, map[string]any{"requestState": state, "inputResponses": yes})
	e, _ := refused["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32602) || e["message"] != "the tool changed since this request began; call it again" {
		t.Fatalf("changed tool: the round after the swap = %v, want -32602 naming the change", refused)
	}
	if la.purged.Load() != 1 {
		t.Fatal("a round begun on another definition ran")
	}
	// Called again, the new definition asks its own question.
	state = stateOf(t, rawCall(t, url, "", "live.purge", args, nil))
	done = rawCall(t, url, "", "live.purge", args, map[string]any{"requestState": state, "inputResponses": yes})
	if res, _ := done["result"].(map[string]any); res == nil || !strings.Contains(fmt.Sprint(res["content"]), "purged (v2) r1") {
		t.Fatalf("called again: %v", done)
	}
}

// TestCallsInFlightFinishOnTheirSnapshot holds a call while a swap removes
// its tool: new calls do not find it; the one in flight finishes on the
// snapshot it started with, in both eras.
func TestCallsInFlightFinishOnTheirSnapshot(t *testing.T) {
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			la := newLiveApp(t)
			h, err := mcpexpose.NewHandler(la.snap(t, "echo", "hold"), swappable(nil))
			if err != nil {
				t.Fatal(err)
			}
			url := httptestServer(t, h)
			cs := connect(t, url, "", version, nil)
			type answer struct {
				res *mcp.CallToolResult
				err error
			}
			held := make(chan answer, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), callParams("live.hold", map[string]any{}))
				held <- answer{res, err}
			}()
			select {
			case <-la.started:
			case <-time.After(10 * time.Second):
				t.Fatal("live.hold never started")
			}
			if err := h.Swap(la.snap(t, "echo")); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(t.Context(), callParams("live.hold", map[string]any{})); err == nil || !strings.Contains(err.Error(), `unknown tool "live.hold"`) {
				t.Fatalf("a call after the swap = %v, want unknown tool", err)
			}
			close(la.release)
			a := <-held
			if a.err != nil || a.res.IsError || textOf(t, a.res) != `{"result":"held"}` {
				t.Fatalf("the call in flight = %+v, %v", a.res, a.err)
			}
			res, err := cs.CallTool(t.Context(), callParams("live.echo", map[string]any{"text": "hi"}))
			if err != nil || textOf(t, res) != `{"result":"echo hi"}` {
				t.Fatalf("echo after = %+v, %v", res, err)
			}
		})
	}
}

// TestSwapUnderLoad swaps back and forth while clients of both eras call a
// tool every snapshot has (run with -race).
func TestSwapUnderLoad(t *testing.T) {
	la := newLiveApp(t)
	a, b := la.snap(t, "echo"), la.snap(t, "echo", "extra", "admin")
	h, err := mcpexpose.NewHandler(a, swappable(nil))
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for _, version := range []string{"", "2025-11-25", "", "2025-11-25"} {
		cs := connect(t, url, "", version, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 30 {
				res, err := cs.CallTool(context.Background(), callParams("live.echo", map[string]any{"text": "x"}))
				if err != nil || res.IsError {
					errs <- fmt.Errorf("call %d (%q): %+v, %v", i, version, res, err)
					return
				}
				if _, err := cs.ListTools(context.Background(), nil); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for i := range 40 {
		next := a
		if i%2 == 0 {
			next = b
		}
		if err := h.Swap(next); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSwapRefusals(t *testing.T) {
	la := newLiveApp(t)
	first := la.snap(t, "echo")
	renamed := agnara.New("other", nil)
	renamedExp := mcpexpose.New(renamed)
	renamedExp.Tool(renamed.Capability(func(ctx context.Context) (string, error) { return "x", nil },
		&agnara.CapabilityOptions{Name: "x", Description: "Another application's tool."}), nil)
	other, err := renamedExp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(first, swappable(nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Swap(nil); err == nil {
		t.Error("Swap(nil) succeeded")
	}
	if err := h.Swap(other); err == nil || !strings.Contains(err.Error(), `application "other"`) {
		t.Errorf("a snapshot of an application of another name: %v", err)
	}
	if h.Snapshot() != first {
		t.Error("a refused swap replaced the snapshot")
	}
	cs := connect(t, httptestServer(t, h), "", "", nil)
	if res, err := cs.ListTools(t.Context(), nil); err != nil || toolNames(res.Tools) != "live.echo" {
		t.Errorf("after refused swaps: %v, %v", res, err)
	}

	fixed, err := mcpexpose.NewHandler(first, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixed.Swap(la.snap(t, "echo", "extra")); !errors.Is(err, mcpexpose.ErrNotSwappable) {
		t.Errorf("Swap without Swappable = %v, want ErrNotSwappable", err)
	}
	cs = connect(t, httptestServer(t, fixed), "", "2025-11-25", nil)
	if tools := cs.InitializeResult().Capabilities.Tools; tools == nil || tools.ListChanged {
		t.Errorf("a handler that cannot swap advertises %+v", tools)
	}
	// Its surface is what it was: no subscriptions/listen.
	params := map[string]any{"notifications": map[string]any{"toolsListChanged": true}, "_meta": mcptest.Meta(nil)}
	_, body, msg := mcptest.Do(t, mcptest.Request(t, httptestServer(t, fixed), "subscriptions/listen", params, ""))
	if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != float64(-32601) {
		t.Errorf("subscriptions/listen on a fixed handler = %s, want -32601", body)
	}
}

// TestLiveServer swaps the snapshot of a server on in-memory transports.
func TestLiveServer(t *testing.T) {
	la := newLiveApp(t)
	live, err := mcpexpose.NewLive(la.snap(t, "echo"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := live.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	changed := make(chan struct{}, 4)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	}).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	// A 2026-07-28 client hears of changes on the listen stream it opens
	// after connecting, in the background: a change before the server
	// hears the listen is not told (the client lists again when it
	// listens). Swap once it is heard.
	for deadline := time.Now().Add(10 * time.Second); mcpexpose.Watched(live) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the client's listen stream was never heard")
		}
	}
	next := la.snap(t, "echo", "extra")
	if err := live.Swap(next); err != nil || live.Snapshot() != next {
		t.Fatalf("Swap = %v", err)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	res, err := cs.CallTool(t.Context(), callParams("live.extra", map[string]any{}))
	if err != nil || textOf(t, res) != `{"result":"extra"}` {
		t.Fatalf("live.extra = %+v, %v", res, err)
	}
}
