package mcpexpose_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/mcpexpose"
)

// TestCheckedResultsAreNotValidatedAgain: the structured value of a
// capability that validates its own results (registry.CheckedResult, as
// mcpimport registers imported tools) is published without being parsed
// and validated against the output schema again (ADR 81): a value that
// breaks the schema, which such a capability never returns, goes out as
// it is, where the same function registered plainly is refused. A missing
// structured value is refused either way.
func TestCheckedResultsAreNotValidatedAgain(t *testing.T) {
	var next execution.Result
	handler := func(*execution.Context, json.RawMessage) (execution.Result, error) { return next, nil }
	app := agnara.New("w", nil)
	exp := mcpexpose.New(app)
	opts := func(name string) *agnara.CapabilityOptions {
		return &agnara.CapabilityOptions{Name: name, Description: "The forecast.", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: json.RawMessage(forecastSchema)}
	}
	exp.Tool(app.Capability(registry.CheckedResult(handler), opts("checked")), nil)
	exp.Tool(app.Capability(handler, opts("plain")), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	cs := inMemory(t, snap)
	blocks := []execution.Content{execution.Text{Text: "warm"}}
	for _, tc := range []struct {
		tool       string
		result     execution.Result
		structured string // "" for refused with internal_failure
	}{
		{"w.checked", execution.Result{Content: blocks, Structured: json.RawMessage(`{"temperature":"warm"}`)}, `{"temperature":"warm"}`},
		{"w.plain", execution.Result{Content: blocks, Structured: json.RawMessage(`{"temperature":"warm"}`)}, ""},
		{"w.checked", execution.Result{Content: blocks, Structured: json.RawMessage(`{"temperature":21.5}`)}, `{"temperature":21.5}`},
		{"w.plain", execution.Result{Content: blocks, Structured: json.RawMessage(`{"temperature":21.5}`)}, `{"temperature":21.5}`},
		{"w.checked", execution.Result{Content: blocks}, ""},
		{"w.plain", execution.Result{Content: blocks}, ""},
	} {
		next = tc.result
		res, err := cs.CallTool(context.Background(), callParams(tc.tool, map[string]any{}))
		if err != nil {
			t.Fatal(err)
		}
		if tc.structured == "" {
			if !res.IsError || !strings.Contains(textOf(t, res), "internal_failure") {
				t.Errorf("%s with %s: result %+v, want internal_failure", tc.tool, tc.result.Structured, res)
			}
			continue
		}
		b, _ := json.Marshal(res.StructuredContent)
		if res.IsError || string(b) != tc.structured {
			t.Errorf("%s with %s: error %v, structured content %s; want %s", tc.tool, tc.result.Structured, res.IsError, b, tc.structured)
		}
	}
}
