package mcpexpose_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// forecastSchema is written with sorted keys, as a client re-encodes it.
const forecastSchema = `{"properties":{"temperature":{"type":"number"}},"required":["temperature"],"type":"object"}`

// TestResultToolsPublishTheirOwnSchema: a capability returning
// execution.Result publishes its declared output schema verbatim, and its
// structured value as structured content, unwrapped, validated against
// that schema; its content blocks go out with their annotations. Without a
// schema it publishes none, and structured content is refused.
func TestResultToolsPublishTheirOwnSchema(t *testing.T) {
	var next execution.Result
	app := agnara.New("w", nil)
	exp := mcpexpose.New(app)
	handler := func(context.Context) (execution.Result, error) { return next, nil }
	exp.Tool(app.Capability(handler, &agnara.CapabilityOptions{Name: "forecast", Description: "The forecast.", OutputSchema: json.RawMessage(forecastSchema)}), nil)
	exp.Tool(app.Capability(handler, &agnara.CapabilityOptions{Name: "show", Description: "Content only."}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	cs := inMemory(t, snap)
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool.OutputSchema)
		schemas[tool.Name] = string(b)
	}
	if diff := cmp.Diff(map[string]string{"w.forecast": forecastSchema, "w.show": "null"}, schemas); diff != "" {
		t.Errorf("output schemas (-want +got):\n%s", diff)
	}

	ann := &execution.ContentAnnotations{Audience: []string{"user"}, Priority: 0.25, LastModified: "2026-01-02T03:04:05Z"}
	blocks := []execution.Content{execution.Text{Text: "warm", Annotations: ann}, execution.ResourceLink{URI: "demo://r", Name: "r", Size: new(int64)}}
	for _, tc := range []struct {
		name, tool string
		result     execution.Result
		structured string // "" for none
		internal   bool
	}{
		{"structured, unwrapped", "w.forecast", execution.Result{Content: blocks, Structured: json.RawMessage(`{"temperature":21.5}`)}, `{"temperature":21.5}`, false},
		{"structured invalid", "w.forecast", execution.Result{Content: blocks, Structured: json.RawMessage(`{"temperature":"warm"}`)}, "", true},
		{"structured missing", "w.forecast", execution.Result{Content: blocks}, "", true},
		{"content only", "w.show", execution.Result{Content: blocks}, "", false},
		{"no blocks at all", "w.show", execution.Result{}, "", false},
		{"structured without a schema", "w.show", execution.Result{Content: blocks, Structured: json.RawMessage(`{"x":1}`)}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next = tc.result
			res, err := cs.CallTool(context.Background(), callParams(tc.tool, map[string]any{}))
			if err != nil {
				t.Fatal(err)
			}
			if tc.internal {
				if !res.IsError || !strings.Contains(textOf(t, res), "internal_failure") {
					t.Fatalf("result %+v, want internal_failure", res)
				}
				return
			}
			if res.IsError {
				t.Fatalf("result %s", textOf(t, res))
			}
			got := ""
			if res.StructuredContent != nil {
				b, _ := json.Marshal(res.StructuredContent)
				got = string(b)
			}
			if got != tc.structured {
				t.Errorf("structured content %s, want %s", got, tc.structured)
			}
			want := []mcp.Content{}
			if tc.result.Content != nil {
				want = []mcp.Content{&mcp.TextContent{Text: "warm", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.25, LastModified: "2026-01-02T03:04:05Z"}},
					&mcp.ResourceLink{URI: "demo://r", Name: "r", Size: new(int64)}}
			}
			if diff := cmp.Diff(want, res.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}
