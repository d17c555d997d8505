package mcpexpose_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// Fault injection: what a caller is told, what is cleaned up and what is
// left running when a handler, a dependency, the identity mapper, the
// replay store or the client itself misbehaves.

// noLeaks checks, once everything else the test registered has been torn
// down (cleanups run last-registered first, so call it first), that the
// test left no goroutine behind. Goroutines that were already running when
// the test started (other tests' leftovers, the test binary's own) are not
// the test's. Keep-alive connections are not ignored: the test servers'
// Close and CloseIdleConnections end them, so a connection still held by
// an unfinished request is reported as a leak.
func noLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		http.DefaultClient.CloseIdleConnections()
		goleak.VerifyNone(t, ignore)
	})
}

// logBuffer collects JSON log records; safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// find returns the first record with message msg whose string attributes
// include attrs, or nil.
func (l *logBuffer) find(t *testing.T, msg string, attrs map[string]string) map[string]any {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(l.String()))
	sc.Buffer(nil, 1<<20)
next:
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		if r["msg"] != msg {
			continue
		}
		for k, v := range attrs {
			if s, _ := r[k].(string); s != v {
				continue next
			}
		}
		return r
	}
	return nil
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Conn is the fault app's per-invocation dependency; constructions and
// cleanups are counted.
type Conn struct{}

// Broken's per-invocation provider always fails, after Conn was built.
type Broken struct{}

// Shared's singleton provider always fails.
type Shared struct{}

// Hanging's per-invocation provider waits for its context to end.
type Hanging struct{}

// Fragile's per-invocation provider panics.
type Fragile struct{}

// faultApp counts what happened inside the application.
type faultApp struct {
	built, cleaned atomic.Int32 // Conn
	entered        atomic.Int32 // handler bodies entered
	running        atomic.Int32 // handler bodies not yet returned
	deadline       atomic.Int32 // handlers that saw context.DeadlineExceeded
	canceled       atomic.Int32 // handlers that saw context.Canceled
	sharedTries    atomic.Int32 // singleton constructions attempted
	hangEntered    atomic.Int32 // Hanging constructions started
	hangDone       atomic.Int32 // Hanging constructions that saw ctx end
	logs           *logBuffer
	snap           *mcpexpose.Snapshot
}

const stuckTimeout = 30 * time.Millisecond

// newFaultApp builds the application "fault":
//   - boom: panics (a secret in the panic value);
//   - fragile: its *Fragile constructor panics, after *Conn was built;
//   - stuck: Timeout 30ms, waits for its context to end;
//   - block: no timeout, waits for its context to end;
//   - broken: its *Broken constructor fails, after *Conn was built;
//   - shared: its singleton *Shared constructor fails;
//   - hang: Timeout 30ms, its *Hanging constructor waits for its context;
//   - ping: answers "pong".
//
// Every handler but ping and shared takes a per-invocation *Conn.
func newFaultApp(t *testing.T) *faultApp {
	t.Helper()
	f := &faultApp{logs: &logBuffer{}}
	deps := di.NewRegistry()
	di.ProvidePerInvocation(deps, func() (*Conn, func()) {
		f.built.Add(1)
		return &Conn{}, func() { f.cleaned.Add(1) }
	})
	di.ProvidePerInvocation(deps, func() (*Broken, error) {
		return nil, errors.New("broken: dial tcp 10.0.0.9:5432: connection refused")
	})
	di.Provide(deps, func() (*Shared, error) {
		f.sharedTries.Add(1)
		return nil, errors.New("shared: cannot open /etc/secret.db")
	})
	di.ProvidePerInvocation(deps, func(ctx context.Context) (*Hanging, error) {
		f.hangEntered.Add(1)
		<-ctx.Done()
		f.hangDone.Add(1)
		return nil, ctx.Err()
	})
	di.ProvidePerInvocation(deps, func() *Fragile {
		panic("fragile: secret-detail")
	})
	app := agnara.New("fault", &agnara.Options{Dependencies: deps, Logger: f.logs.logger()})
	enter := func() func() {
		f.entered.Add(1)
		f.running.Add(1)
		return func() { f.running.Add(-1) }
	}
	wait := func(ctx context.Context) error {
		<-ctx.Done()
		switch {
		case errors.Is(ctx.Err(), context.DeadlineExceeded):
			f.deadline.Add(1)
		case errors.Is(ctx.Err(), context.Canceled):
			f.canceled.Add(1)
		}
		return ctx.Err()
	}
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Conn) (string, error) {
		defer enter()()
		panic("boom: secret-detail")
	}, &agnara.CapabilityOptions{Name: "boom", Description: "Panics."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Conn, _ *Fragile) (string, error) {
		defer enter()()
		return "unreachable", nil
	}, &agnara.CapabilityOptions{Name: "fragile", Description: "Its dependency panics."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Conn) (string, error) {
		defer enter()()
		return "", wait(ctx)
	}, &agnara.CapabilityOptions{Name: "stuck", Description: "Waits past its deadline.", Timeout: stuckTimeout}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Conn) (string, error) {
		defer enter()()
		return "", wait(ctx)
	}, &agnara.CapabilityOptions{Name: "block", Description: "Waits until cancelled."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Conn, _ *Broken) (string, error) {
		defer enter()()
		return "unreachable", nil
	}, &agnara.CapabilityOptions{Name: "broken", Description: "Its dependency fails."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Shared) (string, error) {
		defer enter()()
		return "unreachable", nil
	}, &agnara.CapabilityOptions{Name: "shared", Description: "Its singleton fails."}), nil)
	exp.Tool(app.Capability(func(ctx context.Context, _ *Conn, _ *Hanging) (string, error) {
		defer enter()()
		return "unreachable", nil
	}, &agnara.CapabilityOptions{Name: "hang", Description: "Its dependency hangs.", Timeout: stuckTimeout}), nil)
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) {
		defer enter()()
		return "pong", nil
	}, &agnara.CapabilityOptions{Name: "ping", Description: "Pong."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	f.snap = snap
	t.Cleanup(func() { app.Close() })
	return f
}

// serveFault serves the fault app on a loopback test server and returns
// the endpoint URL.
func serveFault(t *testing.T, f *faultApp, opts *mcpexpose.HandlerOptions) string {
	t.Helper()
	if opts == nil {
		opts = &mcpexpose.HandlerOptions{}
	}
	h, err := mcpexpose.NewHandler(f.snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	return httptestServer(t, h) + "/mcp"
}

// The exact texts of the canonical failures the faults must produce.
const internalFailureText = `{"code":"internal_failure","message":"internal failure"}`

func timeoutText(d time.Duration) string {
	return fmt.Sprintf(`{"code":"timeout","details":{"timeout_ms":%d},"message":"the capability did not finish within %s"}`, d.Milliseconds(), d)
}

// wantFailure asserts a call answered exactly the failure text, as a tool
// error without structured content.
func wantFailure(t *testing.T, res *mcp.CallToolResult, err error, text string) {
	t.Helper()
	if err != nil {
		t.Fatalf("call error = %v, want the result %s", err, text)
	}
	if !res.IsError || res.StructuredContent != nil || textOf(t, res) != text {
		t.Errorf("result = isError %v, structured %v, text %s; want isError, no structured content, text %s",
			res.IsError, res.StructuredContent, textOf(t, res), text)
	}
}

// rawOutcome is what the sender of a raw HTTP request ends with.
type rawOutcome struct {
	status int
	body   string
	err    error
}

// sendRaw sends req on its own goroutine; the outcome arrives once the
// response has been read to its end, or the request failed.
func sendRaw(req *http.Request) <-chan rawOutcome {
	done := make(chan rawOutcome, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- rawOutcome{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- rawOutcome{status: resp.StatusCode, body: string(body), err: err}
	}()
	return done
}

// receive waits, boundedly, for a value.
func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatal("no answer within 20s")
		panic("unreachable")
	}
}

// rawToolCall builds a raw 2026-07-28 tools/call.
func rawToolCall(t *testing.T, url, token, tool string, args map[string]any) *http.Request {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	return mcptest.Request(t, url, "tools/call", map[string]any{"name": tool, "arguments": args, "_meta": mcptest.Meta(nil)}, token)
}

// TestFaultHandlerPanic: a panic in the handler, or in a dependency
// constructor, is answered with the canonical internal failure, never the
// panic value; the per-invocation dependency built before it is cleaned
// up; the panic and its stack are logged.
func TestFaultHandlerPanic(t *testing.T) {
	noLeaks(t)
	f := newFaultApp(t)
	url := serveFault(t, f, nil)
	tests := []struct {
		tool       string
		handlerRan bool
	}{
		{"fault.boom", true},
		{"fault.fragile", false},
	}
	for _, era := range eras[:2] {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.tool, func(t *testing.T) {
				cs := connect(t, url, "", era.version, nil)
				built, cleaned, entered := f.built.Load(), f.cleaned.Load(), f.entered.Load()
				res, err := cs.CallTool(context.Background(), callParams(tt.tool, map[string]any{}))
				wantFailure(t, res, err, internalFailureText)
				if f.built.Load() != built+1 || f.cleaned.Load() != cleaned+1 {
					t.Errorf("Conn built %d, cleaned %d times; want once each", f.built.Load()-built, f.cleaned.Load()-cleaned)
				}
				if ran := f.entered.Load() != entered; ran != tt.handlerRan {
					t.Errorf("handler ran: %v, want %v", ran, tt.handlerRan)
				}
				if f.running.Load() != 0 {
					t.Error("a handler is still running")
				}
				rec := f.logs.find(t, "capability panicked", map[string]string{"level": "ERROR", "capability": tt.tool})
				if rec == nil {
					t.Fatalf("no panic record for %s in %s", tt.tool, f.logs.String())
				}
				if p, _ := rec["panic"].(string); !strings.Contains(p, "secret-detail") {
					t.Errorf("logged panic = %v, want the panic value", rec["panic"])
				}
				if s, _ := rec["stack"].(string); !strings.Contains(s, "goroutine") {
					t.Errorf("logged stack = %q, want a stack trace", s)
				}
			})
		}
	}
}

// TestFaultDeadline: a handler that waits for its context past its
// deadline (the capability's own, the server's, or the shorter of the two)
// is answered with the timeout failure; its context ended with
// DeadlineExceeded and its dependency was cleaned up.
func TestFaultDeadline(t *testing.T) {
	noLeaks(t)
	f := newFaultApp(t)
	tests := []struct {
		name          string
		tool          string
		serverTimeout time.Duration
		want          time.Duration
	}{
		{"capability timeout", "fault.stuck", 0, stuckTimeout},
		{"server timeout", "fault.block", 40 * time.Millisecond, 40 * time.Millisecond},
		{"the shorter of the two", "fault.stuck", time.Hour, stuckTimeout},
	}
	for _, tt := range tests {
		url := serveFault(t, f, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Timeout: tt.serverTimeout}})
		for _, era := range eras[:2] {
			t.Run(tt.name+"/"+era.name, func(t *testing.T) {
				cs := connect(t, url, "", era.version, nil)
				built, cleaned, deadline := f.built.Load(), f.cleaned.Load(), f.deadline.Load()
				res, err := cs.CallTool(context.Background(), callParams(tt.tool, map[string]any{}))
				wantFailure(t, res, err, timeoutText(tt.want))
				if f.deadline.Load() != deadline+1 {
					t.Error("the handler's context did not end with DeadlineExceeded")
				}
				if f.built.Load() != built+1 || f.cleaned.Load() != cleaned+1 {
					t.Errorf("Conn built %d, cleaned %d times; want once each", f.built.Load()-built, f.cleaned.Load()-cleaned)
				}
				if f.running.Load() != 0 {
					t.Error("a handler is still running")
				}
			})
		}
	}
}

// TestFaultClientDisconnect: a client that goes away mid-call — a
// 2026-07-28 HTTP request dropped, or an SDK client cancelling its call in
// either era — cancels the handler's context; the handler returns and its
// dependency is cleaned up; nothing is left running.
func TestFaultClientDisconnect(t *testing.T) {
	noLeaks(t)
	f := newFaultApp(t)
	url := serveFault(t, f, nil)
	// Each call starts fault.block, waits until the handler runs, then
	// cancels the caller's context and returns the error the caller sees.
	sdkCall := func(version string) func(*testing.T, context.Context, context.CancelFunc) error {
		return func(t *testing.T, ctx context.Context, cancel context.CancelFunc) error {
			cs := connect(t, url, "", version, nil)
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, callParams("fault.block", map[string]any{}))
				done <- err
			}()
			waitFor(t, func() bool { return f.running.Load() == 1 })
			cancel()
			return receive(t, done)
		}
	}
	tests := []struct {
		name string
		call func(*testing.T, context.Context, context.CancelFunc) error
	}{
		{"2026-07-28 HTTP request dropped", func(t *testing.T, ctx context.Context, cancel context.CancelFunc) error {
			done := sendRaw(rawToolCall(t, url, "", "fault.block", nil).WithContext(ctx))
			waitFor(t, func() bool { return f.running.Load() == 1 })
			cancel()
			out := receive(t, done)
			if out.err == nil {
				t.Errorf("the dropped request was answered: %d %s", out.status, out.body)
			}
			return out.err
		}},
		{"2026-07-28 SDK client cancels", sdkCall("")},
		{"2025-11-25 SDK client cancels", sdkCall("2025-11-25")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			built, cleaned, canceled := f.built.Load(), f.cleaned.Load(), f.canceled.Load()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := tt.call(t, ctx, cancel); !errors.Is(err, context.Canceled) {
				t.Errorf("caller's error = %v, want context.Canceled", err)
			}
			waitFor(t, func() bool { return f.canceled.Load() == canceled+1 })
			waitFor(t, func() bool { return f.running.Load() == 0 && f.cleaned.Load() == cleaned+1 })
			if f.built.Load() != built+1 {
				t.Errorf("Conn built %d times, want once", f.built.Load()-built)
			}
			if f.deadline.Load() != 0 {
				t.Error("a handler saw a deadline instead of the cancellation")
			}
		})
	}
}

// TestFaultProvider: a dependency constructor that fails is an internal
// failure (what was built before it is cleaned up, a failed singleton is
// tried again next time); one that hangs until its context ends is the
// capability's timeout. The handler never runs.
func TestFaultProvider(t *testing.T) {
	noLeaks(t)
	f := newFaultApp(t)
	url := serveFault(t, f, nil)
	tests := []struct {
		tool      string
		want      string
		connBuilt int32
		check     func(t *testing.T)
	}{
		{"fault.broken", internalFailureText, 1, func(t *testing.T) {
			if f.logs.find(t, "capability failed", map[string]string{"level": "ERROR", "capability": "fault.broken", "stage": "dependency"}) == nil {
				t.Errorf("the failure is not logged: %s", f.logs.String())
			}
		}},
		{"fault.shared", internalFailureText, 0, nil},
		{"fault.hang", timeoutText(stuckTimeout), 1, func(t *testing.T) {
			if f.hangEntered.Load() != f.hangDone.Load() {
				t.Error("the hanging constructor has not returned")
			}
		}},
	}
	for _, era := range eras[:2] {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.tool, func(t *testing.T) {
				cs := connect(t, url, "", era.version, nil)
				built, cleaned, entered, tries := f.built.Load(), f.cleaned.Load(), f.entered.Load(), f.sharedTries.Load()
				res, err := cs.CallTool(context.Background(), callParams(tt.tool, map[string]any{}))
				wantFailure(t, res, err, tt.want)
				if f.entered.Load() != entered {
					t.Error("the handler ran")
				}
				if f.built.Load() != built+tt.connBuilt || f.cleaned.Load() != cleaned+tt.connBuilt {
					t.Errorf("Conn built %d, cleaned %d times; want %d each", f.built.Load()-built, f.cleaned.Load()-cleaned, tt.connBuilt)
				}
				if tt.tool == "fault.shared" && f.sharedTries.Load() != tries+1 {
					t.Errorf("singleton constructor tried %d times, want once per call (a failure is not cached)", f.sharedTries.Load()-tries)
				}
				if tt.check != nil {
					tt.check(t)
				}
			})
		}
	}
	if !strings.Contains(f.logs.String(), "10.0.0.9") || !strings.Contains(f.logs.String(), "/etc/secret.db") {
		t.Errorf("the causes are not logged: %s", f.logs.String())
	}
}

// TestFaultSlowMapper: an identity mapper that takes 200ms (or until its
// context ends) neither leaks nor wedges a call: a client that drops its
// request leaves nothing running, and with ServerOptions.Timeout a call
// still gets its exact answer.
func TestFaultSlowMapper(t *testing.T) {
	noLeaks(t)
	f := newFaultApp(t)
	var inMapper, mapped, mapperCanceled atomic.Int32
	slow := func(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
		inMapper.Add(1)
		defer inMapper.Add(-1)
		mapped.Add(1)
		timer := time.NewTimer(200 * time.Millisecond)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			mapperCanceled.Add(1)
			return policy.Principal{}, ctx.Err()
		case <-timer.C:
		}
		return mcpexpose.SubjectPrincipal(ctx, id)
	}
	const serverTimeout = 50 * time.Millisecond
	url := serveFault(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: slow, Timeout: serverTimeout}})

	t.Run("client drops the request", func(t *testing.T) {
		entered, canceledBefore := f.entered.Load(), mapperCanceled.Load()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := sendRaw(rawToolCall(t, url, "writer", "fault.ping", nil).WithContext(ctx))
		waitFor(t, func() bool { return inMapper.Load() == 1 })
		cancel()
		if out := receive(t, done); !errors.Is(out.err, context.Canceled) {
			t.Errorf("caller's outcome = %d %s %v, want context.Canceled", out.status, out.body, out.err)
		}
		// The step-up check's mapper sees the cancellation (and, since its
		// error only skips the step-up check, the server's mapper may see
		// it again).
		waitFor(t, func() bool { return mapperCanceled.Load() > canceledBefore && inMapper.Load() == 0 })
		if f.entered.Load() != entered {
			t.Error("the handler ran for a dropped request")
		}
	})
	for _, era := range eras[:2] {
		t.Run(era.name+"/SDK client cancels", func(t *testing.T) {
			cs := connect(t, url, "writer", era.version, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			before := mapped.Load()
			go func() {
				_, err := cs.CallTool(ctx, callParams("fault.ping", map[string]any{}))
				done <- err
			}()
			waitFor(t, func() bool { return mapped.Load() > before })
			cancel()
			if err := receive(t, done); !errors.Is(err, context.Canceled) {
				t.Errorf("caller's error = %v, want context.Canceled", err)
			}
			// Whatever the server still does for the abandoned call ends
			// within the mapper's bound.
			waitFor(t, func() bool { return inMapper.Load() == 0 && f.running.Load() == 0 })
		})
		t.Run(era.name+"/server timeout", func(t *testing.T) {
			cs := connect(t, url, "writer", era.version, nil)
			res, err := cs.CallTool(context.Background(), callParams("fault.ping", map[string]any{}))
			if err != nil || res.IsError || textOf(t, res) != `{"result":"pong"}` {
				t.Errorf("ping = %+v, %v; want {\"result\":\"pong\"}", res, err)
			}
			built, cleaned := f.built.Load(), f.cleaned.Load()
			res, err = cs.CallTool(context.Background(), callParams("fault.block", map[string]any{}))
			wantFailure(t, res, err, timeoutText(serverTimeout))
			if f.built.Load() != built+1 || f.cleaned.Load() != cleaned+1 {
				t.Errorf("Conn built %d, cleaned %d times; want once each", f.built.Load()-built, f.cleaned.Load()-cleaned)
			}
		})
	}
}

// faultyReplay is a ReplayStore that can fail (or block until its context
// ends) instead of answering.
type faultyReplay struct {
	failing, blocking atomic.Bool
	uses, blocked     atomic.Int32
	inner             *requeststate.MemoryReplayStore
}

func (s *faultyReplay) Use(ctx context.Context, id string, sealed, expires time.Time) (bool, error) {
	s.uses.Add(1)
	if s.blocking.Load() {
		s.blocked.Add(1)
		defer s.blocked.Add(-1)
		<-ctx.Done()
		return false, ctx.Err()
	}
	if s.failing.Load() {
		return false, errors.New("replay store: dial tcp 10.0.0.7:6379: connection refused")
	}
	return s.inner.Use(ctx, id, sealed, expires)
}

// TestFaultReplayStore: when the replay store cannot tell whether a
// requestState was used, a retry carrying a valid state is refused with
// -32603 (fail closed), the capability does not run, and the cause is
// logged, not sent. The state is not burnt: once the store answers again
// the same retry succeeds, once.
func TestFaultReplayStore(t *testing.T) {
	noLeaks(t)
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	store := &faultyReplay{inner: requeststate.NewMemoryReplayStore()}
	logs := &logBuffer{}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{StateReplay: store, Logger: logs.logger()}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	args := map[string]any{"id": "r1"}
	const unavailable = "requestState cannot be verified now; retry later"

	t.Run("2026-07-28 retry", func(t *testing.T) {
		state := stateOf(t, rawCall(t, url, "", "ops.purge", args, nil))
		retry := map[string]any{"requestState": state, "inputResponses": yes}
		store.failing.Store(true)
		msg := rawCall(t, url, "", "ops.purge", args, retry)
		want := map[string]any{"code": float64(jsonrpc.CodeInternalError), "message": unavailable}
		if e, _ := msg["error"].(map[string]any); fmt.Sprint(e) != fmt.Sprint(want) || msg["result"] != nil {
			t.Errorf("response = %v, want exactly the error %v", msg, want)
		}
		if purged.Load() != 0 {
			t.Fatal("the capability ran although single use could not be established")
		}
		if b, _ := json.Marshal(msg); strings.Contains(string(b), "10.0.0.7") {
			t.Errorf("the store's error reached the caller: %s", b)
		}
		if rec := logs.find(t, "request state store unavailable", map[string]string{"level": "ERROR"}); rec == nil || !strings.Contains(fmt.Sprint(rec["error"]), "10.0.0.7:6379: connection refused") {
			t.Errorf("the store failure is not logged with its cause: %s", logs.String())
		}

		store.failing.Store(false)
		if msg := rawCall(t, url, "", "ops.purge", args, retry); fmt.Sprint(msg["result"]) == "<nil>" || purged.Load() != 1 {
			t.Fatalf("retry once the store answers = %v (purged %d), want the purge", msg, purged.Load())
		}
		msg = rawCall(t, url, "", "ops.purge", args, retry)
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != float64(jsonrpc.CodeInvalidParams) || e["message"] != "invalid requestState" {
			t.Errorf("replay = %v, want -32602 invalid requestState", msg)
		}
		if purged.Load() != 1 {
			t.Error("the replayed state ran the capability again")
		}
	})

	t.Run("2025-11-25 rounds", func(t *testing.T) {
		before := purged.Load()
		store.failing.Store(true)
		defer store.failing.Store(false)
		var asked atomic.Int32
		cs := connect(t, url, "", "2025-11-25", elicit(func(*mcp.ElicitRequest) *mcp.ElicitResult {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}
		}))
		_, err := cs.CallTool(context.Background(), callParams("ops.purge", args))
		assertRPCError(t, err, jsonrpc.CodeInternalError, unavailable)
		if purged.Load() != before || asked.Load() != 1 {
			t.Errorf("purged %d times after %d questions; want 0 after 1", purged.Load()-before, asked.Load())
		}
	})

	t.Run("2026-07-28 store hangs, client drops the request", func(t *testing.T) {
		before := purged.Load()
		state := stateOf(t, rawCall(t, url, "", "ops.purge", args, nil))
		store.blocking.Store(true)
		defer store.blocking.Store(false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req := mcptest.Request(t, url, "tools/call", map[string]any{"name": "ops.purge", "arguments": args,
			"requestState": state, "inputResponses": yes,
			"_meta": mcptest.Meta(map[string]any{"elicitation": map[string]any{}})}, "")
		done := sendRaw(req.WithContext(ctx))
		waitFor(t, func() bool { return store.blocked.Load() == 1 })
		cancel()
		if out := receive(t, done); !errors.Is(out.err, context.Canceled) {
			t.Errorf("caller's outcome = %d %s %v, want context.Canceled", out.status, out.body, out.err)
		}
		waitFor(t, func() bool { return store.blocked.Load() == 0 })
		if purged.Load() != before {
			t.Error("the capability ran")
		}
	})
}
