package mcpimport

import (
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzResultContent feeds arbitrary tools/call results (as the SDK decodes
// them from the wire) to the projection into execution results, for a tool
// with an output schema and one without: whatever passes is within the
// limits, well-formed, and its structured content valid against the
// output schema (and absent without one).
func FuzzResultContent(f *testing.F) {
	// The seed corpus is in testdata/fuzz/FuzzResultContent.
	limits, _ := Limits{ObjectBytes: 4096, ContentBlocks: 8, BlockBytes: 2048, ResultBytes: 8192}.resolve()
	c := &Catalog{limits: limits}
	def := &mcp.Tool{
		InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}},"required":["count","tags"],"additionalProperties":false}`),
	}
	b := Binding{Name: "t", Title: "T", NoScopeValidator: true}
	withSchema, errs := newTool(c, b.selection("t"), def, limits)
	if len(errs) > 0 {
		f.Fatal(errs)
	}
	def.OutputSchema = nil
	without, errs := newTool(c, b.selection("u"), def, limits)
	if len(errs) > 0 {
		f.Fatal(errs)
	}

	f.Fuzz(func(t *testing.T, wire []byte) {
		var res mcp.CallToolResult
		if json.Unmarshal(wire, &res) != nil {
			return
		}
		for _, tl := range []*tool{withSchema, without} {
			out, code := tl.project(&res)
			if code != "" {
				if out.Content != nil || out.Structured != nil {
					t.Fatalf("code %s with output %+v", code, out)
				}
				if _, ok := callFailures[code]; !ok {
					t.Fatalf("unknown code %q", code)
				}
				continue
			}
			if res.IsError {
				t.Fatal("an isError result was passed on")
			}
			if len(out.Content) != len(res.Content) || len(out.Content) > limits.ContentBlocks {
				t.Fatalf("%d blocks from %d content blocks", len(out.Content), len(res.Content))
			}
			total := len(out.Structured)
			for _, block := range out.Content {
				size := blockSize(t, block)
				if size > limits.BlockBytes {
					t.Fatalf("a block of %d bytes passed a %d-byte limit", size, limits.BlockBytes)
				}
				total += size
			}
			if total > limits.ResultBytes {
				t.Fatalf("a result of %d bytes passed a %d-byte limit", total, limits.ResultBytes)
			}
			if tl == without && out.Structured != nil {
				t.Fatalf("structured %s without an output schema", out.Structured)
			}
			if tl == withSchema {
				if len(out.Structured) > limits.ObjectBytes {
					t.Fatalf("structured content of %d bytes passed a %d-byte limit", len(out.Structured), limits.ObjectBytes)
				}
				v, err := schemacheck.Parse(out.Structured)
				if err != nil {
					t.Fatal(err)
				}
				if err := withSchema.output.Validate(v); err != nil {
					t.Fatalf("structured %s does not match the output schema: %v", out.Structured, err)
				}
			}
		}
	})
}

// blockSize checks a block passed on and returns its size as the limits
// count it.
func blockSize(t *testing.T, block execution.Content) int {
	t.Helper()
	switch b := block.(type) {
	case execution.Text:
		return len(b.Text)
	case execution.Image:
		if !wellFormedType(b.MIMEType, "image") {
			t.Fatalf("image with MIME type %q", b.MIMEType)
		}
		return len(b.Data) + len(b.MIMEType)
	case execution.Audio:
		if !wellFormedType(b.MIMEType, "audio") {
			t.Fatalf("audio with MIME type %q", b.MIMEType)
		}
		return len(b.Data) + len(b.MIMEType)
	case execution.ResourceLink:
		if !absoluteURI(b.URI) || b.Name == "" {
			t.Fatalf("resource link %+v", b)
		}
		return len(b.URI) + len(b.Name) + len(b.Title) + len(b.Description) + len(b.MIMEType)
	case execution.Resource:
		if !absoluteURI(b.URI) || (b.Text != "" && b.Blob != nil) {
			t.Fatalf("embedded resource %+v", b)
		}
		return len(b.URI) + len(b.MIMEType) + len(b.Text) + len(b.Blob)
	}
	t.Fatalf("block %T", block)
	return 0
}
