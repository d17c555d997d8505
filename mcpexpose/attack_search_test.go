package mcpexpose_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Attacks on Exposure.Search (ADR 83): each test is an attempt to reach,
// through search_tools or call_tool, what the direct call would refuse.

// headerSearchSnap is headerSnap's orders (public) and secret (scope
// ledger:write), both with header parameters, behind a search. ran counts
// the handlers' runs.
func headerSearchSnap(t testing.TB, ran *atomic.Int32) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("hdr", nil)
	fn := func(in OrdersIn) ([]execution.Content, error) {
		ran.Add(1)
		return []execution.Content{execution.Text{Text: fmt.Sprintf("region=%s count=%d dry=%t", in.Region, in.Count, in.Dry)}}, nil
	}
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(fn, &agnara.CapabilityOptions{Name: "orders", Description: "Orders of a region."}), &mcpexpose.ToolOptions{Name: "orders"})
	exp.Tool(app.Capability(fn, &agnara.CapabilityOptions{Name: "secret", Description: "Hidden orders.", Scopes: []string{"ledger:write"}}), &mcpexpose.ToolOptions{Name: "secret"})
	exp.Search(nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// viaCallRequest is a raw 2026-07-28 call_tool of tool with args, with the
// Mcp-Name header mcpName and the given Mcp-Param-* headers.
func viaCallRequest(t testing.TB, url, token, mcpName, tool string, args map[string]any, headers map[string]string) *http.Request {
	t.Helper()
	req := mcptest.Request(t, url, "tools/call", map[string]any{"name": "call_tool", "arguments": map[string]any{"name": tool, "arguments": args}, "_meta": mcptest.Meta(nil)}, token)
	req.Header.Set("Mcp-Name", mcpName)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return req
}

// Header parameters exist so that a proxy routing or policing on
// Mcp-Param-* headers decides on what the server runs (SEP-2243). A tool
// called through call_tool must not escape that check: its headers are
// required and checked as on the direct call, for a caller who may call
// it; a caller who may not still gets unknown tool, as directly. And a
// call_tool whose Mcp-Name names the inner tool is the SDK's Mcp-Name
// mismatch, as for any other name, never a header complaint about the
// inner tool.
func TestAttackCallToolHeaderParams(t *testing.T) {
	var ran atomic.Int32
	for _, cfg := range []struct {
		name string
		opts *mcpexpose.HandlerOptions
	}{
		{"fast path", &mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true}},
		{"sdk route", &mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true, DisableFastPath: true}},
	} {
		url := headerServer(t, headerSearchSnap(t, &ran), cfg.opts)
		eu := map[string]any{"region": "eu"}
		cases := []struct {
			name, token, mcpName, tool string
			headers                    map[string]string
			want                       string // result text; "mismatch" for -32020; "unknown" for unknown tool; "name" for the Mcp-Name mismatch
		}{
			{"no header", "", "call_tool", "orders", nil, "mismatch"},
			{"wrong header", "", "call_tool", "orders", map[string]string{"Mcp-Param-Region": "us"}, "mismatch"},
			{"header for an absent argument", "", "call_tool", "orders", map[string]string{"Mcp-Param-Region": "eu", "Mcp-Param-Count": "2"}, "mismatch"},
			{"right header", "", "call_tool", "orders", map[string]string{"Mcp-Param-Region": "eu"}, "region=eu count=0 dry=false"},
			{"scoped, allowed, no header", "writer", "call_tool", "secret", nil, "mismatch"},
			{"scoped, allowed, right header", "writer", "call_tool", "secret", map[string]string{"Mcp-Param-Region": "eu"}, "region=eu count=0 dry=false"},
			{"hidden, no header", "", "call_tool", "secret", nil, "unknown"},
			{"hidden, wrong header", "", "call_tool", "secret", map[string]string{"Mcp-Param-Region": "us"}, "unknown"},
			{"Mcp-Name of the inner tool, wrong header", "", "orders", "orders", map[string]string{"Mcp-Param-Region": "us"}, "name"},
			{"Mcp-Name of the inner tool, no header", "", "orders", "orders", nil, "name"},
		}
		for _, c := range cases {
			t.Run(cfg.name+"/"+c.name, func(t *testing.T) {
				before := ran.Load()
				resp, body, msg := mcptest.Do(t, viaCallRequest(t, url, c.token, c.mcpName, c.tool, eu, c.headers))
				errObj, _ := msg["error"].(map[string]any)
				switch c.want {
				case "mismatch":
					if resp.StatusCode != http.StatusBadRequest || errObj == nil || errObj["code"] != float64(mcp.CodeHeaderMismatch) || !strings.Contains(fmt.Sprint(errObj["message"]), "Mcp-Param-") {
						t.Errorf("got %d %s, want 400 with a -32020 header-parameter mismatch", resp.StatusCode, body)
					}
				case "unknown":
					if errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "unknown tool") {
						t.Errorf("got %d %s, want unknown tool", resp.StatusCode, body)
					}
				case "name":
					if resp.StatusCode != http.StatusBadRequest || errObj == nil || errObj["code"] != float64(mcp.CodeHeaderMismatch) || strings.Contains(fmt.Sprint(errObj["message"]), "Mcp-Param-") {
						t.Errorf("got %d %s, want the Mcp-Name mismatch", resp.StatusCode, body)
					}
				default:
					res, _ := msg["result"].(map[string]any)
					content, _ := res["content"].([]any)
					if resp.StatusCode != http.StatusOK || len(content) != 1 || content[0].(map[string]any)["text"] != c.want {
						t.Errorf("got %d %s, want the text %q", resp.StatusCode, body, c.want)
					}
					return
				}
				if ran.Load() != before {
					t.Error("a refused call ran the tool")
				}
			})
		}
	}
}

// A step-up refusal (403 insufficient_scope) of a tool called through
// call_tool is audited as the direct call's is: the tool's name and the
// digest of the arguments given to the tool, not of call_tool's own
// {name, arguments} wrapper, so that an auditor matching digests sees
// one call whichever way it came.
func TestAttackCallToolStepUpAudit(t *testing.T) {
	var ran atomic.Int32
	audit := &searchAudit{}
	srv := serveSnap(t, callCatalog(t, &ran), &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper, Audit: audit}})
	client := &http.Client{}
	args := `{"text":"hi"}`
	for _, r := range []wireRequest{
		{name: "direct", header: baseHeader("tools/call", "cat.write"), body: callBody("1", "cat.write", args, diffMeta)},
		{name: "via", header: baseHeader("tools/call", "call_tool"), body: viaCall("1", "cat.write", args, "")},
	} {
		if got := send(t, client, srv.URL+"/mcp", "Bearer reader", r); got.status != http.StatusForbidden {
			t.Fatalf("%s: %d %s, want 403", r.name, got.status, got.body)
		}
	}
	audit.mu.Lock()
	defer audit.mu.Unlock()
	if len(audit.got) != 2 {
		t.Fatalf("audit records: %+v", audit.got)
	}
	direct, via := audit.got[0], audit.got[1]
	want, _ := execution.ArgumentsDigest([]byte(args))
	if direct.ArgumentsDigest != want {
		t.Fatalf("direct call's digest %q, want %q", direct.ArgumentsDigest, want)
	}
	direct.Time, via.Time = time.Time{}, time.Time{}
	if direct != via {
		t.Errorf("call_tool's step-up record\n%+v\ndiffers from the direct call's\n%+v", via, direct)
	}
	if ran.Load() != 0 {
		t.Error("a refused call ran")
	}
}
