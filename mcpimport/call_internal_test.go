package mcpimport

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agnara-go/agnara/approval"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestInputRequiredIsNoResult: a result that asks for input is relayed as
// questions before anything is projected (questions.go); one that reaches
// the projection anyway is never passed on as a result, with or without an
// output schema.
func TestInputRequiredIsNoResult(t *testing.T) {
	limits, _ := Limits{}.resolve()
	c := &Catalog{limits: limits}
	def := &mcp.Tool{
		InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"],"additionalProperties":false}`),
	}
	b := Binding{Name: "t", Title: "T", NoScopeValidator: true}
	withSchema, errs := newTool(c, b.selection("t"), def, limits)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	def.OutputSchema = nil
	without, errs := newTool(c, b.selection("u"), def, limits)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	for _, wire := range []string{
		`{"resultType":"input_required","inputRequests":{"r1":{"method":"elicitation/create","params":{"message":"Which one?","requestedSchema":{"type":"object","properties":{}}}}}}`,
		`{"resultType":"input_required","inputRequests":{}}`,
	} {
		var res mcp.CallToolResult
		if err := json.Unmarshal([]byte(wire), &res); err != nil {
			t.Fatal(err)
		}
		if !res.NeedsInput() {
			t.Fatalf("%s: the SDK does not report NeedsInput", wire)
		}
		for _, tl := range []*tool{withSchema, without} {
			if out, code := tl.project(&res); code != ReasonProtocolError {
				t.Errorf("%s (output schema %v): %+v %q, want %s", wire, tl.output != nil, out, code, ReasonProtocolError)
			}
		}
	}
}

// TestApprovalDescriptionIsStorable: the description an approval records
// holds no NUL and no invalid UTF-8, and a long one is cut at a character
// boundary within approval.MaxDescription.
func TestApprovalDescriptionIsStorable(t *testing.T) {
	long := strings.Repeat("a", approval.MaxDescription-1) + "é" // é straddles the bound
	for _, tc := range []struct{ in, want string }{
		{"Updates a document.", "Updates a document."},
		{"a\x00b", "ab"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{long, strings.Repeat("a", approval.MaxDescription-1)},
	} {
		got := approvalDescription(tc.in)
		if got != tc.want || len(got) > approval.MaxDescription || !utf8.ValidString(got) {
			t.Errorf("approvalDescription(%.20q…) = %.20q… (%d bytes), want %.20q… (%d bytes)", tc.in, got, len(got), tc.want, len(tc.want))
		}
	}
}
