package mcpexpose_test

import (
	"context"
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
	h, err := mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: mcpexpose.ServerOptions{Identity: counting}})
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
		{"escaped task key is a task", "writer",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ledger.append","arguments":{"text":"x"},"t\u0061sk":{},` + meta + `}}`,
			http.StatusOK, "task-augmented tools/call is not supported"},
		{"a re-cased Task key is no task (the SDK ignores it too)", "writer",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ledger.append","arguments":{"text":"x"},"Task":{},` + meta + `}}`,
			http.StatusOK, `"resultType":"complete"`},
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
