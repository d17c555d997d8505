package mcpexpose

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFinishedCopiesEveryField holds sdkFinished, which copies a tool
// result field by field to give it a result type, to the fields of the
// SDK's result: a field an SDK upgrade adds would be dropped from every
// answer on the SDK's route, and this fails first.
func TestFinishedCopiesEveryField(t *testing.T) {
	var fields []string
	rt := reflect.TypeFor[mcp.CallToolResult]()
	for i := range rt.NumField() {
		fields = append(fields, rt.Field(i).Name)
	}
	want := []string{"Meta", "Content", "StructuredContent", "IsError", "InputRequests", "RequestState", "resultType", "err"}
	if !slices.Equal(fields, want) {
		t.Fatalf("mcp.CallToolResult has the fields %v; sdkFinished copies %v: copy the new ones", fields, want)
	}
	for _, c := range []struct {
		r    mcp.CallToolResult
		want string
	}{{completeResult, `"resultType":"complete"`}, {inputRequiredResult, `"resultType":"input_required"`}} {
		b, err := c.r.MarshalJSON()
		if err != nil || !strings.Contains(string(b), c.want) {
			t.Errorf("the result sdkFinished copies its type from encodes as %s (%v), want %s", b, err, c.want)
		}
	}
	// Every exported field set survives, and the result type is the one
	// the SDK would give (NeedsInput reads it).
	in := &mcp.CallToolResult{Meta: mcp.Meta{"k": "v"}, Content: []mcp.Content{&mcp.TextContent{Text: "t"}}, StructuredContent: map[string]any{"a": 1.0}, IsError: true, RequestState: "s"}
	out := sdkFinished(&mcp.CallToolRequest{}, in).(*mcp.CallToolResult)
	if !reflect.DeepEqual(out.Meta, in.Meta) || !reflect.DeepEqual(out.Content, in.Content) || !reflect.DeepEqual(out.StructuredContent, in.StructuredContent) || !out.IsError || out.RequestState != "s" || out.NeedsInput() {
		t.Errorf("finished %+v from %+v", out, in)
	}
	asks := &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "?"}}, RequestState: "s"}
	if out := sdkFinished(&mcp.CallToolRequest{}, asks).(*mcp.CallToolResult); !out.NeedsInput() || out.Content != nil || out.InputRequests == nil {
		t.Errorf("an input-required result finished as %+v", out)
	}
}
