package mcpexpose_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The identity mapper runs once per request that needs the caller — over
// HTTP with step-up too, where the check and the server both need it — and
// never for a request that does not.
func TestIdentityMapperRunsOncePerRequest(t *testing.T) {
	var calls atomic.Int32
	counting := func(ctx context.Context, id mcpexpose.Identity) (policy.Principal, error) {
		calls.Add(1)
		return mcpexpose.SubjectPrincipal(ctx, id)
	}
	f := newFixture(t)
	h, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: counting}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	meta := mcptest.Meta(nil)
	for _, tc := range []struct {
		name   string
		method string
		params map[string]any
		want   int32
	}{
		{"tools/call of a tool the caller holds", "tools/call", map[string]any{"name": "ledger.append", "arguments": map[string]any{"text": "x"}, "_meta": meta}, 1},
		{"tools/list", "tools/list", map[string]any{"_meta": meta}, 1},
		{"tools/call of an unknown tool", "tools/call", map[string]any{"name": "ledger.nope", "arguments": map[string]any{}, "_meta": meta}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := calls.Load()
			_, _, msg := mcptest.Do(t, mcptest.Request(t, url, tc.method, tc.params, "writer"))
			if msg == nil {
				t.Fatal("no JSON-RPC response")
			}
			if got := calls.Load() - before; got != tc.want {
				t.Errorf("mapper called %d times, want %d", got, tc.want)
			}
		})
	}
}

// The edge reads the body as the SDK does: an escaped or re-cased key or
// method means what it means to the SDK, so none slips past a check.
func TestEdgeReadsKeysAsTheSDKDoes(t *testing.T) {
	f := newFixture(t)
	h, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	post := func(token, body string) (int, string) {
		req := mcptest.Request(t, url, "tools/call", map[string]any{"name": "ledger.append"}, token)
		req.Body = nopCloser{strings.NewReader(body)}
		req.ContentLength = int64(len(body))
		resp, raw, _ := mcptest.Do(t, req)
		return resp.StatusCode, string(raw)
	}
	for _, tc := range []struct {
		name, token, body string
		status            int
		want              string
	}{
		{"a re-cased Method key is no method: the edge and the SDK both read tools/list", "reader",
			`{"jsonrpc":"2.0","id":1,"method":"tools/list","Method":"tools/call","params":{"name":"ledger.append",` + meta + `}}`,
			http.StatusBadRequest, "does not match body value 'tools/list'"},
		{"escaped method still meets the step-up check", "reader",
			`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"ledger.append","arguments":{"text":"x"},` + meta + `}}`,
			http.StatusForbidden, "the token lacks a scope this tool requires"},
		{"escaped tool name still meets the step-up check", "reader",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ledger.\u0061ppend","arguments":{"text":"x"},` + meta + `}}`,
			http.StatusForbidden, "the token lacks a scope this tool requires"},
		{"trailing garbage is not JSON", "writer",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}} x`,
			http.StatusBadRequest, "not valid JSON"},
		{"a malformed value inside is not JSON", "writer",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ledger.append","arguments":{"text":tru}}}`,
			http.StatusBadRequest, "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := post(tc.token, tc.body)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("HTTP %d %s\nwant %d with %q", status, body, tc.status, tc.want)
			}
		})
	}
}

type nopCloser struct{ *strings.Reader }

func (nopCloser) Close() error { return nil }

type docIn struct {
	ID string `json:"id"`
}

// Over HTTP with step-up, the step-up check, the server's routing and the
// plan's scope guard need the same answer: the scope predicate runs once
// per tools/call.
func TestScopesAreEvaluatedOncePerCall(t *testing.T) {
	var evaluated atomic.Int32
	implies := func(held, required string) bool {
		evaluated.Add(1)
		return held == "docs" && strings.HasPrefix(required, "docs:")
	}
	app := agnara.New("docs", &agnara.Options{Scopes: policy.Scopes{Implies: implies}})
	read := app.Capability(func(ctx context.Context, in docIn) (string, error) { return in.ID, nil },
		&agnara.CapabilityOptions{Name: "read", Description: "Read a document.", Scopes: []string{"docs:read"}})
	exp := mcpexpose.New(app)
	exp.Tool(read, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: token, Scopes: []string{"docs"}, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: verify})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	before := evaluated.Load()
	_, body, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call",
		map[string]any{"name": "docs.read", "arguments": map[string]any{"id": "d1"}, "_meta": mcptest.Meta(nil)}, "alice"))
	res, _ := msg["result"].(map[string]any)
	if res == nil || res["isError"] == true {
		t.Fatalf("call = %s", body)
	}
	if n := evaluated.Load() - before; n != 1 {
		t.Errorf("the scope predicate ran %d times for one tools/call, want 1", n)
	}
}

// A tools/call's task parameter is ignored on every transport: the call
// runs as an ordinary call over HTTP at 2026-07-28 and through NewServer
// (the SDK's in-memory transport, as stdio), whatever its spelling.
func TestTaskParameterIsIgnoredOnEveryTransport(t *testing.T) {
	f := newFixture(t)
	h, err := mcpexpose.NewHandler(f.snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	for _, key := range []string{"task", "Task"} {
		params := map[string]any{"name": "fx.echo", "arguments": map[string]any{"text": "x"}, key: map[string]any{"ttl": 60000}, "_meta": mcptest.Meta(nil)}
		_, body, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", params, ""))
		if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] == true {
			t.Errorf("HTTP call with %q: %s", key, body)
		}
	}

	// The same call, raw, over the SDK's in-memory transport to NewServer.
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mustServer(mcpexpose.NewServer(f.snap, nil)).Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	conn, err := ct.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	send := func(id int64, method, params string) *jsonrpc.Response {
		t.Helper()
		req := &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}
		if id != 0 {
			req.ID, _ = jsonrpc.MakeID(float64(id))
		}
		if err := conn.Write(t.Context(), req); err != nil {
			t.Fatal(err)
		}
		if id == 0 {
			return nil
		}
		msg, err := conn.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			t.Fatalf("read %T, want a response", msg)
		}
		return resp
	}
	send(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`)
	send(0, "notifications/initialized", `{}`)
	resp := send(2, "tools/call", `{"name":"fx.echo","arguments":{"text":"x"},"task":{"ttl":60000}}`)
	if resp.Error != nil || strings.Contains(string(resp.Result), `"isError":true`) {
		t.Fatalf("in-memory call with a task: %v %s", resp.Error, resp.Result)
	}
	if !strings.Contains(string(resp.Result), `\"text\":\"x\"`) {
		t.Errorf("in-memory call with a task did not run: %s", resp.Result)
	}
}
