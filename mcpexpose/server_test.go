//lint:file-ignore SA1019 logging, sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var eras = []struct{ name, version, want string }{
	{"2026-07-28", "", "2026-07-28"},
	{"2025-11-25", "2025-11-25", "2025-11-25"},
	{"2025-06-18", "2025-06-18", "2025-06-18"},
}

func TestBothErasOnOneURL(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, srv.URL+"/mcp", "", era.version, nil)
			if got := cs.InitializeResult().ProtocolVersion; got != era.want {
				t.Fatalf("negotiated %s, want %s", got, era.want)
			}
			caps := cs.InitializeResult().Capabilities
			if caps.Tools == nil || caps.Tools.ListChanged || caps.Logging != nil || caps.Prompts != nil || caps.Resources != nil {
				t.Errorf("capabilities = %+v, want tools only, without listChanged", caps)
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx.echo", Arguments: map[string]any{"text": "héllo"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || textOf(t, res) != `{"result":{"count":6,"text":"héllo"}}` {
				t.Errorf("result = %+v %q", res, textOf(t, res))
			}
			sc, _ := json.Marshal(res.StructuredContent)
			if string(sc) != `{"result":{"count":6,"text":"héllo"}}` {
				t.Errorf("structuredContent = %s", sc)
			}
		})
	}
}

func TestListDependsOnThePrincipal(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}})
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			writer := connect(t, srv.URL+"/mcp", "writer", era.version, nil)
			reader := connect(t, srv.URL+"/mcp", "reader", era.version, nil)
			ctx := context.Background()
			wl, err := writer.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			rl, err := reader.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := toolNames(wl.Tools); got != "fx.echo,ledger.append,fx.fail,fx.slow,fx.render" {
				t.Errorf("writer sees %s", got)
			}
			if got := toolNames(rl.Tools); got != "fx.echo,fx.fail,fx.slow,fx.render" {
				t.Errorf("reader sees %s", got)
			}
			if wl.NextCursor != "" || wl.TTLMs != 0 || wl.CacheScope != "private" {
				t.Errorf("list = cursor %q ttl %d scope %q, want none, 0, private", wl.NextCursor, wl.TTLMs, wl.CacheScope)
			}

			// The hidden tool, called by name, is refused (with tokens: the
			// 403 step-up challenge) before its dependency is built.
			built := f.built.Load()
			_, err = reader.CallTool(ctx, &mcp.CallToolParams{Name: "no.such", Arguments: map[string]any{}})
			assertRPCError(t, err, jsonrpc.CodeInvalidParams, `unknown tool "no.such"`)
			// The SDK client closes its session on a 403.
			_, err = reader.CallTool(ctx, &mcp.CallToolParams{Name: "ledger.append", Arguments: map[string]any{"text": "x"}})
			if err == nil || !strings.Contains(err.Error(), "Forbidden") {
				t.Errorf("hidden tool call error = %v, want the HTTP 403 challenge", err)
			}
			if f.built.Load() != built {
				t.Error("the hidden tool's dependency was built")
			}

			res, err := writer.CallTool(ctx, &mcp.CallToolParams{Name: "ledger.append", Arguments: map[string]any{"text": "x"}})
			if err != nil || res.IsError || textOf(t, res) != `{"result":1}` {
				t.Fatalf("writer call = %+v, %v", res, err)
			}
			if f.built.Load() != built+1 || f.cleaned.Load() != f.built.Load() {
				t.Errorf("built %d cleaned %d", f.built.Load(), f.cleaned.Load())
			}
		})
	}
}

func TestHiddenToolWithoutTokens(t *testing.T) {
	f := newFixture(t)
	cs := inMemory(t, f.snap)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ledger.append", Arguments: map[string]any{"text": "x"}})
	assertRPCError(t, err, jsonrpc.CodeInvalidParams, `unknown tool "ledger.append"`)
	if f.built.Load() != 0 || f.calls.Load() != 0 {
		t.Error("the hidden tool's dependency was built or its handler ran")
	}
}

func TestForbiddenResult(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{ForbiddenResult: true}})
	cs := connect(t, srv.URL+"/mcp", "reader", "", nil)
	l, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(toolNames(l.Tools), "ledger.append") {
		t.Error("the list shows a tool the caller lacks scopes for")
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ledger.append", Arguments: map[string]any{"text": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"forbidden","details":{"required_scopes":["ledger:write"]},"message":"the caller lacks a scope this capability requires"}`
	if !res.IsError || textOf(t, res) != want {
		t.Errorf("result = %q, want %s", textOf(t, res), want)
	}
	if f.built.Load() != 0 {
		t.Error("dependency built for a forbidden call")
	}
}

func TestRefusedIdentity(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}})
	cs := connect(t, srv.URL+"/mcp", "refused", "", nil)
	_, err := cs.ListTools(context.Background(), nil)
	assertRPCError(t, err, jsonrpc.CodeInvalidRequest, "the caller's identity was not accepted")
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx.echo", Arguments: map[string]any{"text": "x"}})
	assertRPCError(t, err, jsonrpc.CodeInvalidRequest, "the caller's identity was not accepted")
	if f.calls.Load() != 0 {
		t.Error("a handler ran for a refused identity")
	}
	// No token at all: 401 from the bearer middleware.
	resp, err := http.Post(srv.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", resp.StatusCode)
	}
}

func TestMapperSeesOnlyCredentialFreeFacts(t *testing.T) {
	f := newFixture(t)
	var mu sync.Mutex
	var seen []mcpexpose.Identity
	record := func(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
		mu.Lock()
		seen = append(seen, id)
		mu.Unlock()
		return mcpexpose.SubjectPrincipal(ctx, id)
	}
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: record}})
	cs := connect(t, srv.URL+"/mcp", "writer", "", nil)
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("mapper never called")
	}
	id := seen[len(seen)-1]
	if id.Subject != "wendy" || id.Issuer != "https://issuer.test" || id.ClientID != "cli" || len(id.Scopes) != 1 || id.Expiry.IsZero() {
		t.Errorf("identity = %+v", id)
	}
	// Identity has no field that could carry the token or other claims.
	b, _ := json.Marshal(id)
	if strings.Contains(string(b), "secret_claim") || strings.Contains(string(b), "writer") {
		t.Errorf("identity carries more than the documented facts: %s", b)
	}
}

func TestCursorIsRejected(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	for _, era := range eras[:2] {
		cs := connect(t, srv.URL+"/mcp", "", era.version, nil)
		_, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: "eyJpIjoxfQ=="})
		assertRPCError(t, err, jsonrpc.CodeInvalidParams, "does not paginate")
	}
}

func TestFailuresAndContent(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	cs := connect(t, srv.URL+"/mcp", "", "", nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx.fail", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || textOf(t, res) != `{"code":"not_found","details":{"hint":"try echo"},"message":"nothing here","reason":"fx_empty"}` || res.StructuredContent != nil {
		t.Errorf("failure = %+v %q", res, textOf(t, res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx.echo", Arguments: map[string]any{"text": "", "extra": 1}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"code":"invalid_input","details":{"violations":[{"message":"unknown field","path":"/extra"},{"message":"must not be empty","path":"/text"}]},"message":"the arguments do not match the input schema (2 violations)"}`
	if !res.IsError || textOf(t, res) != want {
		t.Errorf("invalid input = %q", textOf(t, res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx.render", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 2 || res.StructuredContent != nil {
		t.Fatalf("content result = %+v", res)
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || string(img.Data) != "png" || img.MIMEType != "image/png" {
		t.Errorf("image block = %#v", res.Content[1])
	}
}

func TestProgressAndLogs(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{ForwardLogs: true}})
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			var mu sync.Mutex
			var progress []float64
			var logs []string
			cs := connect(t, srv.URL+"/mcp", "", era.version, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, r.Params.Progress)
				},
				LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
					mu.Lock()
					defer mu.Unlock()
					b, _ := json.Marshal(r.Params.Data)
					logs = append(logs, string(r.Params.Level)+" "+string(b))
				},
			})
			if cs.InitializeResult().Capabilities.Logging == nil {
				t.Error("logging capability not advertised with ForwardLogs")
			}
			ctx := context.Background()
			params := &mcp.CallToolParams{Name: "fx.slow", Arguments: map[string]any{"steps": 3}}
			params.SetProgressToken("tok-1")
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				t.Fatalf("call = %+v, %v", res, err)
			}
			// Notifications are handled by the client asynchronously.
			waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) == 3 })
			mu.Lock()
			if progress[0] != 1 || progress[2] != 3 {
				t.Errorf("progress = %v, want 1,2,3", progress)
			}
			if len(logs) != 0 {
				t.Errorf("logs arrived before the client asked for them: %v", logs)
			}
			mu.Unlock()
			if era.version != "" {
				// The handshake era asks once per session.
				if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
				if _, err := cs.CallTool(ctx, params); err != nil {
					t.Fatal(err)
				}
				waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(logs) > 0 })
				mu.Lock()
				if len(logs) != 1 || !strings.Contains(logs[0], `"slow ran"`) || !strings.HasPrefix(logs[0], "info ") {
					t.Errorf("logs = %v, want the handler's info record", logs)
				}
				mu.Unlock()
			}
		})
	}
}

func TestCancellationReachesTheHandler(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			cs := connect(t, srv.URL+"/mcp", "", era.version, nil)
			built, cleaned := f.built.Load(), f.cleaned.Load()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx.slow", Arguments: map[string]any{"steps": 10}})
				done <- err
			}()
			waitFor(t, func() bool { return f.built.Load() == built+1 })
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("call error = %v, want context.Canceled", err)
			}
			waitFor(t, func() bool { return f.cleaned.Load() == cleaned+1 })
		})
	}
}

func TestServerTimeout(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Timeout: 20 * time.Millisecond}})
	cs := connect(t, srv.URL+"/mcp", "", "", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fx.slow", Arguments: map[string]any{"steps": 10}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasPrefix(textOf(t, res), `{"code":"timeout"`) {
		t.Errorf("result = %q, want a timeout failure", textOf(t, res))
	}
	waitFor(t, func() bool { return f.cleaned.Load() == f.built.Load() })
}

func TestDiscoveryServer(t *testing.T) {
	f := newFixture(t)
	srv := mustServer(mcpexpose.NewDiscoveryServer(f.snap, nil))
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	l, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(l.Tools); got != "fx.echo,fx.fail,fx.slow,fx.render" {
		t.Errorf("anonymous discovery sees %s", got)
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx.echo", Arguments: map[string]any{"text": "x"}})
	assertRPCError(t, err, jsonrpc.CodeMethodNotFound, "")
	if f.calls.Load() != 0 {
		t.Error("the discovery server invoked a tool")
	}
}

func TestMethodsNotOffered(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, nil)
	cs := connect(t, srv.URL+"/mcp", "", "2025-11-25", nil)
	_, err := cs.ListPrompts(context.Background(), nil)
	assertRPCError(t, err, jsonrpc.CodeMethodNotFound, "")
	err = cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "info"})
	assertRPCError(t, err, jsonrpc.CodeMethodNotFound, "")
}

func TestHTTPHygiene(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{AllowedOrigins: []string{"https://app.example.com"}, Limits: &mcpexpose.Limits{MaxBodyBytes: 4096}})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx.echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	tests := []struct {
		name       string
		origin     string
		body       string
		wantStatus int
		wantBody   string
	}{
		{"foreign origin", "https://evil.example", call, 403, `"origin not allowed"`},
		{"allowed origin", "https://app.example.com", call, 200, `{\"result\":{\"count\":1,\"text\":\"x\"}}`},
		{"same origin", srv.URL, call, 200, `\"count\":1`},
		{"malformed JSON", "", `{"jsonrpc":"2.0","id":1,`, 400, `"code":-32700`},
		{"oversize body", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 5000) + `"}}`, 413, `"request body too large"`},
		{"task parameter is ignored", "", strings.Replace(call, `"arguments"`, `"task":{"ttl":60000},"arguments"`, 1), 200, `\"count\":1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := f.calls.Load()
			req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "fx.echo")
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantStatus || !bytes.Contains(body, []byte(tt.wantBody)) {
				t.Errorf("status %d body %s; want %d containing %s", resp.StatusCode, body, tt.wantStatus, tt.wantBody)
			}
			if tt.wantStatus != 200 {
				if f.calls.Load() != calls {
					t.Error("the handler ran for a refused request")
				}
			}
		})
	}
}

func TestHandlerOptionsAreChecked(t *testing.T) {
	f := newFixture(t)
	for _, opts := range []*mcpexpose.HandlerOptions{
		{Limits: &mcpexpose.Limits{MaxBodyBytes: -1}},
		{Limits: &mcpexpose.Limits{SessionTimeout: -1}},
		{Limits: &mcpexpose.Limits{ReplayBytes: -1}},
		{AllowedOrigins: []string{"app.example.com"}},
		{AllowedOrigins: []string{"https://app.example.com/path"}},
	} {
		if _, err := mcpexpose.NewHandler(f.snap, opts); err == nil {
			t.Errorf("NewHandler(%+v) succeeded", opts)
		}
	}
}

func assertRPCError(t *testing.T, err error, code int64, msg string) {
	t.Helper()
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("error = %v (%T), want JSON-RPC error %d", err, err, code)
	}
	if rpcErr.Code != code || !strings.Contains(rpcErr.Message, msg) {
		t.Errorf("error = %d %q, want %d containing %q", rpcErr.Code, rpcErr.Message, code, msg)
	}
}

// waitFor polls cond for up to 20 s: a bound for a loaded machine, not
// a duration the test waits.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestDevelopmentPrincipal(t *testing.T) {
	f := newFixture(t)
	var logs bytes.Buffer
	dev := policy.NewPrincipal("developer", []string{"ledger:write"})
	srv := serve(t, f, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{
		DevelopmentPrincipal: &dev,
		Logger:               slog.New(slog.NewTextHandler(&logs, nil)),
	}})
	if !strings.Contains(logs.String(), "DEVELOPMENT MODE") || !strings.Contains(logs.String(), "developer") {
		t.Errorf("no loud warning: %q", logs.String())
	}
	cs := connect(t, srv.URL+"/mcp", "", "", nil)
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ledger.append", Arguments: map[string]any{"text": "x"}})
	if err != nil || res.IsError {
		t.Fatalf("call as the development principal = %+v, %v", res, err)
	}
}

func TestBearerEdgeCases(t *testing.T) {
	f := newFixture(t)
	noExpiry := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token == "forever" {
			return &auth.TokenInfo{UserID: "eve", Scopes: []string{"ledger:write"}}, nil
		}
		return tokens(context.Background(), token, nil)
	}
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: noExpiry, AllowAnonymous: true})
	for _, tc := range []struct {
		name, authz string
		status      int
		challenge   string
		body        string
	}{
		{"anonymous allowed", "", 200, "", `"fx.echo"`},
		{"bad token still refused", "Bearer nope", 401, `Bearer error="invalid_token"`, "not valid"},
		{"not a bearer header", "Basic dXNlcjpwYXNz", 400, `Bearer error="invalid_request"`, "Bearer <token>"},
		{"token without expiry", "Bearer forever", 401, `Bearer error="invalid_token"`, "no expiry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := mcptest.Request(t, srv.URL+"/mcp", "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, "")
			if tc.authz != "" {
				req.Header.Set("Authorization", tc.authz)
			}
			resp, body, _ := mcptest.Do(t, req)
			if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge || !strings.Contains(string(body), tc.body) {
				t.Errorf("status %d, challenge %q, body %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
			}
			if tc.status == 200 && strings.Contains(string(body), "ledger.append") {
				t.Error("the anonymous caller sees a scoped tool")
			}
		})
	}
	if _, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{AllowAnonymous: true}); err == nil {
		t.Error("AllowAnonymous without Tokens was accepted")
	}
	if _, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{SessionTimeout: -1}}); err == nil {
		t.Error("a negative SessionTimeout was accepted")
	}
}

func TestSharedStateOptions(t *testing.T) {
	f := newFixture(t)
	for _, ttl := range []time.Duration{-time.Second, requeststate.MaxTTL + time.Second} {
		if _, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{StateTTL: ttl}}); err == nil || !strings.Contains(err.Error(), "StateTTL") {
			t.Errorf("StateTTL %v: %v, want an error naming StateTTL", ttl, err)
		}
	}
	key, err := requeststate.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := requeststate.NewKeyRing(key)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		replay requeststate.ReplayStore
		warn   bool
	}{
		{"shared keys, per-process replay", nil, true},
		{"shared keys, shared replay", requeststate.NewMemoryReplayStore(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			_, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{
				StateKeys: ring, StateReplay: tc.replay, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			}})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(logs.String(), "single use is enforced in this process only"); got != tc.warn {
				t.Errorf("warned = %v, want %v: %q", got, tc.warn, logs.String())
			}
		})
	}
}

// Constructors report bad options as errors; none panics.
func TestConstructorsRefuseBadOptions(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		snap *mcpexpose.Snapshot
		opts mcpexpose.ServerOptions
		want string
	}{
		{"no snapshot", nil, mcpexpose.ServerOptions{}, "no snapshot"},
		{"state TTL too long", f.snap, mcpexpose.ServerOptions{StateTTL: 2 * time.Hour}, "StateTTL"},
		{"negative state TTL", f.snap, mcpexpose.ServerOptions{StateTTL: -time.Second}, "StateTTL"},
		{"negative timeout", f.snap, mcpexpose.ServerOptions{Timeout: -time.Second}, "negative Timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for ctor, err := range map[string]error{
				"NewServer":          second(mcpexpose.NewServer(tc.snap, &tc.opts)),
				"NewDiscoveryServer": second(mcpexpose.NewDiscoveryServer(tc.snap, &tc.opts)),
				"NewHandler":         second(mcpexpose.NewHandler(tc.snap, &mcpexpose.HandlerOptions{Server: &tc.opts})),
				"RunStdio":           mcpexpose.RunStdio(t.Context(), tc.snap, policy.Anonymous(), &tc.opts),
			} {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s: %v, want an error saying %q", ctor, err, tc.want)
				}
			}
		})
	}
}

func second[T any](_ T, err error) error { return err }
