package mcpimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// failingServer has one tool, "fail", that fails as its argument "mode"
// says, each time explaining why in words of its own.
func failingServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1.0.0"}, nil)
	srv.AddTool(&mcp.Tool{Name: "fail", Description: "Fails.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"mode":{"type":"string"},"note":{"type":"string"}},"required":["mode"],"additionalProperties":false}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Mode string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			switch in.Mode {
			case "text":
				return &mcp.CallToolResult{IsError: true, Content: text("path outside allowed directories: /etc/passwd\n\x1b[31mlevel=ERROR msg=forged\u202e")}, nil
			case "long":
				// é straddles byte 512: the cut falls before it.
				return &mcp.CallToolResult{IsError: true, Content: text(strings.Repeat("a", 511) + "é" + strings.Repeat("b", 1000))}, nil
			case "blocks":
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "first"},
					&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}, &mcp.TextContent{Text: "second"}}}, nil
			case "structured":
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{}, StructuredContent: map[string]any{"error": "quota exceeded"}}, nil
			}
			return &mcp.CallToolResult{Content: text("ok")}, nil
		})
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && strings.Contains(string(r.Params.Arguments), `"rpc"`) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream exploded:\ttoo many open files"}
			}
			return next(ctx, method, req)
		}
	})
	return srv
}

// TestRemoteToolErrorLoggedForTheOperator: when the remote tool fails and
// says why (an isError result, a JSON-RPC error), the caller gets the
// fixed failure and none of the remote's words, and the operator's log
// gets them, at warn: the first 512 bytes, cut at a character boundary,
// every invisible character escaped so that the record stays one line
// whatever handler writes it, with the server, tool and reason, and never
// the call's arguments.
func TestRemoteToolErrorLoggedForTheOperator(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			for _, tc := range []struct {
				mode   string
				reason execution.Reason
				want   map[string]any // the record's attributes
				remote []string       // words of the remote that must not reach the caller
			}{{
				mode: "text", reason: mcpimport.ReasonToolError,
				want:   map[string]any{"remote_error": `path outside allowed directories: /etc/passwd\n\x1b[31mlevel=ERROR msg=forged\u202e`},
				remote: []string{"allowed directories", "forged"},
			}, {
				mode: "long", reason: mcpimport.ReasonToolError,
				want:   map[string]any{"remote_error": strings.Repeat("a", 511) + " …(cut)"},
				remote: []string{"aaaa"},
			}, {
				mode: "blocks", reason: mcpimport.ReasonToolError,
				want:   map[string]any{"remote_error": `first\nsecond`},
				remote: []string{"first", "second"},
			}, {
				mode: "structured", reason: mcpimport.ReasonToolError,
				want:   map[string]any{"remote_error": `{"error":"quota exceeded"}`},
				remote: []string{"quota"},
			}, {
				mode: "rpc", reason: mcpimport.ReasonProtocolError,
				want:   map[string]any{"remote_error": `upstream exploded:\ttoo many open files`, "code": float64(jsonrpc.CodeInternalError)},
				remote: []string{"exploded", "open files"},
			}} {
				t.Run(tc.mode, func(t *testing.T) {
					logs := &mcptest.Buffer{}
					logger := slog.New(slog.NewJSONHandler(logs, nil)) // at info, as servers log by default
					cs, mon := connect(t, failingServer(), version)
					_, plans := imported(t, cs, mon, map[string]mcpimport.Binding{
						"fail": {Name: "fail", Title: "Fail", NoScopeValidator: true},
					}, &mcpimport.Options{Logger: logger})

					_, err := call(t, plans, "fail", `{"mode":"`+tc.mode+`","note":"argument-marker"}`)
					wantCode(t, err, tc.reason)
					var f *execution.Failure
					errors.As(err, &f)
					answer, _ := json.Marshal(f)
					for _, w := range tc.remote {
						if strings.Contains(string(answer), w) {
							t.Errorf("the caller's failure %s holds the remote's %q", answer, w)
						}
					}

					lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
					if len(lines) != 1 {
						t.Fatalf("want one record, got %d:\n%s", len(lines), logs)
					}
					if strings.Contains(lines[0], "argument-marker") {
						t.Errorf("the record holds the call's arguments: %s", lines[0])
					}
					var rec map[string]any
					if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
						t.Fatal(err)
					}
					delete(rec, "time")
					want := map[string]any{"level": "WARN", "msg": "mcpimport: remote tool failed", "server": "docs", "tool": "fail", "reason": string(tc.reason)}
					for k, v := range tc.want {
						want[k] = v
					}
					if diff := cmp.Diff(want, rec); diff != "" {
						t.Errorf("the record (-want +got):\n%s", diff)
					}
				})
			}
		})
	}
}

// TestRemoteWriteErrorLoggedForTheOperator: an approved write that the
// remote tool fails, saying why, is recorded with an unknown effect and
// answered with the fixed failure, and the remote's words go to the
// operator's log at warn, as for a read.
func TestRemoteWriteErrorLoggedForTheOperator(t *testing.T) {
	logs := &mcptest.Buffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	store := openStore(t, filepath.Join(t.TempDir(), "approvals.db"))
	defer store.Close()
	cs, mon := connect(t, failingServer(), "2025-11-25")
	cat, err := mcpimport.DiscoverWrites(context.Background(), newSession(t, cs, mon, "files"), map[string]mcpimport.WriteBinding{
		"fail": {Name: "fail", Title: "Fail", Effect: approval.EffectWrite, Scopes: []string{"ledger:write"},
			ScopeValidator: func(context.Context, policy.Principal, json.RawMessage) error { return nil },
			BindingID:      "files", BindingRevision: "1", ScopeID: "files", ScopeRevision: "1"},
	}, &mcpimport.WriteOptions{Approvals: store, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("host", nil)
	cat.Register(app)
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := plans.Lookup("host.fail")
	invoke := func() *execution.Failure {
		t.Helper()
		out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: requester, Arguments: json.RawMessage(`{"mode":"text"}`)})
		if err != nil {
			t.Fatal(err)
		}
		f, ok := out.(*execution.Failure)
		if !ok {
			t.Fatalf("outcome %T, want a failure", out)
		}
		return f
	}
	f := invoke()
	id, _ := f.Details["approval_id"].(string)
	if _, err := store.Approve(context.Background(), id, approver, ""); err != nil {
		t.Fatal(err)
	}
	f = invoke()
	if execution.ReasonOf(f) != mcpimport.ReasonToolError || f.Details["effect"] != string(approval.EffectUnknown) {
		t.Fatalf("the dispatched write: %v (details %v), want %s with an unknown effect", f, f.Details, mcpimport.ReasonToolError)
	}
	if answer, _ := json.Marshal(f); strings.Contains(string(answer), "allowed directories") {
		t.Errorf("the caller's failure holds the remote's words: %s", answer)
	}
	var rec map[string]any
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, `"level":"WARN"`) {
			if rec != nil {
				t.Fatalf("more than one warn record:\n%s", logs)
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	delete(rec, "time")
	if diff := cmp.Diff(map[string]any{"level": "WARN", "msg": "mcpimport: remote tool failed", "server": "files", "tool": "fail",
		"reason": string(mcpimport.ReasonToolError), "remote_error": `path outside allowed directories: /etc/passwd\n\x1b[31mlevel=ERROR msg=forged\u202e`}, rec); diff != "" {
		t.Errorf("the warn record (-want +got):\n%s\nall records:\n%s", diff, logs)
	}
}

// TestRemoteTaskFailureLoggedForTheOperator: a remote task that ends in
// its tool's error, or fails with a JSON-RPC error, is logged at warn
// with the remote's words, as a direct call is.
func TestRemoteTaskFailureLoggedForTheOperator(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want map[string]any
	}{
		{"toolerror", map[string]any{"reason": string(mcpimport.ReasonToolError), "remote_error": "remote secret"}},
		{"fail", map[string]any{"reason": string(mcpimport.ReasonProtocolError), "remote_error": "remote secret: stack trace", "code": float64(-32603)}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			logs := &mcptest.Buffer{}
			cat, err := mcpimport.Discover(context.Background(), taskSession(t, newJobs(t), "2026-07-28"), map[string]mcpimport.Binding{
				"job": {Name: "run_job", Title: "Run a job", Scopes: []string{"docs:read"}, NoScopeValidator: true, ConcurrencySafe: true, Task: &mcpimport.TaskOptions{}},
			}, &mcpimport.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
			must(t, err)
			app := agnara.New("gw", nil)
			cat.Register(app)
			plans, err := execution.Compile(app)
			must(t, err)
			_, err = call(t, plans, "run_job", `{"mode":"`+tc.mode+`"}`)
			wantCode(t, err, execution.Reason(tc.want["reason"].(string)))
			var rec map[string]any
			if err := json.Unmarshal([]byte(logs.String()), &rec); err != nil {
				t.Fatalf("want one record: %v\n%s", err, logs)
			}
			delete(rec, "time")
			want := map[string]any{"level": "WARN", "msg": "mcpimport: remote tool failed", "server": "jobs", "tool": "job"}
			for k, v := range tc.want {
				want[k] = v
			}
			if diff := cmp.Diff(want, rec); diff != "" {
				t.Errorf("the record (-want +got):\n%s", diff)
			}
		})
	}
}
