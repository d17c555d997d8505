package mcpexpose

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResultDepth bounds the nesting of a structured result.
const maxResultDepth = 128

// errProjection is what a caller learns when a result cannot be projected;
// the details go to the server log.
var errProjection = errors.New("mcpexpose: result cannot be projected")

// ProjectResult converts a canonical outcome into a tool result. It is the
// only place outcomes become MCP results:
//
//   - Success with a value: structuredContent {"result": value}, and the same
//     JSON (compact, object keys sorted) in one text block; a nil value stays
//     null inside the envelope.
//   - Success with content: the content blocks, no structuredContent.
//   - Failure: isError true and one text block holding the JSON object
//     {"code", "reason", "message", "details"} (reason omitted when the
//     failure has none, details when empty). An internal failure carries
//     only its code and fixed message.
//
// A value that cannot be encoded as JSON (non-finite numbers, cycles,
// unsupported types) or nests deeper than 128 levels is an error whose
// message reveals nothing about the value.
func ProjectResult(out execution.Outcome) (*mcp.CallToolResult, error) {
	switch o := out.(type) {
	case execution.Success:
		if o.Content != nil {
			return &mcp.CallToolResult{Content: projectContent(o.Content)}, nil
		}
		env, _, err := encodeEnvelope(o.Value)
		if err != nil {
			return nil, err
		}
		return successResult(env), nil
	case *execution.Failure:
		return failureResult(o), nil
	}
	return nil, fmt.Errorf("mcpexpose: unknown outcome %T", out)
}

func successResult(env []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(env)}},
		StructuredContent: json.RawMessage(env),
	}
}

func failureResult(f *execution.Failure) *mcp.CallToolResult {
	if f.Code == execution.InternalFailure {
		f = execution.Fail(execution.InternalFailure, "", nil)
	}
	body := map[string]any{"code": f.Code, "message": f.Message}
	if f.Reason != "" {
		body["reason"] = f.Reason
	}
	if len(f.Details) > 0 {
		body["details"] = f.Details
	}
	text, err := encodeSorted(body)
	if err != nil {
		// Details an application supplied that do not encode: say less.
		delete(body, "details")
		text, _ = encodeSorted(body)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, IsError: true}
}

// encodeSorted encodes v compactly with object keys sorted at every level.
func encodeSorted(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	doc, err := schemacheck.Parse(raw)
	if err != nil {
		return nil, err
	}
	return marshalCompact(doc)
}

func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// encodeEnvelope encodes {"result": value} compactly with sorted keys, and
// returns the decoded envelope for validation.
func encodeEnvelope(value any) ([]byte, any, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errProjection, err)
	}
	v, err := schemacheck.Parse(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errProjection, err)
	}
	if depth(v, 0) > maxResultDepth {
		return nil, nil, fmt.Errorf("%w: nested deeper than %d levels", errProjection, maxResultDepth)
	}
	env := map[string]any{"result": v}
	b, err := marshalCompact(env)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errProjection, err)
	}
	return b, env, nil
}

func depth(v any, d int) int {
	if d > maxResultDepth {
		return d
	}
	max := d
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			if n := depth(e, d+1); n > max {
				max = n
			}
		}
	case []any:
		for _, e := range v {
			if n := depth(e, d+1); n > max {
				max = n
			}
		}
	}
	return max
}

// projectContent converts protocol-neutral content to MCP content blocks.
func projectContent(cs []execution.Content) []mcp.Content {
	out := make([]mcp.Content, 0, len(cs))
	for _, c := range cs {
		switch c := c.(type) {
		case execution.Text:
			out = append(out, &mcp.TextContent{Text: c.Text})
		case execution.Image:
			out = append(out, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
		case execution.Audio:
			out = append(out, &mcp.AudioContent{Data: c.Data, MIMEType: c.MIMEType})
		case execution.Resource:
			out = append(out, &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text, Blob: c.Blob}})
		case execution.ResourceLink:
			out = append(out, &mcp.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType})
		}
	}
	return out
}
