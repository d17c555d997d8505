package mcpexpose_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callCatalog is a catalog with a search whose tools exercise what a call
// passes through: a scope, a policy, a confirmation, a rate limit, a
// withdrawn tool. ran counts the handlers' runs.
func callCatalog(t testing.TB, ran *atomic.Int32) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("cat", nil)
	exp := mcpexpose.New(app)
	run := func(ctx context.Context, in EchoIn) (string, error) {
		ran.Add(1)
		return "ran " + in.Text, nil
	}
	denyNo := policy.Func(func(ctx context.Context, req policy.Request) error {
		in, err := req.Input()
		if err != nil {
			return err
		}
		if in.(EchoIn).Text == "no" {
			return policy.Deny("the text says no")
		}
		return nil
	})
	exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: "echo", Description: "Echo the text back."}), nil)
	exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: "write", Description: "Write the text.", Scopes: []string{"ledger:write"}}), nil)
	exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: "guarded", Description: "Refuse the text no.", Policies: []policy.Policy{denyNo}}), nil)
	exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: "purge", Description: "Purge the text.", Confirm: "Purge it for good?", Annotations: agnara.Destructive}), nil)
	exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: "limited", Description: "Once in a long while.", RateLimit: agnara.RateLimit{Rate: 0.001, Burst: 1}}), nil)
	exp.Tool(app.Capability(run, &agnara.CapabilityOptions{Name: "work", Description: "A task."}), &mcpexpose.ToolOptions{Task: mcpexpose.TaskOptional})
	exp.Withdrawn("cat.held", execution.Fail(execution.Unavailable, "held for an operator", nil), nil)
	exp.Search(nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// viaCall is the body of a call_tool of name with args (raw JSON, "" for
// none), extra params appended.
func viaCall(id, name, args, extra string) string {
	return viaCallMeta(id, name, args, diffMeta+extra)
}

// viaCallMeta is viaCall with meta, the request's _meta and what follows.
func viaCallMeta(id, name, args, meta string) string {
	a := `{"name":"` + name + `"`
	if args != "" {
		a += `,"arguments":` + args
	}
	return callBody(id, "call_tool", a+"}", meta)
}

// tasksMeta is the _meta of a 2026-07-28 client that declares tasks.
const tasksMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`

// askMeta is the _meta of a 2026-07-28 client that can be asked a form.
const askMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`

// searchCorpus is what the search differential test sends: searches,
// call_tool calls good and bad, and the direct calls beside them.
func searchCorpus() []wireRequest {
	var rs []wireRequest
	add := func(name, tool, body string) {
		rs = append(rs, wireRequest{name: name, header: baseHeader("tools/call", tool), body: body})
	}
	rs = append(rs, wireRequest{name: "list", header: baseHeader("tools/list", ""), body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + diffMeta + `}}`})
	for i, args := range []string{`{"query":"echo text"}`, `{"query":"purge","limit":1}`, `{"query":""}`, `{"query":"*"}`, `{"query":"write"}`,
		`{}`, `{"query":5}`, `{"query":"x","limit":0}`, `{"query":"x","limit":"3"}`, `{"query":"x","limit":1.5}`, `{"query":"x","limit":9}`,
		`{"query":"x","extra":true}`, `null`, `[]`, `"q"`, `{"query":"x","limit":null}`, `{"Query":"echo"}`, `{"query":"` + strings.Repeat("a", 1001) + `"}`} {
		add("search/"+string(rune('a'+i)), "search_tools", callBody("2", "search_tools", args, diffMeta))
	}
	for _, c := range []struct{ name, tool, args string }{
		{"echo", "cat.echo", `{"text":"hi"}`},
		{"echo-bad", "cat.echo", `{"text":""}`},
		{"echo-none", "cat.echo", ``},
		{"echo-extra", "cat.echo", `{"text":"hi","x":1}`},
		{"write", "cat.write", `{"text":"hi"}`},
		{"guarded-no", "cat.guarded", `{"text":"no"}`},
		{"guarded-yes", "cat.guarded", `{"text":"yes"}`},
		{"purge", "cat.purge", `{"text":"it"}`},
		{"held", "cat.held", `{"text":"it"}`},
		{"unknown", "cat.nope", `{}`},
	} {
		add("via/"+c.name, "call_tool", viaCall("3", c.tool, c.args, ""))
		args := c.args
		if args == "" {
			add("direct/"+c.name, c.tool, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+c.tool+`",`+diffMeta+`}}`)
			continue
		}
		add("direct/"+c.name, c.tool, callBody("3", c.tool, args, diffMeta))
	}
	for i, args := range []string{`{}`, `{"name":5}`, `{"name":"call_tool","arguments":{"name":"cat.echo"}}`, `{"name":"search_tools","arguments":{"query":"echo"}}`,
		`{"name":"cat.echo","arguments":[1]}`, `{"name":"cat.echo","arguments":null}`, `{"name":"cat.echo","arguments":"{}"}`, `{"name":"cat.echo","other":1}`,
		`null`, `[]`, `{"Name":"cat.echo"}`, `{"name":"cat.echo","a/b~":1}`} {
		add("bad/"+string(rune('a'+i)), "call_tool", callBody("4", "call_tool", args, diffMeta))
	}
	// A task tool, by a client that declares tasks.
	add("via/work", "call_tool", viaCallMeta("5", "cat.work", `{"text":"t"}`, tasksMeta))
	add("direct/work", "cat.work", callBody("5", "cat.work", `{"text":"t"}`, tasksMeta))
	// A call_tool without arguments at all.
	add("bad/none", "call_tool", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"call_tool",`+diffMeta+`}}`)
	return rs
}

// scannerDeclines are the requests whose arguments are no object, which
// the edge's strict scanner leaves to the SDK.
var scannerDeclines = map[string]bool{"search/m": true, "search/n": true, "search/o": true, "bad/i": true, "bad/j": true}

// The edge and the SDK's route answer searches and call_tool calls alike,
// byte for byte, under several handler options; call_tool answers what
// the direct call of the tool it names answers, byte for byte; and the
// fast path takes the search tools' calls.
func TestSearchDifferential(t *testing.T) {
	configs := []struct {
		name  string
		authz string
		opts  mcpexpose.HandlerOptions
	}{
		{"writer", "Bearer writer", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}}},
		{"reader-step-up", "Bearer reader", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}}},
		{"refused", "Bearer refused", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}}},
		{"anonymous", "", mcpexpose.HandlerOptions{}},
		{"forbidden-result", "Bearer reader", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{ForbiddenResult: true, Identity: mapper}}},
		{"development", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &developer}}},
		{"tasks", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Tasks: &mcpexpose.TaskOptions{}}}},
	}
	reqs := searchCorpus()
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			var fastRan, sdkRan atomic.Int32
			fastH, _, fastURL, sdkURL := servePair(t, callCatalog(t, &fastRan), callCatalog(t, &sdkRan), cfg.opts)
			client := &http.Client{}
			got := map[string]exchange{}
			for _, r := range reqs {
				before := fastH.FastPathRequests()
				fast := send(t, client, fastURL, cfg.authz, r)
				sdk := send(t, client, sdkURL, cfg.authz, r)
				took := fastH.FastPathRequests() > before
				if !fast.equal(sdk) {
					t.Errorf("%s (fast path took it: %v):\nfast: %d %v\n%s\nsdk:  %d %v\n%s", r.name, took, fast.status, fast.header, fast.body, sdk.status, sdk.header, sdk.body)
				}
				if !took && cfg.authz != "Bearer refused" && fast.status == http.StatusOK && !scannerDeclines[r.name] {
					t.Errorf("the fast path did not answer %s", r.name)
				}
				got[r.name] = fast
			}
			for name, via := range got {
				if !strings.HasPrefix(name, "via/") {
					continue
				}
				direct := got["direct/"+strings.TrimPrefix(name, "via/")]
				if via.status != direct.status || via.body != direct.body {
					t.Errorf("%s answered\n%d %s\nthe direct call\n%d %s", name, via.status, via.body, direct.status, direct.body)
				}
			}
			if cfg.name == "tasks" && !strings.Contains(got["via/work"].body, `"resultType":"task"`) {
				t.Errorf("call_tool of a task tool made no task: %s", got["via/work"].body)
			}
			if cfg.name == "writer" {
				for _, name := range []string{"bad/c", "bad/d", "bad/e", "bad/a", "search/f", "search/k"} {
					if !strings.Contains(got[name].body, `invalid_input`) {
						t.Errorf("%s was not refused as invalid input: %s", name, got[name].body)
					}
				}
				if !strings.Contains(got["bad/c"].body, "call_tool calls the tools search_tools finds, not call_tool") {
					t.Errorf("a nested call_tool is not refused clearly: %s", got["bad/c"].body)
				}
			}
			// A task's handler may still be on its way on either side (the
			// catalog's task tool runs as a task in every configuration
			// whose caller may see it): the counts must meet, soon.
			for deadline := time.Now().Add(10 * time.Second); fastRan.Load() != sdkRan.Load() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if fastRan.Load() != sdkRan.Load() {
				t.Errorf("handlers ran %d times behind the edge, %d behind the SDK", fastRan.Load(), sdkRan.Load())
			}
		})
	}
}

// searchAudit collects audit records.
type searchAudit struct {
	mu  sync.Mutex
	got []mcpexpose.AuditRecord
}

func (a *searchAudit) Record(_ context.Context, r mcpexpose.AuditRecord) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, r)
}

// A tool reached through call_tool is counted against its own rate limit,
// shared with direct calls; audited under its own name; confirmed in rounds
// whose retry comes through call_tool too (2026-07-28) or is asked on the
// session (2025-11-25, elicitation); and bad call_tool input runs nothing.
func TestCallToolPassesWhatADirectCallPasses(t *testing.T) {
	var ran atomic.Int32
	audit := &searchAudit{}
	snap := callCatalog(t, &ran)
	srv := serveSnap(t, snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper, Audit: audit}})
	client := &http.Client{}
	post := func(tool, body string) string {
		t.Helper()
		return send(t, client, srv.URL+"/mcp", "Bearer writer", wireRequest{name: tool, header: baseHeader("tools/call", tool), body: body}).raw
	}

	// Rate limit: one call in a long while, direct or through call_tool.
	if b := post("cat.limited", callBody("1", "cat.limited", `{"text":"a"}`, diffMeta)); !strings.Contains(b, "ran a") {
		t.Fatalf("first call: %s", b)
	}
	if b := post("call_tool", viaCall("2", "cat.limited", `{"text":"b"}`, "")); !strings.Contains(b, `rate_limited`) {
		t.Errorf("call_tool after a direct call was not limited: %s", b)
	}

	// Audit: the record names the tool called, not call_tool.
	audit.mu.Lock()
	audit.got = nil
	audit.mu.Unlock()
	post("call_tool", viaCall("3", "cat.echo", `{"text":"a"}`, ""))
	post("search_tools", callBody("4", "search_tools", `{"query":"echo"}`, diffMeta))
	audit.mu.Lock()
	if len(audit.got) != 2 || audit.got[0].Tool != "cat.echo" || audit.got[0].Capability != "cat.echo" || audit.got[0].Outcome != "ok" ||
		audit.got[1].Tool != "search_tools" || audit.got[1].Capability != "" {
		t.Errorf("audit records: %+v", audit.got)
	}
	audit.mu.Unlock()

	// Confirmation at 2026-07-28: asked through call_tool, answered
	// through call_tool; a second round answered by the direct call.
	for _, retry := range []string{"call_tool", "cat.purge"} {
		before := ran.Load()
		first := post("call_tool", viaCallMeta("5", "cat.purge", `{"text":"x"}`, askMeta))
		var msg struct {
			Result struct {
				RequestState  string                     `json:"requestState"`
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(first[strings.Index(first, "{"):])), &msg); err != nil || msg.Result.RequestState == "" || len(msg.Result.InputRequests) != 1 {
			t.Fatalf("no confirmation asked (%v): %s", err, first)
		}
		var key string
		for k := range msg.Result.InputRequests {
			key = k
		}
		yes := `,"requestState":"` + msg.Result.RequestState + `","inputResponses":{"` + key + `":{"action":"accept","content":{"confirm":true}}}`
		var b string
		if retry == "call_tool" {
			b = post("call_tool", viaCallMeta("6", "cat.purge", `{"text":"x"}`, askMeta+yes))
		} else {
			b = post("cat.purge", callBody("6", "cat.purge", `{"text":"x"}`, askMeta+yes))
		}
		if !strings.Contains(b, "ran x") || ran.Load() != before+1 {
			t.Errorf("retry by %s: %s", retry, b)
		}
		// The state is single use, through either name.
		if b := post("call_tool", viaCallMeta("7", "cat.purge", `{"text":"x"}`, askMeta+yes)); strings.Contains(b, "ran x") {
			t.Errorf("a replayed state ran the tool again: %s", b)
		}
	}

	// Confirmation in the handshake era: asked of the session's client.
	asked := 0
	cs := connect(t, srv.URL+"/mcp", "writer", "2025-11-25", &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked++
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
	}})
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "cat.purge", "arguments": map[string]any{"text": "y"}}})
	if err != nil || res.IsError || asked != 1 || !strings.Contains(textOf(t, res), "ran y") {
		t.Errorf("legacy call_tool of a confirmed tool: asked %d, %v, %+v", asked, err, res)
	}

	// Bad input runs nothing.
	before := ran.Load()
	for _, body := range []string{viaCall("8", "call_tool", `{"name":"cat.echo","arguments":{"text":"a"}}`, ""), viaCall("8", "search_tools", `{"query":"a"}`, ""),
		callBody("8", "call_tool", `{"name":["cat.echo"]}`, diffMeta), callBody("8", "call_tool", `{"name":"cat.echo","arguments":[{"text":"a"}]}`, diffMeta)} {
		if b := post("call_tool", body); !strings.Contains(b, `invalid_input`) {
			t.Errorf("%s answered %s", body, b)
		}
	}
	if ran.Load() != before {
		t.Error("a refused call_tool ran a handler")
	}
}
