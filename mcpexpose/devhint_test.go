package mcpexpose_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scopedSnap compiles the tools "open" (no scope), and, when scoped,
// "read" (a:read), "write" (a:write) and "both" (a:read and a:write),
// with the withdrawn name "gone" (a:write); without write, the same but
// "write".
func scopedSnap(t testing.TB, scoped, write bool) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("dev", nil)
	exp := mcpexpose.New(app)
	tool := func(name string, scopes ...string) {
		exp.Tool(app.Capability(func() (string, error) { return name + " ran", nil },
			&agnara.CapabilityOptions{Name: name, Description: "A tool.", Scopes: scopes}), &mcpexpose.ToolOptions{Name: name})
	}
	tool("open")
	if scoped {
		tool("read", "a:read")
		if write {
			tool("write", "a:write")
		}
		tool("both", "a:read", "a:write")
		exp.Withdrawn("gone", execution.Fail(execution.Unavailable, "gone for good", nil), &mcpexpose.WithdrawnOptions{Scopes: []string{"a:write"}})
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// logRecords are the records a JSON slog handler wrote, decoded.
func logRecords(t testing.TB, buf *mcptest.Buffer) []map[string]any {
	t.Helper()
	var recs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(buf.String()))
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return recs
}

const unreachableMsg = "tools declare scopes no caller can hold"

// unreachable returns the records of the unreachable-tools warning.
func unreachable(recs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if msg, _ := r["msg"].(string); strings.HasPrefix(msg, unreachableMsg) {
			out = append(out, r)
		}
	}
	return out
}

// TestUnreachableToolsWarning: a handler on which no caller can hold the
// scopes of some tools (no token verifier: every caller is anonymous, or
// the development principal) warns once, with how many there are, the
// scopes they need and the fix; a handler whose callers can hold them does
// not.
func TestUnreachableToolsWarning(t *testing.T) {
	t.Parallel()
	reader := policy.NewPrincipal("developer", []string{"a:read"})
	writer := policy.NewPrincipal("developer", []string{"a:read", "a:write"})
	for _, tc := range []struct {
		name   string
		scoped bool
		opts   mcpexpose.HandlerOptions
		want   map[string]any // the record's attributes; nil: no record
		fix    []string       // in its message
	}{
		{"anonymous", true, mcpexpose.HandlerOptions{},
			map[string]any{"tools": 3.0, "of": 4.0, "scopes": []any{"a:read", "a:write"}}, []string{"HandlerOptions.Tokens", "Server.DevelopmentPrincipal", "every caller is anonymous"}},
		{"development principal without a:write", true, mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &reader}},
			map[string]any{"tools": 2.0, "of": 4.0, "scopes": []any{"a:write"}}, []string{"HandlerOptions.Tokens", "every caller acts as Server.DevelopmentPrincipal, which lacks them; give it these scopes"}},
		{"development principal with every scope", true, mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &writer}}, nil, nil},
		{"tokens", true, mcpexpose.HandlerOptions{Tokens: tokens}, nil, nil},
		{"tokens or anonymous", true, mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true}, nil, nil},
		{"no scoped tool", false, mcpexpose.HandlerOptions{}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf mcptest.Buffer
			so := mcpexpose.ServerOptions{}
			if tc.opts.Server != nil {
				so = *tc.opts.Server
			}
			so.Logger = slog.New(slog.NewJSONHandler(&buf, nil))
			tc.opts.Server = &so
			h, err := mcpexpose.NewHandler(scopedSnap(t, tc.scoped, true), &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			// Requests do not repeat it: it is said once, when the handler
			// is built.
			srv := httptest.NewServer(h)
			defer srv.Close()
			for range 2 {
				mcptest.Do(t, mcptest.Request(t, srv.URL, "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, ""))
				mcptest.Do(t, mcptest.Request(t, srv.URL, "tools/call", map[string]any{"_meta": mcptest.Meta(nil), "name": "write", "arguments": map[string]any{}}, ""))
			}
			got := unreachable(logRecords(t, &buf))
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("warned %v, want no warning", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("%d warnings %v, want one", len(got), got)
			}
			r := got[0]
			attrs := map[string]any{"tools": r["tools"], "of": r["of"], "scopes": r["scopes"]}
			if diff := cmp.Diff(tc.want, attrs); diff != "" || r["level"] != "WARN" {
				t.Errorf("level %v, attributes (-want +got):\n%s", r["level"], diff)
			}
			for _, fix := range tc.fix {
				if msg := r["msg"].(string); !strings.Contains(msg, fix) {
					t.Errorf("the warning %q does not say %q", msg, fix)
				}
			}
		})
	}
}

// hint is the development-mode answer to a call of the tool name, which
// needs scopes.
func hint(name, scopes string) string {
	return `tool "` + name + `" is hidden from the development principal "developer": it requires the scopes ` + scopes +
		`; add them to ServerOptions.DevelopmentPrincipal (a hint of development mode: without it this call answers unknown tool)`
}

// callErr calls name and returns the JSON-RPC error the server answered.
func callErr(t *testing.T, cs *mcp.ClientSession, name string) *jsonrpc.Error {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) {
		t.Fatalf("call %s = %+v, %v; want a JSON-RPC error", name, res, err)
	}
	return rpc
}

// TestDevelopmentHiddenTool: in development mode a call of a tool the
// development principal may not see says which scopes it requires, in an
// error of unknown tool's code, at both eras, whether the edge or the SDK
// answers; a tool that does not exist is still unknown.
func TestDevelopmentHiddenTool(t *testing.T) {
	t.Parallel()
	dev := policy.NewPrincipal("developer", []string{"a:read"})
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		for _, sdk := range []bool{false, true} {
			path := "edge"
			if sdk {
				path = "sdk"
			}
			t.Run(era+"/"+path, func(t *testing.T) {
				t.Parallel()
				h, err := mcpexpose.NewHandler(scopedSnap(t, true, true), &mcpexpose.HandlerOptions{
					DisableFastPath: sdk,
					Server:          &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev, Logger: slog.New(slog.DiscardHandler)},
				})
				if err != nil {
					t.Fatal(err)
				}
				cs := connect(t, httptestServer(t, h), "", era, nil)
				for _, tc := range []struct{ name, want string }{
					{"write", hint("write", `["a:write"]`)},
					{"both", hint("both", `["a:read" "a:write"]`)},
					{"gone", hint("gone", `["a:write"]`)},
					{"missing", `unknown tool "missing"`},
				} {
					if e := callErr(t, cs, tc.name); e.Code != jsonrpc.CodeInvalidParams || e.Message != tc.want {
						t.Errorf("call %s: %d %q, want %d %q", tc.name, e.Code, e.Message, jsonrpc.CodeInvalidParams, tc.want)
					}
				}
				if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{}}); err != nil || res.IsError {
					t.Errorf("call read, which the development principal may: %+v, %v", res, err)
				}
				if n := h.FastPathRequests(); sdk != (n == 0) {
					t.Errorf("the edge answered %d requests behind a handler with DisableFastPath %v", n, sdk)
				}
			})
		}
	}
}

// TestProductionHiddenToolUnchanged: without a development principal, a
// call of a tool the caller may not see is answered byte for byte as the
// call of a tool that does not exist, at both eras and on both paths; and
// with one, a caller with a token (here through the SDK's own bearer
// middleware) learns nothing more either.
func TestProductionHiddenToolUnchanged(t *testing.T) {
	t.Parallel()
	modern := wireRequest{name: "call/write", header: baseHeader("tools/call", "write"), body: callBody("3", "write", "{}", diffMeta)}
	legacy := wireRequest{name: "call/write", header: sessionHeader("2025-11-25"), body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write","arguments":{}}}`}
	for _, sdk := range []bool{false, true} {
		opts := mcpexpose.HandlerOptions{DisableFastPath: sdk}
		hidden, err := mcpexpose.NewHandler(scopedSnap(t, true, true), &opts)
		if err != nil {
			t.Fatal(err)
		}
		absent, err := mcpexpose.NewHandler(scopedSnap(t, true, false), &opts)
		if err != nil {
			t.Fatal(err)
		}
		hiddenURL, absentURL := httptestServer(t, hidden)+"/mcp", httptestServer(t, absent)+"/mcp"
		client := &http.Client{}
		got, want := send(t, client, hiddenURL, "", modern), send(t, client, absentURL, "", modern)
		if !got.equal(want) || !strings.Contains(got.raw, `"message":"unknown tool \"write\""`) {
			t.Errorf("2026-07-28 (sdk %v): hidden\n%d %v %s\nabsent\n%d %v %s", sdk, got.status, got.header, got.raw, want.status, want.header, want.raw)
		}
		got = openSession(t, client, hiddenURL, "", "2025-11-25").send(t, legacy)
		want = openSession(t, client, absentURL, "", "2025-11-25").send(t, legacy)
		if !got.equal(want) || !strings.Contains(got.raw, `"message":"unknown tool \"write\""`) {
			t.Errorf("2025-11-25 (sdk %v): hidden\n%d %v %s\nabsent\n%d %v %s", sdk, got.status, got.header, got.raw, want.status, want.header, want.raw)
		}
	}

	// A server with a development principal, behind a transport that
	// verifies tokens itself: a caller with a token is not the development
	// principal.
	dev := policy.NewPrincipal("developer", []string{"a:read"})
	s, err := mcpexpose.NewServer(scopedSnap(t, true, true), &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return tokens(context.Background(), "reader", nil) // any token: rita, without scopes
	}
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	h = auth.RequireBearerToken(verify, nil)(h)
	cs := connect(t, httptestServer(t, h), "anything", "2026-07-28", nil)
	if e := callErr(t, cs, "write"); e.Code != jsonrpc.CodeInvalidParams || e.Message != `unknown tool "write"` {
		t.Errorf("call with a token on a development server: %d %q, want unknown tool", e.Code, e.Message)
	}
}

// developer is the development principal of the differential tests'
// "development" configuration: it holds no scope of the diff application.
var developer = policy.NewPrincipal("developer", []string{"other:scope"})
