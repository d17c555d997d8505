package mcpexpose_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
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

// Smuggling a call past the guard through call_tool's own reading: keys
// sent twice (inside call_tool's arguments, and in the request's params),
// look-alike names (case, spaces, a one-dot leader, NUL, a JSON escape
// that decodes to the real name), arguments that are no object, nested
// search tools, request fields (_meta, task, requestState) put inside
// call_tool's arguments, and search_tools limits at their edges. A reader, who may
// not call cat.write, never runs it by any of them; the edge and the SDK
// route answer each alike, byte for byte; and a name read as cat.write is
// answered as the direct call of cat.write is.
func TestAttackCallToolSmuggling(t *testing.T) {
	w := `{"text":"W"}` // what cat.write would echo: "ran W"
	type req struct{ name, mcpName, body string }
	reqs := []req{
		{"direct write", "cat.write", callBody("1", "cat.write", w, diffMeta)},
		{"direct echo", "cat.echo", callBody("1", "cat.echo", `{"text":"E"}`, diffMeta)},
		{"dup name, write last", "call_tool", callBody("1", "call_tool", `{"name":"cat.echo","name":"cat.write","arguments":`+w+`}`, diffMeta)},
		{"dup name, echo last", "call_tool", callBody("1", "call_tool", `{"name":"cat.write","name":"cat.echo","arguments":{"text":"E"}}`, diffMeta)},
		{"dup arguments", "call_tool", callBody("1", "call_tool", `{"name":"cat.write","arguments":{"text":"E"},"arguments":`+w+`}`, diffMeta)},
		{"escaped name", "call_tool", callBody("1", "call_tool", `{"name":"cat.writ\u0065","arguments":`+w+`}`, diffMeta)},
		{"escaped key", "call_tool", callBody("1", "call_tool", `{"n\u0061me":"cat.write","arguments":`+w+`}`, diffMeta)},
		{"upper name", "call_tool", viaCall("1", "CAT.WRITE", w, "")},
		{"spaced name", "call_tool", viaCall("1", " cat.write ", w, "")},
		{"one-dot leader", "call_tool", viaCall("1", "cat\u2024write", w, "")},
		{"NUL in name", "call_tool", viaCall("1", `cat.write\u0000`, w, "")},
		{"arguments as text", "call_tool", callBody("1", "call_tool", `{"name":"cat.write","arguments":"{\"text\":\"W\"}"}`, diffMeta)},
		{"inner _meta", "call_tool", callBody("1", "call_tool", `{"name":"cat.echo","arguments":{"text":"E"},"_meta":{"progressToken":"p"}}`, diffMeta)},
		{"inner task", "call_tool", callBody("1", "call_tool", `{"name":"cat.echo","arguments":{"text":"E"},"task":{"ttl":1000}}`, diffMeta)},
		{"inner requestState", "call_tool", callBody("1", "call_tool", `{"name":"cat.echo","arguments":{"text":"E"},"requestState":"x"}`, diffMeta)},
		{"nested call_tool", "call_tool", callBody("1", "call_tool", `{"name":"call_tool","arguments":{"name":"cat.write","arguments":`+w+`}}`, diffMeta)},
		{"outer dup name, call_tool last", "call_tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cat.echo","arguments":{"name":"cat.write","arguments":` + w + `},"name":"call_tool",` + diffMeta + `}}`},
		{"outer dup name, call_tool last, header echo", "cat.echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"cat.echo","arguments":{"name":"cat.write","arguments":` + w + `},"name":"call_tool",` + diffMeta + `}}`},
		{"outer dup name, echo last", "cat.echo", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"cat.write","arguments":` + w + `},"name":"cat.echo",` + diffMeta + `}}`},
		{"outer dup arguments", "call_tool", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"cat.echo","arguments":{"text":"E"}},"arguments":{"name":"cat.write","arguments":` + w + `},` + diffMeta + `}}`},
		{"search write", "search_tools", callBody("1", "search_tools", `{"query":"write"}`, diffMeta)},
		{"search limit 1.0", "search_tools", callBody("1", "search_tools", `{"query":"write text","limit":1.0}`, diffMeta)},
		{"search limit 1e0", "search_tools", callBody("1", "search_tools", `{"query":"write text","limit":1e0}`, diffMeta)},
		{"search limit -0", "search_tools", callBody("1", "search_tools", `{"query":"write","limit":-0}`, diffMeta)},
		{"search limit true", "search_tools", callBody("1", "search_tools", `{"query":"write","limit":true}`, diffMeta)},
		{"search limit huge", "search_tools", callBody("1", "search_tools", `{"query":"write","limit":18446744073709551617}`, diffMeta)},
		// A number beyond a double's range in any tools/call's arguments:
		// the SDK cannot decode the params to read the name (-32020), and
		// the edge leaves such a body to it.
		{"search limit 1e400", "search_tools", callBody("1", "search_tools", `{"query":"write","limit":1e400}`, diffMeta)},
		{"call_tool huge", "call_tool", callBody("1", "call_tool", `{"name":"cat.echo","arguments":{"text":"E","n":-1e400}}`, diffMeta)},
		{"search dup query", "search_tools", callBody("1", "search_tools", `{"query":"echo","query":"write"}`, diffMeta)},
	}
	for _, cfg := range []struct{ name, authz string }{{"reader", "Bearer reader"}, {"anonymous", ""}} {
		t.Run(cfg.name, func(t *testing.T) {
			opts := mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true, Server: &mcpexpose.ServerOptions{Identity: mapper}}
			var fastRan, sdkRan atomic.Int32
			_, _, fastURL, sdkURL := servePair(t, callCatalog(t, &fastRan), callCatalog(t, &sdkRan), opts)
			client := &http.Client{}
			got := map[string]exchange{}
			for _, r := range reqs {
				wr := wireRequest{name: r.name, header: baseHeader("tools/call", r.mcpName), body: r.body}
				fast, sdk := send(t, client, fastURL, cfg.authz, wr), send(t, client, sdkURL, cfg.authz, wr)
				if !fast.equal(sdk) {
					t.Errorf("%s:\nfast: %d %s\nsdk:  %d %s", r.name, fast.status, fast.body, sdk.status, sdk.body)
				}
				if strings.Contains(fast.body, "ran W") || strings.Contains(sdk.body, "ran W") {
					t.Errorf("%s ran cat.write for a caller who may not call it: %s", r.name, fast.body)
				}
				if strings.HasPrefix(r.name, "search") && strings.Contains(fast.body, `cat.write`) {
					t.Errorf("%s found cat.write: %s", r.name, fast.body)
				}
				got[r.name] = fast
			}
			for _, name := range []string{"dup name, write last", "escaped name", "escaped key"} {
				if got[name].status != got["direct write"].status || got[name].body != got["direct write"].body {
					t.Errorf("%s answered\n%d %s\nthe direct call of cat.write\n%d %s", name, got[name].status, got[name].body, got["direct write"].status, got["direct write"].body)
				}
			}
			for _, name := range []string{"inner _meta", "inner task", "inner requestState", "arguments as text", "nested call_tool"} {
				if !strings.Contains(got[name].body, "invalid_input") || strings.Contains(got[name].body, "ran E") {
					t.Errorf("%s was not refused as call_tool's invalid input: %s", name, got[name].body)
				}
			}
			if !strings.Contains(got["dup name, echo last"].body, "ran E") {
				t.Errorf("dup name, echo last: %s", got["dup name, echo last"].body)
			}
		})
	}
}

// A round's sealed state binds the tool and the arguments it was asked
// for, whichever name the call came through: a confirmation asked for
// cat.purge (directly or through call_tool) and answered for cat.wipe,
// or for cat.purge with other arguments, through call_tool or directly,
// runs nothing; answered as asked, it runs once.
func TestAttackStateReplayAcrossTools(t *testing.T) {
	var ran atomic.Int32
	app := agnara.New("cat", nil)
	exp := mcpexpose.New(app)
	run := func(ctx context.Context, in EchoIn) (string, error) {
		ran.Add(1)
		return "ran " + in.Text, nil
	}
	for _, name := range []string{"purge", "wipe"} {
		exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: name, Description: "Destroy the text.", Confirm: "Really?", Annotations: agnara.Destructive}), nil)
	}
	exp.Search(nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv := serveSnap(t, snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}})
	client := &http.Client{}
	post := func(tool, body string) string {
		t.Helper()
		return send(t, client, srv.URL+"/mcp", "Bearer writer", wireRequest{name: tool, header: baseHeader("tools/call", tool), body: body}).raw
	}
	// ask returns the answer that accepts the confirmation of cat.purge
	// with {"text":"x"}, asked directly or through call_tool.
	ask := func(via bool) string {
		t.Helper()
		var first string
		if via {
			first = post("call_tool", viaCallMeta("1", "cat.purge", `{"text":"x"}`, askMeta))
		} else {
			first = post("cat.purge", callBody("1", "cat.purge", `{"text":"x"}`, askMeta))
		}
		var msg struct {
			Result struct {
				RequestState  string                     `json:"requestState"`
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(first[strings.Index(first, "{"):])), &msg); err != nil || msg.Result.RequestState == "" || len(msg.Result.InputRequests) != 1 {
			t.Fatalf("no confirmation asked (%v): %s", err, first)
		}
		for k := range msg.Result.InputRequests {
			return `,"requestState":"` + msg.Result.RequestState + `","inputResponses":{"` + k + `":{"action":"accept","content":{"confirm":true}}}`
		}
		return ""
	}
	for _, askVia := range []bool{false, true} {
		for _, c := range []struct {
			name, mcpName, body string
		}{
			{"other tool via call_tool", "call_tool", viaCallMeta("2", "cat.wipe", `{"text":"x"}`, askMeta+"%s")},
			{"other tool directly", "cat.wipe", callBody("2", "cat.wipe", `{"text":"x"}`, askMeta+"%s")},
			{"other arguments via call_tool", "call_tool", viaCallMeta("2", "cat.purge", `{"text":"y"}`, askMeta+"%s")},
			{"other arguments directly", "cat.purge", callBody("2", "cat.purge", `{"text":"y"}`, askMeta+"%s")},
		} {
			yes := ask(askVia)
			before := ran.Load()
			if b := post(c.mcpName, fmt.Sprintf(c.body, yes)); strings.Contains(b, `"ran `) || ran.Load() != before {
				t.Errorf("asked via call_tool %v, answered for %s: ran: %s", askVia, c.name, b)
			}
		}
		yes := ask(askVia)
		if b := post("call_tool", viaCallMeta("3", "cat.purge", `{"text":"x"}`, askMeta+yes)); !strings.Contains(b, "ran x") {
			t.Errorf("asked via call_tool %v, answered as asked: %s", askVia, b)
		}
	}
}

// A search that runs while a Swap replaces the catalog answers from one
// snapshot, whole: what the caller finds in the old one or in the new
// one, never a mix, never a tool it may see in neither. The catalog's
// scoped era hides the scoped tools from an anonymous caller; its
// unscoped era shows them all.
func TestAttackSearchDuringSwap(t *testing.T) {
	scoped, open := searchCatalog(t, nil, false, nil), searchCatalog(t, nil, true, nil)
	query := callBody("1", "search_tools", `{"query":"issue refund payment publish pages","limit":8}`, diffMeta)
	wr := wireRequest{name: "search", header: baseHeader("tools/call", "search_tools"), body: query}
	client := &http.Client{}
	want := map[string]bool{}
	for _, snap := range []*mcpexpose.Snapshot{scoped, open} {
		want[send(t, client, serveSnap(t, snap, nil).URL+"/mcp", "", wr).body] = true
	}
	if len(want) != 2 {
		t.Fatal("both eras answer alike: the test would prove nothing")
	}
	h, err := mcpexpose.NewHandler(scoped, swappable(nil))
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			next := open
			if i%2 == 1 {
				next = scoped
			}
			if err := h.Swap(next); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	errs := make(chan string, 4)
	for range 4 {
		go func() {
			var bad string
			for range 15 {
				got, err := postFromGoroutine(client, url, wr)
				if err != nil {
					bad = err.Error()
				} else if !want[got] {
					bad = got
				}
			}
			errs <- bad
		}()
	}
	for range 4 {
		if bad := <-errs; bad != "" {
			t.Errorf("a search during swaps answered what neither snapshot does: %s", bad)
		}
	}
	<-done
}

// postFromGoroutine is send for a goroutine other than the test's: it reports an
// error instead of failing the test, and returns the masked body.
func postFromGoroutine(client *http.Client, url string, r wireRequest) (string, error) {
	req, err := http.NewRequest("POST", url, strings.NewReader(r.body))
	if err != nil {
		return "", err
	}
	req.Header = r.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	resp.Header.Del("Date")
	mcptest.Unframe(resp.Header, string(body))
	return mask(string(body), resp.Header), nil
}
