package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OrdersIn has a header parameter of each kind SEP-2243 allows.
type OrdersIn struct {
	Region string `json:"region" mcp:"header=Region"`
	Count  int    `json:"count,omitempty" mcp:"header=Count"`
	Dry    bool   `json:"dry,omitempty" mcp:"header=Dry-Run"`
}

// headerSnap exposes orders (public) and, withSecret, secret: the same
// input, but scope ledger:write, so anonymous callers cannot see it.
func headerSnap(t testing.TB, withSecret bool) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("hdr", nil)
	fn := func(in OrdersIn) ([]execution.Content, error) {
		return []execution.Content{execution.Text{Text: fmt.Sprintf("region=%s count=%d dry=%t", in.Region, in.Count, in.Dry)}}, nil
	}
	orders := app.Capability(fn, &agnara.CapabilityOptions{Name: "orders", Description: "Orders of a region."})
	secret := app.Capability(fn, &agnara.CapabilityOptions{Name: "secret", Description: "Hidden orders.", Scopes: []string{"ledger:write"}})
	exp := mcpexpose.New(app)
	exp.Tool(orders, &mcpexpose.ToolOptions{Name: "orders"})
	if withSecret {
		exp.Tool(secret, &mcpexpose.ToolOptions{Name: "secret"})
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func headerServer(t testing.TB, snap *mcpexpose.Snapshot, opts *mcpexpose.HandlerOptions) string {
	t.Helper()
	h, err := mcpexpose.NewHandler(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	return httptestServer(t, h) + "/"
}

// callRequest is a raw 2026-07-28 tools/call with the given Mcp-Param-*
// headers (name: value; an empty value is sent as no header).
func callRequest(t testing.TB, url, token, tool string, args map[string]any, headers map[string]string) *http.Request {
	t.Helper()
	req := mcptest.Request(t, url, "tools/call", map[string]any{"name": tool, "arguments": args, "_meta": mcptest.Meta(nil)}, token)
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	return req
}

func b64(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

// TestHeaderParamsChecked: raw 2026-07-28 calls of a tool with header
// parameters, as a caller allowed to call it (anonymous; and with a token,
// which goes through the bearer path).
func TestHeaderParamsChecked(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		headers map[string]string
		want    string // the result's text; "" for a -32020 refusal
	}{
		{"correct", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "eu"}, "region=eu count=0 dry=false"},
		{"header name in any case", map[string]any{"region": "eu"}, map[string]string{"mcp-param-region": "eu"}, "region=eu count=0 dry=false"},
		{"missing", map[string]any{"region": "eu"}, nil, ""},
		{"mismatched", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "us"}, ""},
		{"value case matters", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "EU"}, ""},
		{"non-ASCII, base64", map[string]any{"region": "Zürich 東京"}, map[string]string{"Mcp-Param-Region": b64("Zürich 東京")}, "region=Zürich 東京 count=0 dry=false"},
		{"base64 of another value", map[string]any{"region": "Zürich"}, map[string]string{"Mcp-Param-Region": b64("Zurich")}, ""},
		{"leading space, base64", map[string]any{"region": " eu"}, map[string]string{"Mcp-Param-Region": b64(" eu")}, "region= eu count=0 dry=false"},
		{"bad base64 padding", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}, ""},
		{"bad base64 characters", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, ""},
		{"no suffix is literal", map[string]any{"region": "=?base64?SGVsbG8="}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}, "region==?base64?SGVsbG8= count=0 dry=false"},
		{"integer", map[string]any{"region": "eu", "count": 12}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Count": "12"}, "region=eu count=12 dry=false"},
		{"integer mismatched", map[string]any{"region": "eu", "count": 12}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Count": "13"}, ""},
		{"integer missing", map[string]any{"region": "eu", "count": 12}, map[string]string{"Mcp-Param-Region": "eu"}, ""},
		{"boolean", map[string]any{"region": "eu", "dry": true}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "true"}, "region=eu count=0 dry=true"},
		{"boolean spelled otherwise", map[string]any{"region": "eu", "dry": true}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "True"}, ""},
		{"header for an absent argument", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Count": "1"}, ""},
	}
	for _, srv := range []struct {
		name, token string
		opts        *mcpexpose.HandlerOptions
	}{
		{"anonymous", "", nil},
		{"bearer", "writer", &mcpexpose.HandlerOptions{Tokens: tokens}},
	} {
		url := headerServer(t, headerSnap(t, true), srv.opts)
		for _, tt := range tests {
			t.Run(srv.name+"/"+tt.name, func(t *testing.T) {
				tool := "orders"
				if srv.token != "" {
					tool = "secret" // visible to the writer
				}
				resp, body, msg := mcptest.Do(t, callRequest(t, url, srv.token, tool, tt.args, tt.headers))
				if tt.want == "" {
					errObj, _ := msg["error"].(map[string]any)
					if resp.StatusCode != http.StatusBadRequest || errObj == nil || errObj["code"] != float64(mcp.CodeHeaderMismatch) {
						t.Fatalf("got %d %s, want 400 with JSON-RPC error %d", resp.StatusCode, body, mcp.CodeHeaderMismatch)
					}
					if msg["id"] != float64(1) {
						t.Errorf("error id = %v, want the request's 1", msg["id"])
					}
					return
				}
				res, _ := msg["result"].(map[string]any)
				content, _ := res["content"].([]any)
				if resp.StatusCode != http.StatusOK || len(content) != 1 || content[0].(map[string]any)["text"] != tt.want {
					t.Fatalf("got %d %s, want the text %q", resp.StatusCode, body, tt.want)
				}
			})
		}
	}
}

// TestHiddenHeaderToolIsUnknown: for a caller who may not see a tool with
// header parameters, calling it with correct, missing or mismatched headers
// is answered byte for byte as calling the same name on a server where no
// such tool exists: no header check tells the tool apart.
func TestHiddenHeaderToolIsUnknown(t *testing.T) {
	cases := map[string]map[string]string{
		"correct":    {"Mcp-Param-Region": "eu", "Mcp-Param-Count": "3"},
		"missing":    nil,
		"mismatched": {"Mcp-Param-Region": "us", "Mcp-Param-Count": "4"},
		"bad base64": {"Mcp-Param-Region": "=?base64?!!?="},
	}
	args := map[string]any{"region": "eu", "count": 3}
	for _, cfg := range []struct {
		name string
		opts *mcpexpose.HandlerOptions
	}{
		{"no tokens", nil},
		{"tokens, anonymous caller", &mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true}},
	} {
		hidden := headerServer(t, headerSnap(t, true), cfg.opts)
		absent := headerServer(t, headerSnap(t, false), cfg.opts)
		for name, headers := range cases {
			t.Run(cfg.name+"/"+name, func(t *testing.T) {
				gotResp, got, msg := mcptest.Do(t, callRequest(t, hidden, "", "secret", args, headers))
				wantResp, want, _ := mcptest.Do(t, callRequest(t, absent, "", "secret", args, headers))
				if gotResp.StatusCode != wantResp.StatusCode || !bytes.Equal(got, want) {
					t.Fatalf("hidden tool: %d %s\nunknown tool: %d %s", gotResp.StatusCode, got, wantResp.StatusCode, want)
				}
				for _, k := range []string{"Content-Type", "Content-Length", "Www-Authenticate", "Mcp-Session-Id", "Cache-Control"} {
					if g, w := gotResp.Header.Values(k), wantResp.Header.Values(k); strings.Join(g, "\n") != strings.Join(w, "\n") {
						t.Errorf("header %s: hidden %q, unknown %q", k, g, w)
					}
				}
				// And what both say is "unknown tool", not a header complaint.
				errObj, _ := msg["error"].(map[string]any)
				if errObj == nil || errObj["code"] != float64(jsonrpc.CodeInvalidParams) || !strings.Contains(fmt.Sprint(errObj["message"]), "unknown tool") {
					t.Fatalf("hidden tool answered %s, want unknown tool (-32602)", got)
				}
			})
		}
		t.Run(cfg.name+"/visible tool is checked", func(t *testing.T) {
			resp, body, _ := mcptest.Do(t, callRequest(t, hidden, "", "orders", args, cases["mismatched"]))
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("mismatched headers on a visible tool: %d %s, want 400", resp.StatusCode, body)
			}
		})
	}
}

// TestHeaderParamsGoClient: the Go SDK client (v1.8.0) at 2026-07-28
// mirrors x-mcp-header arguments in Mcp-Param-* headers for the tools it
// has listed in the session (it keeps their schemas), and the server
// accepts them, non-ASCII values included. A session that calls without
// listing first sends none, and is refused: the check is real. At
// 2025-11-25 nothing is mirrored or checked.
func TestHeaderParamsGoClient(t *testing.T) {
	url := headerServer(t, headerSnap(t, true), nil)
	ctx := context.Background()
	args := map[string]any{"region": "Zürich", "count": 7, "dry": true}

	cs := connect(t, url, "", "", nil)
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s", v)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil || len(lt.Tools) != 1 {
		t.Fatalf("ListTools: %v %v", lt, err)
	}
	res, err := cs.CallTool(ctx, callParams("orders", args))
	if err != nil {
		t.Fatalf("CallTool after ListTools: %v", err)
	}
	if got := textOf(t, res); got != "region=Zürich count=7 dry=true" {
		t.Fatalf("result %q", got)
	}

	unlisted := connect(t, url, "", "", nil)
	_, err = unlisted.CallTool(ctx, callParams("orders", args))
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeHeaderMismatch {
		t.Fatalf("CallTool without ListTools: %v, want a %d refusal (no headers sent)", err, mcp.CodeHeaderMismatch)
	}

	legacy := connect(t, url, "", "2025-11-25", nil)
	res, err = legacy.CallTool(ctx, callParams("orders", args))
	if err != nil || textOf(t, res) != "region=Zürich count=7 dry=true" {
		t.Fatalf("2025-11-25 CallTool: %v %v", res, err)
	}
}

// TestHeaderParamsListed: the snapshot and tools/list publish x-mcp-header
// as compiled (only the SDK's registration goes without).
func TestHeaderParamsListed(t *testing.T) {
	snap := headerSnap(t, false)
	tool, err := snap.Tool("orders")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(tool.InputSchema)
	for _, want := range []string{`"x-mcp-header":"Region"`, `"x-mcp-header":"Count"`, `"x-mcp-header":"Dry-Run"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("schema %s lacks %s", b, want)
		}
	}
	lt, err := connect(t, headerServer(t, snap, nil), "", "", nil).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ = json.Marshal(lt.Tools[0].InputSchema)
	if !strings.Contains(string(b), `"x-mcp-header":"Region"`) {
		t.Errorf("listed schema %s lacks x-mcp-header", b)
	}
}

// TestHeaderParamsRawSchemaMistakes: a raw schema's x-mcp-header is served
// only where the Handler can check it and the Go SDK client can read it;
// anything else fails Compile.
func TestHeaderParamsRawSchemaMistakes(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"ok", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}`, ""},
		{"nested", `{"type":"object","properties":{"o":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}}`, "top-level properties only"},
		{"a property named so", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, ""},
		{"nested beside a top-level one", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A"},"o":{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R"}}}}}`, "top-level properties only"},
		{"number", `{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}`, "string, integer or boolean"},
		{"not a token", `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"R:1"}}}`, "HTTP token"},
		{"duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":"string","x-mcp-header":"r"}}}`, "already declared"},
		{"nullable elsewhere", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"R"},"b":{"type":["string","null"]}}}`, "Go MCP SDK then ignores"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := agnara.New("raw", nil)
			c := app.Capability(func(json.RawMessage) error { return nil }, &agnara.CapabilityOptions{Name: "raw", Description: "Raw.", InputSchema: json.RawMessage(tt.schema)})
			exp := mcpexpose.New(app)
			exp.Tool(c, nil)
			_, err := exp.Compile()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Compile: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Compile error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestHeaderParamsTypeScriptClient: the TypeScript SDK client (1.32.2)
// speaks only 2025-11-25, where header parameters do not exist: it sends no
// Mcp-Param-* header, the call succeeds, and the schema it lists carries no
// x-mcp-header, so a strict JSON Schema compiler (Ajv strict, as the client
// script runs) accepts it. At 2026-07-28 the same tool lists x-mcp-header.
func TestHeaderParamsTypeScriptClient(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	url := headerServer(t, headerSnap(t, false), nil)
	out, err := exec.Command(node, filepath.Join("..", "conformance", "ts-client.mjs"), url, "orders", `{"region":"Zürich","count":2}`).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	var got struct {
		ProtocolVersion string                     `json:"protocolVersion"`
		InputSchemas    map[string]json.RawMessage `json:"inputSchemas"`
		InputCheck      struct {
			Compiled, Valid bool
			Error           string
		} `json:"inputCheck"`
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.ProtocolVersion != "2025-11-25" || len(got.Result.Content) != 1 || got.Result.Content[0].Text != "region=Zürich count=2 dry=false" {
		t.Fatalf("TypeScript client saw %s", out)
	}
	if !got.InputCheck.Compiled || !got.InputCheck.Valid || strings.Contains(string(got.InputSchemas["orders"]), "x-mcp-header") {
		t.Fatalf("2025-11-25 schema %s: strict compile %+v", got.InputSchemas["orders"], got.InputCheck)
	}
}
