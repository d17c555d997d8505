package mcpimport

import (
	"encoding/json"
	"testing"

	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzResultEnvelope feeds arbitrary tools/call results (as the SDK decodes
// them from the wire) to the projection into envelopes, for a tool with an
// output schema and one without.
func FuzzResultEnvelope(f *testing.F) {
	// The seed corpus is in testdata/fuzz/FuzzResultEnvelope.
	limits, _ := Limits{ObjectBytes: 4096, ContentBlocks: 8}.resolve()
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
	envelopeCheck, err := schemacheck.Compile(withSchema.outSchema)
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, wire []byte) {
		var res mcp.CallToolResult
		if json.Unmarshal(wire, &res) != nil {
			return
		}
		for _, tl := range []*tool{withSchema, without} {
			out, code := tl.project(&res)
			if code != "" {
				if out != nil {
					t.Fatalf("code %s with output %s", code, out)
				}
				if _, ok := callFailures[code]; !ok {
					t.Fatalf("unknown code %q", code)
				}
				continue
			}
			if len(out) > limits.ObjectBytes {
				t.Fatalf("envelope of %d bytes passed a %d-byte limit", len(out), limits.ObjectBytes)
			}
			if res.IsError {
				t.Fatal("an isError result became an envelope")
			}
			var env Envelope
			if err := json.Unmarshal(out, &env); err != nil || env.Text == nil {
				t.Fatalf("envelope %s: %v", out, err)
			}
			if len(env.Text) != len(res.Content) {
				t.Fatalf("%d text blocks from %d content blocks", len(env.Text), len(res.Content))
			}
			if tl == without && string(env.Structured) != "null" {
				t.Fatalf("structured %s without an output schema", env.Structured)
			}
			if tl == withSchema {
				v, err := schemacheck.Parse(out)
				if err != nil {
					t.Fatal(err)
				}
				if err := envelopeCheck.Validate(v); err != nil {
					t.Fatalf("envelope %s does not match the published output schema: %v", out, err)
				}
			}
		}
	})
}
