package mcpexpose_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// nextLine returns "file.go:N" for the line after the caller's.
func nextLine() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line+1)
}

func TestCompileReportsEveryMistake(t *testing.T) {
	app := agnara.New("app", nil)
	other := agnara.New("other", nil)
	described := &agnara.CapabilityOptions{Name: "ok", Description: "Fine."}
	ok := app.Capability(func() error { return nil }, described)
	bare := app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "bare"})
	foreign := other.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "x", Description: "d"})
	exp := mcpexpose.New(app)
	exp.Tool(ok, nil)
	badName := nextLine()
	exp.Tool(ok, &mcpexpose.ToolOptions{Name: "has space"})
	dup := nextLine()
	exp.Tool(ok, nil)
	noDesc := nextLine()
	exp.Tool(bare, nil)
	foreignSite := nextLine()
	exp.Tool(foreign, nil)
	nilSite := nextLine()
	exp.Tool(nil, nil)
	_, err := exp.Compile()
	if err == nil {
		t.Fatal("Compile succeeded")
	}
	for _, want := range []string{
		badName + `: has space: invalid tool name "has space"`,
		dup + ": app.ok: duplicate tool name (first declared at ",
		noDesc + ": app.bare: a tool needs a description",
		foreignSite + `: other.x: capability other.x belongs to application "other", not "app"`,
		nilSite + ": mcpexpose.Tool: nil capability",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

func TestCompileIsIdempotentAndFreezes(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "a", Description: "A."})
	exp := mcpexpose.New(app)
	exp.Tool(c, nil)
	s1, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := exp.Compile()
	if err != nil || s1 != s2 {
		t.Fatalf("second Compile = %p, %v; want the same snapshot %p", s2, err, s1)
	}
	late := nextLine()
	exp.Tool(c, &mcpexpose.ToolOptions{Name: "again"})
	if _, err := exp.Compile(); !errors.Is(err, mcpexpose.ErrFrozen) || !strings.Contains(err.Error(), late) {
		t.Errorf("Compile after a late tool = %v, want ErrFrozen at %s", err, late)
	}
	if got := s1.Names(); len(got) != 1 || got[0] != "app.a" {
		t.Errorf("snapshot changed: %v", got)
	}
}

func TestCompileReportsApplicationMistakes(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func(chan int) error { return nil }, &agnara.CapabilityOptions{Name: "a", Description: "A."})
	exp := mcpexpose.New(app)
	exp.Tool(c, nil)
	if _, err := exp.Compile(); err == nil || !strings.Contains(err.Error(), "app.a: parameter 1 (chan int): no provider") {
		t.Errorf("Compile = %v, want the application's own mistake", err)
	}
}

func TestProjectionIsDetached(t *testing.T) {
	f := newFixture(t)
	tools := f.snap.Tools()
	if got := toolNames(tools); got != "fx.echo,ledger.append,fx.fail,fx.slow,fx.render" {
		t.Fatalf("order = %s", got)
	}
	echo := tools[0]
	if echo.Title != "Echo" || echo.Description != "Echo the text back." || !echo.Annotations.ReadOnlyHint || *echo.Annotations.DestructiveHint || !echo.Annotations.IdempotentHint || *echo.Annotations.OpenWorldHint {
		t.Errorf("echo = %+v %+v", echo, echo.Annotations)
	}
	if tools[1].Annotations != nil {
		t.Errorf("undeclared annotations were published: %+v", tools[1].Annotations)
	}
	wantOut := `{"type":"object","properties":{"result":{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer"}},"required":["text","count"],"additionalProperties":false}},"required":["result"],"additionalProperties":false}`
	if got := string(echo.OutputSchema.(json.RawMessage)); got != wantOut {
		t.Errorf("output schema = %s", got)
	}
	if tools[4].OutputSchema != nil {
		t.Errorf("content tool has an output schema: %s", tools[4].OutputSchema)
	}
	if got := string(tools[2].OutputSchema.(json.RawMessage)); !strings.Contains(got, `"result":{"type":"null"}`) {
		t.Errorf("error-only tool output schema = %s", got)
	}
	// Mutate everything reachable; nothing changes later projections or
	// the plan.
	echo.Name, echo.Description = "x", "x"
	echo.InputSchema.(json.RawMessage)[0] = 'X'
	echo.OutputSchema.(json.RawMessage)[0] = 'X'
	echo.Annotations.ReadOnlyHint = false
	*echo.Annotations.DestructiveHint = true
	again, err := f.snap.Tool("fx.echo")
	if err != nil {
		t.Fatal(err)
	}
	if again.Name != "fx.echo" || again.InputSchema.(json.RawMessage)[0] != '{' || again.OutputSchema.(json.RawMessage)[0] != '{' || !again.Annotations.ReadOnlyHint || *again.Annotations.DestructiveHint {
		t.Errorf("a mutation leaked into the snapshot: %+v", again)
	}
	p, _ := f.snap.Plan("fx.echo")
	if p.InputSchema()[0] != '{' {
		t.Error("a mutation leaked into the plan")
	}
	if _, err := f.snap.Tool("nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("Tool(nope) = %v, want an error naming it", err)
	}
	if diff := cmp.Diff([]string{"ledger:write"}, f.snap.Scopes()); diff != "" {
		t.Error(diff)
	}
}

func TestProjectResult(t *testing.T) {
	type pair struct {
		B string `json:"b"`
		A int    `json:"a"`
	}
	deep := any("leaf")
	for range 130 {
		deep = []any{deep}
	}
	tests := []struct {
		name       string
		out        execution.Outcome
		wantText   string
		isError    bool
		structured bool
		wantErr    bool
	}{
		{"value, keys sorted", execution.Success{Value: pair{B: "x", A: 1}}, `{"result":{"a":1,"b":"x"}}`, false, true, false},
		{"null stays null", execution.Success{}, `{"result":null}`, false, true, false},
		{"no HTML escaping", execution.Success{Value: "<a&b>"}, `{"result":"<a&b>"}`, false, true, false},
		{"failure", execution.Fail(execution.Conflict, "taken", map[string]any{"z": 1, "a": []int{2}}), `{"code":"conflict","details":{"a":[2],"z":1},"message":"taken"}`, true, false, false},
		{"failure without details", execution.Fail(execution.Forbidden, "no", nil), `{"code":"forbidden","message":"no"}`, true, false, false},
		{"internal failure is redacted", &execution.Failure{Code: execution.InternalFailure, Message: "db password=x", Details: map[string]any{"k": "v"}}, `{"code":"internal_failure","message":"internal failure"}`, true, false, false},
		{"unencodable details degrade", execution.Fail(execution.Conflict, "taken", map[string]any{"f": func() {}}), `{"code":"conflict","message":"taken"}`, true, false, false},
		{"NaN", execution.Success{Value: math.NaN()}, "", false, false, true},
		{"too deep", execution.Success{Value: deep}, "", false, false, true},
		{"unsupported type", execution.Success{Value: make(chan int)}, "", false, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := mcpexpose.ProjectResult(tt.out)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ProjectResult = %+v, want an error", res)
				}
				if strings.Contains(err.Error(), "leaf") {
					t.Errorf("error %q reveals the value", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := textOf(t, res); got != tt.wantText || res.IsError != tt.isError || (res.StructuredContent != nil) != tt.structured {
				t.Errorf("result = %q isError=%v structured=%v", got, res.IsError, res.StructuredContent != nil)
			}
			if tt.structured {
				b, _ := res.StructuredContent.(json.RawMessage)
				if string(b) != tt.wantText {
					t.Errorf("structuredContent = %s, want %s", b, tt.wantText)
				}
			}
		})
	}
}

func TestOutputIsValidatedBeforeItIsSent(t *testing.T) {
	// A value that does not match the published schema (here: a map value
	// whose dynamic type the schema did not foresee) is an internal failure.
	app := agnara.New("app", nil)
	c := app.Capability(func(context.Context) (map[string]any, error) {
		return map[string]any{"ok": true}, nil
	}, &agnara.CapabilityOptions{Name: "m", Description: "M."})
	bad := app.Capability(func(context.Context) (Counted, error) {
		return Counted{N: -7331}, nil
	}, &agnara.CapabilityOptions{Name: "bad", Description: "Violates its own schema."})
	exp := mcpexpose.New(app)
	exp.Tool(c, nil)
	exp.Tool(bad, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))})).Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), callParams("app.m", nil))
	if err != nil || res.IsError {
		t.Fatalf("m = %+v, %v", res, err)
	}
	res, err = cs.CallTool(context.Background(), callParams("app.bad", nil))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || textOf(t, res) != `{"code":"internal_failure","message":"internal failure"}` {
		t.Errorf("bad = %q, want a redacted internal failure", textOf(t, res))
	}
	if !strings.Contains(logs.String(), "at /result/n") || strings.Contains(logs.String(), "7331") {
		t.Errorf("the log should name where the value broke its schema, not the value: %s", logs.String())
	}
}

// Counted's schema says N is at least 0; a handler returning a negative N breaks its
// own contract.
type Counted struct {
	N int `json:"n" jsonschema:"minimum=0"`
}

func TestListIsPublicWhenNoToolDeclaresScopes(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "a", Description: "A."})
	exp := mcpexpose.New(app)
	exp.Tool(c, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	l, err := inMemory(t, snap).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.TTLMs != 0 || l.CacheScope != "public" || toolNames(l.Tools) != "app.a" {
		t.Errorf("list = ttl %d scope %q tools %s; want 0, public, app.a", l.TTLMs, l.CacheScope, toolNames(l.Tools))
	}
}
