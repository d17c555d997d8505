package mcpexpose_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestProjectFailureReason(t *testing.T) {
	tests := []struct {
		name string
		f    *execution.Failure
		want string
	}{
		{"no reason", execution.Fail(execution.Conflict, "busy", nil), `{"code":"conflict","message":"busy"}`},
		{"reason", execution.Fail(execution.Timeout, "late", nil).WithReason("mcp_timeout"), `{"code":"timeout","message":"late","reason":"mcp_timeout"}`},
		{"reason and details", execution.Fail(execution.Conflict, "busy", map[string]any{"id": "a"}).WithReason("approval_in_progress"),
			`{"code":"conflict","details":{"id":"a"},"message":"busy","reason":"approval_in_progress"}`},
		{"reason with details that do not encode", execution.Fail(execution.Conflict, "busy", map[string]any{"c": make(chan int)}).WithReason("x_y"),
			`{"code":"conflict","message":"busy","reason":"x_y"}`},
		{"internal failure says nothing more", &execution.Failure{Code: execution.InternalFailure, Reason: "db_down", Message: "secret"}, `{"code":"internal_failure","message":"internal failure"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := mcpexpose.ProjectResult(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; !res.IsError || got != tt.want {
				t.Errorf("projection = %s, want %s", got, tt.want)
			}
		})
	}
}

// nested returns n levels of arrays (or objects) around leaf; a nil leaf
// leaves the innermost container empty.
func nested(n int, object bool, leaf any) any {
	v := leaf
	for i := range n {
		switch {
		case object && v == nil:
			v = map[string]any{}
		case object:
			v = map[string]any{"k": v}
		case v == nil && i == 0:
			v = []any{}
		default:
			v = []any{v}
		}
	}
	return v
}

func TestProjectionDepthBoundary(t *testing.T) {
	type node struct {
		Next *node `json:"next,omitempty"`
	}
	chain := func(n int) *node { // n levels of objects
		var head *node
		for range n {
			head = &node{Next: head}
		}
		return head
	}
	tests := []struct {
		name  string
		value any
		ok    bool
	}{
		{"scalar", "leaf", true},
		{"128 empty arrays", nested(128, false, nil), true},
		{"129 empty arrays", nested(129, false, nil), false},
		{"128 arrays around a scalar", nested(128, false, "leaf"), true},
		{"129 arrays around a scalar", nested(129, false, "leaf"), false},
		{"128 objects, innermost empty", nested(128, true, nil), true},
		{"129 objects, innermost empty", nested(129, true, nil), false},
		{"128 objects around a scalar", nested(128, true, 1), true},
		{"129 objects around a scalar", nested(129, true, 1), false},
		{"128 levels of Go structs", chain(128), true},
		{"129 levels of Go structs", chain(129), false},
		{"129 levels beside a shallow sibling", []any{1, nested(128, true, nil)}, false},
		{"wide and shallow", []any{nested(127, false, nil), nested(127, true, nil), "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := mcpexpose.ProjectResult(execution.Success{Value: tt.value})
			if tt.ok && (err != nil || res.IsError) {
				t.Fatalf("ProjectResult = %+v, %v; want a result", res, err)
			}
			if !tt.ok && (err == nil || !strings.Contains(err.Error(), "deeper than 128")) {
				t.Fatalf("ProjectResult = %+v, %v; want the depth error", res, err)
			}
		})
	}
}

type textKey struct{ a, b int }

func (k textKey) MarshalText() ([]byte, error) { return []byte(strconv.Itoa(k.a + k.b)), nil }

type named string

type keyedByText struct{ m map[textKey]int }

// MarshalJSON makes keyedByText encode itself: what it holds is its own
// business.
func (k keyedByText) MarshalJSON() ([]byte, error) { return []byte(`{"k":1}`), nil }

func TestProjectionRefusesNonStringKeys(t *testing.T) {
	type withMap struct {
		Counts map[int]string `json:"counts"`
	}
	type hidden struct {
		Skipped map[int]string `json:"-"`
		private map[int]string
		Name    string `json:"name"`
	}
	type embedded struct{ withMap }
	tests := []struct {
		name  string
		value any
		want  string // the text, or "" for refused
	}{
		{"string keys", map[string]int{"a": 1}, `{"result":{"a":1}}`},
		{"named string keys", map[named]int{"a": 1}, `{"result":{"a":1}}`},
		{"int keys", map[int]string{1: "a"}, ""},
		{"uint keys", map[uint8]bool{1: true}, ""},
		{"nil map with int keys", map[int]string(nil), ""},
		{"TextMarshaler keys of a struct kind", map[textKey]int{{1, 2}: 1, {2, 1}: 2}, ""},
		{"in a struct field", withMap{Counts: map[int]string{1: "a"}}, ""},
		{"in an embedded struct", embedded{withMap{Counts: map[int]string{}}}, ""},
		{"behind a pointer", &withMap{Counts: map[int]string{1: "a"}}, ""},
		{"in a slice", []map[int]bool{{1: true}}, ""},
		{"in an interface inside a map", map[string]any{"x": []any{map[int]int{1: 1}}}, ""},
		{"a field json skips", hidden{Skipped: map[int]string{1: "a"}, private: map[int]string{1: "a"}, Name: "n"}, `{"result":{"name":"n"}}`},
		{"a json.Marshaler", keyedByText{m: map[textKey]int{{1, 2}: 1}}, `{"result":{"k":1}}`},
		{"a nil pointer", (*withMap)(nil), `{"result":null}`},
		{"decoded JSON", map[string]any{"a": []any{map[string]any{"b": 1}}}, `{"result":{"a":[{"b":1}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for range 2 { // the second time from the per-type cache
				res, err := mcpexpose.ProjectResult(execution.Success{Value: tt.value})
				if tt.want == "" {
					if err == nil || !strings.Contains(err.Error(), "keys (object keys must be strings)") {
						t.Fatalf("ProjectResult = %+v, %v; want the map keys error", res, err)
					}
					continue
				}
				if err != nil || res.Content[0].(*mcp.TextContent).Text != tt.want {
					t.Fatalf("ProjectResult = %+v, %v; want %s", res, err, tt.want)
				}
			}
		})
	}
	// Failure details that hold such a map degrade as other unencodable
	// details do.
	res, err := mcpexpose.ProjectResult(execution.Fail(execution.Conflict, "taken", map[string]any{"ids": map[int]bool{1: true}}))
	if err != nil || res.Content[0].(*mcp.TextContent).Text != `{"code":"conflict","message":"taken"}` {
		t.Errorf("failure with int-keyed details = %+v, %v", res, err)
	}
}
