package mcpexpose_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTokensNeverReachTheLog runs accepted, refused and mapper-refused
// tokens through a server logging at debug level, and checks that the log
// has the refusals' reasons but never a token.
func TestTokensNeverReachTheLog(t *testing.T) {
	f := newFixture(t)
	var logs logSink
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{
		Identity: mapper,
		Logger:   slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}})
	list := map[string]any{"_meta": mcptest.Meta(nil)}
	for _, token := range []string{"writer", "refused", "forged-token-value-123"} {
		mcptest.Do(t, mcptest.Request(t, srv.URL+"/mcp", "tools/list", list, token))
	}
	got := logs.String()
	for _, token := range []string{"Bearer", "forged-token-value-123"} {
		if strings.Contains(got, token) {
			t.Errorf("the log contains %q:\n%s", token, got)
		}
	}
	for _, want := range []string{`"msg":"bearer token refused"`, `"msg":"identity mapper refused a caller"`, "mallory is suspended"} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %s:\n%s", want, got)
		}
	}
}

// TestRefusedTokenStormLogIsBounded sends 100 refused tokens over HTTP, one
// after another and at once, and counts the "bearer token refused" records:
// at most mcpexpose.RefusalLogBurst per interval, each with its reason.
func TestRefusedTokenStormLogIsBounded(t *testing.T) {
	const n = 100
	f := newFixture(t)
	var logs logSink
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	}})
	list := map[string]any{"_meta": mcptest.Meta(nil)}
	start := time.Now()
	send := func() {
		resp, _, _ := mcptest.Do(t, mcptest.Request(t, srv.URL+"/mcp", "tools/list", list, "forged"))
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("status %d, want 401", resp.StatusCode)
		}
	}
	for range n {
		send()
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(send)
	}
	wg.Wait()
	// Each window lets RefusalLogBurst records through, plus one summary of
	// the window before it; the test takes far less than one interval, but
	// the bound holds however long it takes.
	windows := 1 + int(time.Since(start)/mcpexpose.RefusalLogInterval)
	var refused, summaries int
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		switch {
		case strings.Contains(line, `"msg":"bearer token refused"`):
			refused++
			if !strings.Contains(line, `"reason":"invalid token"`) {
				t.Errorf("a record without its reason: %s", line)
			}
		case strings.Contains(line, `"msg":"more bearer tokens refused than logged"`):
			summaries++
		}
	}
	if refused == 0 || refused > windows*mcpexpose.RefusalLogBurst || summaries > windows {
		t.Errorf("%d refused tokens in %d interval(s): %d records and %d summaries, want 1 to %d records and at most %d summaries",
			2*n, windows, refused, summaries, windows*mcpexpose.RefusalLogBurst, windows)
	}
}

// TestHostCheckOnLoopback sends a request whose Host header names another
// host to a server listening on loopback: DNS rebinding protection answers
// 403 and nothing runs.
func TestHostCheckOnLoopback(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	params := map[string]any{"name": "fx.echo", "arguments": map[string]any{"text": "x"}, "_meta": mcptest.Meta(nil)}
	req := mcptest.Request(t, srv.URL+"/mcp", "tools/call", params, "")
	req.Host = "evil.example.com"
	resp, _, _ := mcptest.Do(t, req)
	if resp.StatusCode != http.StatusForbidden || f.calls.Load() != 0 {
		t.Errorf("status %d, calls %d; want 403 and no call", resp.StatusCode, f.calls.Load())
	}
	req = mcptest.Request(t, srv.URL+"/mcp", "tools/call", params, "")
	if resp, _, _ := mcptest.Do(t, req); resp.StatusCode != http.StatusOK || f.calls.Load() != 1 {
		t.Errorf("loopback Host: status %d, calls %d", resp.StatusCode, f.calls.Load())
	}
}

// TestHostCheckComesFirst: a request on a loopback listener naming
// another host (a DNS-rebound page) is refused as the SDK refuses it,
// before its token is verified or its identity mapped, on every method.
func TestHostCheckComesFirst(t *testing.T) {
	f := newFixture(t)
	var verified, mapped atomic.Int64
	srv := serve(t, f, &mcpexpose.HandlerOptions{
		Tokens: func(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
			verified.Add(1)
			return tokens(ctx, token, r)
		},
		Server: &mcpexpose.ServerOptions{Identity: func(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
			mapped.Add(1)
			return mcpexpose.SubjectPrincipal(ctx, id)
		}},
	})
	params := map[string]any{"name": "fx.echo", "arguments": map[string]any{"text": "x"}, "_meta": mcptest.Meta(nil)}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		req := mcptest.Request(t, srv.URL+"/mcp", "tools/call", params, "writer")
		req.Method = method
		req.Host = "evil.example.com"
		resp, body, _ := mcptest.Do(t, req)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `invalid Host header "evil.example.com"`) {
			t.Errorf("%s as evil.example.com: %d %q, want 403 as the SDK words it", method, resp.StatusCode, body)
		}
	}
	if verified.Load() != 0 || mapped.Load() != 0 || f.calls.Load() != 0 {
		t.Errorf("rebound requests: %d tokens verified, %d identities mapped, %d calls; want none", verified.Load(), mapped.Load(), f.calls.Load())
	}
	req := mcptest.Request(t, srv.URL+"/mcp", "tools/call", params, "writer")
	if resp, _, _ := mcptest.Do(t, req); resp.StatusCode != http.StatusOK || verified.Load() != 1 || f.calls.Load() != 1 {
		t.Errorf("loopback Host: status %d, %d verified, %d calls", resp.StatusCode, verified.Load(), f.calls.Load())
	}
}

// TestDefaultBodyLimit checks the 1 MiB default: a body just under it is
// read, one just over it is 413.
func TestDefaultBodyLimit(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	body := func(n int) map[string]any {
		return map[string]any{"name": "fx.echo", "arguments": map[string]any{"text": strings.Repeat("a", n)}, "_meta": mcptest.Meta(nil)}
	}
	const overhead = 400 // the rest of the request around the text
	resp, _, msg := mcptest.Do(t, mcptest.Request(t, srv.URL+"/mcp", "tools/call", body(mcpexpose.DefaultMaxBodyBytes-overhead), ""))
	if resp.StatusCode != http.StatusOK || msg["result"] == nil {
		t.Errorf("under the limit: status %d, %v", resp.StatusCode, msg)
	}
	resp, _, _ = mcptest.Do(t, mcptest.Request(t, srv.URL+"/mcp", "tools/call", body(mcpexpose.DefaultMaxBodyBytes), ""))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("over the limit: status %d, want 413", resp.StatusCode)
	}
}

// TestSessionBoundToItsUser opens a handshake-era session with one token
// and tries to use it with another: the SDK refuses it.
func TestSessionBoundToItsUser(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens})
	var sessionID string
	hc := &http.Client{Transport: sessionSpy{base: bearer{token: "writer", base: http.DefaultTransport}, id: &sessionID}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", HTTPClient: hc, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if sessionID == "" {
		t.Fatal("no session id seen")
	}
	req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sessionID)
	req.Header.Set("Authorization", "Bearer reader") // another user
	resp, body, _ := mcptest.Do(t, req)
	if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusNotFound {
		t.Errorf("another user's request on the session: status %d, body %s; want it refused", resp.StatusCode, body)
	}
}

// sessionSpy records the Mcp-Session-Id the server assigns.
type sessionSpy struct {
	base http.RoundTripper
	id   *string
}

func (s sessionSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.base.RoundTrip(r)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		*s.id = resp.Header.Get("Mcp-Session-Id")
	}
	return resp, err
}

// logSink is a concurrency-safe log buffer.
type logSink struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
