package mcpexpose_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goneText is what a call of docs.gone answers.
const goneText = `{"code":"unavailable","message":"the upstream no longer offers this tool","reason":"mcp_catalog_stale"}`

// withdrawnApp has a tool anyone may call (docs.kept, which counts its
// runs), a withdrawn tool that needs ledger:write (docs.gone) and one that
// needs nothing (docs.open).
func withdrawnApp(t *testing.T, runs *atomic.Int32) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("docs", nil)
	kept := app.Capability(func(ctx context.Context, in docIn) (string, error) { runs.Add(1); return in.ID, nil },
		&agnara.CapabilityOptions{Name: "kept", Description: "Kept."})
	exp := mcpexpose.New(app)
	exp.Tool(kept, nil)
	exp.Withdrawn("docs.gone", execution.Fail(execution.Unavailable, "the upstream no longer offers this tool", nil).WithReason("mcp_catalog_stale"),
		&mcpexpose.WithdrawnOptions{Scopes: []string{"ledger:write"}})
	exp.Withdrawn("docs.open", execution.Fail(execution.NotFound, "moved", map[string]any{"to": "docs.kept"}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestWithdrawnToolIsNeverListedAndRunsNothing serves a withdrawn tool over
// loopback HTTP with tokens, with and without the fast path, to Go SDK
// clients of every era: no caller's tools/list shows it; a caller who
// holds its scopes gets its failure, whatever the arguments, and nothing
// runs; a caller who does not gets the 403 insufficient_scope challenge,
// as for a tool; each call is audited, without a capability.
func TestWithdrawnToolIsNeverListedAndRunsNothing(t *testing.T) {
	for _, disable := range []bool{false, true} {
		var runs atomic.Int32
		snap := withdrawnApp(t, &runs)
		var audit auditLog
		h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tokens, DisableFastPath: disable, Server: &mcpexpose.ServerOptions{Audit: &audit}})
		if err != nil {
			t.Fatal(err)
		}
		url := httptestServer(t, h)
		for _, era := range eras {
			t.Run(era.name+map[bool]string{true: "/sdk-path", false: "/fast-path"}[disable], func(t *testing.T) {
				for _, token := range []string{"writer", "reader"} {
					cs := connect(t, url, token, era.version, nil)
					list, err := cs.ListTools(t.Context(), nil)
					if err != nil || toolNames(list.Tools) != "docs.kept" {
						t.Fatalf("%s's tools/list = %v, %v; want docs.kept alone", token, list, err)
					}
				}
				writer := connect(t, url, "writer", era.version, nil)
				for _, args := range []any{map[string]any{}, map[string]any{"id": "d1", "extra": []any{1, "x"}}, nil} {
					res, err := writer.CallTool(t.Context(), &mcp.CallToolParams{Name: "docs.gone", Arguments: args})
					if err != nil || !res.IsError || textOf(t, res) != goneText {
						t.Fatalf("writer's call with arguments %v = %+v, %v; want the failure %s", args, res, err, goneText)
					}
				}
				res, err := connect(t, url, "reader", era.version, nil).CallTool(t.Context(), callParams("docs.open", map[string]any{}))
				if err != nil || !res.IsError || textOf(t, res) != `{"code":"not_found","details":{"to":"docs.kept"},"message":"moved"}` {
					t.Fatalf("reader's call of docs.open = %+v, %v", res, err)
				}
			})
		}
		// The reader lacks ledger:write: the challenge a tool of that scope
		// gets, on the wire.
		params := map[string]any{"name": "docs.gone", "arguments": map[string]any{}, "_meta": mcptest.Meta(nil)}
		resp, _, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", params, "reader"))
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope", scope="ledger:write"`) || msg["error"] == nil {
			t.Errorf("reader's call of docs.gone: HTTP %d, %q, %v; want 403 insufficient_scope naming ledger:write", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), msg)
		}
		if runs.Load() != 0 {
			t.Errorf("docs.kept ran %d times, for calls of withdrawn tools only", runs.Load())
		}
		var gone, refused int
		for _, r := range audit.take() {
			switch {
			case r.Tool == "docs.gone" && r.Capability == "" && r.Outcome == "unavailable" && r.Reason == "mcp_catalog_stale" && r.PrincipalID == "wendy":
				gone++
			case r.Tool == "docs.gone" && r.Capability == "" && r.Outcome == "forbidden" && r.PrincipalID == "rita":
				refused++
			case r.Tool == "docs.open" && r.Capability == "" && r.Outcome == "not_found":
			default:
				t.Errorf("unexpected audit record %+v", r)
			}
		}
		if gone != 3*len(eras) || refused != 1 {
			t.Errorf("audited %d answered and %d refused calls of docs.gone, want %d and 1", gone, refused, 3*len(eras))
		}
	}
}

// TestWithdrawnToolForbiddenResult: without tokens, a caller without the
// scopes is told "unknown tool", and with ForbiddenResult the canonical
// forbidden failure, exactly as for a tool of those scopes.
func TestWithdrawnToolForbiddenResult(t *testing.T) {
	app := agnara.New("docs", nil)
	scoped := app.Capability(func(context.Context) (string, error) { return "ran", nil },
		&agnara.CapabilityOptions{Name: "scoped", Description: "Scoped.", Scopes: []string{"ledger:write", "ledger:read"}})
	exp := mcpexpose.New(app)
	exp.Tool(scoped, nil)
	exp.Withdrawn("docs.gone", execution.Fail(execution.Unavailable, "gone", nil), &mcpexpose.WithdrawnOptions{Scopes: []string{"ledger:write", "ledger:read"}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for _, forbidden := range []bool{false, true} {
		h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{ForbiddenResult: forbidden}})
		if err != nil {
			t.Fatal(err)
		}
		url := httptestServer(t, h)
		for _, era := range eras[:2] {
			cs := connect(t, url, "", era.version, nil)
			answer := func(name string) string {
				res, err := cs.CallTool(t.Context(), callParams(name, map[string]any{}))
				var rpcErr *jsonrpc.Error
				switch {
				case errors.As(err, &rpcErr):
					return strings.ReplaceAll(rpcErr.Message, name, "NAME")
				case err != nil:
					t.Fatal(err)
				}
				return textOf(t, res)
			}
			if got, want := answer("docs.gone"), answer("docs.scoped"); got != want {
				t.Errorf("ForbiddenResult %v, %s: the withdrawn tool answers %s, the tool of its scopes %s", forbidden, era.name, got, want)
			}
		}
	}
}

// TestWithdrawnAcrossASwap withdraws a tool by a swap and brings it back:
// while withdrawn it is in no list and answers its failure, on both paths
// (the SDK server holds the withdrawn definition under the name).
func TestWithdrawnAcrossASwap(t *testing.T) {
	app := agnara.New("docs", nil)
	var runs atomic.Int32
	get := app.Capability(func(ctx context.Context, in docIn) (string, error) { runs.Add(1); return "got " + in.ID, nil },
		&agnara.CapabilityOptions{Name: "get", Description: "Get."})
	compile := func(withdraw bool) *mcpexpose.Snapshot {
		exp := mcpexpose.New(app)
		if withdraw {
			exp.Withdrawn("docs.get", execution.Fail(execution.Unavailable, "down", nil), nil)
		} else {
			exp.Tool(get, nil)
		}
		snap, err := exp.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	for _, disable := range []bool{false, true} {
		h, err := mcpexpose.NewHandler(compile(false), &mcpexpose.HandlerOptions{DisableFastPath: disable, Server: &mcpexpose.ServerOptions{Swappable: true}})
		if err != nil {
			t.Fatal(err)
		}
		url := httptestServer(t, h)
		for i, withdraw := range []bool{true, false, true} {
			if err := h.Swap(compile(withdraw)); err != nil {
				t.Fatal(err)
			}
			for _, era := range eras[:2] {
				cs := connect(t, url, "", era.version, nil)
				list, err := cs.ListTools(t.Context(), nil)
				res, cerr := cs.CallTool(t.Context(), callParams("docs.get", map[string]any{"id": "a"}))
				if err != nil || cerr != nil {
					t.Fatalf("swap %d, %s: %v %v", i, era.name, err, cerr)
				}
				switch text := textOf(t, res); {
				case withdraw && (len(list.Tools) != 0 || text != `{"code":"unavailable","message":"down"}`):
					t.Errorf("swap %d, %s, withdrawn: list %s, call %s", i, era.name, toolNames(list.Tools), text)
				case !withdraw && (toolNames(list.Tools) != "docs.get" || !strings.Contains(text, "got a")):
					t.Errorf("swap %d, %s, back: list %s, call %s", i, era.name, toolNames(list.Tools), text)
				}
			}
		}
	}
	if runs.Load() != 2*2 {
		t.Errorf("the tool ran %d times, want 4 (two paths, two eras, while it was back)", runs.Load())
	}
}

// TestNoToolOptionHidesARunnableTool declares a tool with every
// combination of ToolOptions' values, each in its own exposure, and
// requires tools/list, for a caller who may call everything, to list every
// tool the snapshot has: no option makes a runnable tool invisible. It
// reads ToolOptions' fields by reflection, so that a field added later is
// tried too, or fails the test until it is taught the field's values.
func TestNoToolOptionHidesARunnableTool(t *testing.T) {
	rt := reflect.TypeFor[mcpexpose.ToolOptions]()
	values := make([][]reflect.Value, rt.NumField())
	for i := range rt.NumField() {
		f := rt.Field(i)
		switch {
		case f.Type == reflect.TypeFor[mcpexpose.TaskSupport]():
			for _, v := range []mcpexpose.TaskSupport{mcpexpose.TaskNever, mcpexpose.TaskOptional, mcpexpose.TaskRequired} {
				values[i] = append(values[i], reflect.ValueOf(v))
			}
		case f.Type.Kind() == reflect.Bool:
			values[i] = []reflect.Value{reflect.ValueOf(false), reflect.ValueOf(true)}
		case f.Name == "Name":
			values[i] = []reflect.Value{reflect.ValueOf(""), reflect.ValueOf("named.tool")}
		case f.Name == "UI":
			values[i] = []reflect.Value{reflect.ValueOf((*mcpexpose.UI)(nil)), reflect.ValueOf(&mcpexpose.UI{HTML: "<p>view</p>"})}
		default:
			t.Fatalf("ToolOptions.%s (%s) is new: teach this test its values, and make sure none hides a tool that runs", f.Name, f.Type)
		}
	}
	combos := [][]reflect.Value{nil}
	for _, vs := range values {
		var next [][]reflect.Value
		for _, c := range combos {
			for _, v := range vs {
				next = append(next, append(slices.Clone(c), v))
			}
		}
		combos = next
	}
	compiled := 0
	for _, c := range combos {
		var opts mcpexpose.ToolOptions
		ov := reflect.ValueOf(&opts).Elem()
		for i, v := range c {
			ov.Field(i).Set(v)
		}
		app := agnara.New("every", nil)
		capability := app.Capability(func(context.Context) (string, error) { return "ran", nil },
			&agnara.CapabilityOptions{Name: "tool", Description: "A tool.", Scopes: []string{"ledger:write"}})
		plain := app.Capability(func(context.Context) (string, error) { return "ran", nil },
			&agnara.CapabilityOptions{Name: "plain", Description: "Another."})
		exp := mcpexpose.New(app)
		exp.Tool(capability, &opts)
		exp.Tool(plain, nil)
		snap, err := exp.Compile()
		if err != nil {
			continue // an invalid combination (TaskAfterQuestions without Task) serves nothing
		}
		compiled++
		h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		url := httptestServer(t, h)
		for _, era := range eras[:2] {
			list, err := connect(t, url, "writer", era.version, nil).ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tl := range list.Tools {
				got = append(got, tl.Name)
			}
			if diff := cmp.Diff(snap.Names(), got); diff != "" {
				t.Errorf("ToolOptions %+v, %s: tools/list differs from the snapshot's tools (-snapshot +listed):\n%s", opts, era.name, diff)
			}
		}
	}
	if compiled < len(combos)/2 {
		t.Fatalf("only %d of %d combinations compiled", compiled, len(combos))
	}
}

// TestWithdrawnMistakes: every mistake in a withdrawn tool is reported by
// Compile, all together, each at the line that made it.
func TestWithdrawnMistakes(t *testing.T) {
	app := agnara.New("docs", nil)
	kept := app.Capability(func(context.Context) (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "kept", Description: "Kept."})
	exp := mcpexpose.New(app)
	exp.Tool(kept, nil)
	fail := execution.Fail(execution.Unavailable, "gone", nil)
	exp.Withdrawn("docs.kept", fail, nil)
	exp.Withdrawn("twice", fail, nil)
	exp.Withdrawn("twice", fail, nil)
	exp.Withdrawn("bad name!", fail, nil)
	exp.Withdrawn("nil.failure", nil, nil)
	exp.Withdrawn("bad.code", &execution.Failure{Code: execution.Code(200), Message: "?"}, nil)
	exp.Withdrawn("bad.details", execution.Fail(execution.Unavailable, "gone", map[string]any{"ch": make(chan int)}), nil)
	exp.Withdrawn("bad.scope", fail, &mcpexpose.WithdrawnOptions{Scopes: []string{"two words"}})
	_, err := exp.Compile()
	if err == nil {
		t.Fatal("Compile accepted the mistakes")
	}
	for _, want := range []string{
		`docs.kept: duplicate tool name`,
		`twice: duplicate tool name`,
		`invalid tool name "bad name!"`,
		`nil.failure: mcpexpose.Withdrawn: nil failure`,
		`bad.code: mcpexpose.Withdrawn: failure code 200 is not a canonical code`,
		`bad.details: mcpexpose.Withdrawn: the failure's details do not encode as JSON`,
		`bad.scope: invalid scope "two words"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in:\n%v", want, err)
		}
	}
	n := 0
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.HasPrefix(line, "mcpexpose/withdrawn_test.go:") {
			n++
		}
	}
	if n != 7 {
		t.Errorf("%d mistakes name this file's lines, want 7:\n%v", n, err)
	}
	exp.Withdrawn("late", fail, nil)
	if _, err := exp.Compile(); !errors.Is(err, mcpexpose.ErrFrozen) {
		t.Errorf("a withdrawn tool declared after Compile: %v, want ErrFrozen", err)
	}
}

// TestWithdrawnScopesAreCapabilityScopes: a scope is valid for a withdrawn
// tool exactly when it is valid for a capability.
func TestWithdrawnScopesAreCapabilityScopes(t *testing.T) {
	for _, sc := range []string{"users:read", "a", "x/y.z~!#$%&'()*+,-./:;<=>?@[]^_`{|}", "", " ", "two words", `quo"te`, `back\slash`, "tab\t", "é", "\x7f"} {
		app := agnara.New("scopes", nil)
		app.Capability(func(context.Context) error { return nil }, &agnara.CapabilityOptions{Name: "c", Description: "C.", Scopes: []string{sc}})
		_, capErr := mcpexpose.New(app).Compile()
		exp := mcpexpose.New(agnara.New("scopes", nil))
		exp.Withdrawn("w", execution.Fail(execution.Unavailable, "gone", nil), &mcpexpose.WithdrawnOptions{Scopes: []string{sc}})
		_, wErr := exp.Compile()
		if (capErr == nil) != (wErr == nil) {
			t.Errorf("scope %q: capability %v, withdrawn tool %v", sc, capErr, wErr)
		}
	}
}
