package agnaratest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OutcomeOf reads a tool result as the canonical outcome mcpexpose
// projected it from (see [mcpexpose.ProjectResult]):
//
//   - isError with one text block holding {"code", "reason", "message",
//     "details"}: an *execution.Failure;
//   - structuredContent {"result": value}: an execution.Success whose Value
//     is the value's JSON, as a json.RawMessage (nil when it is null);
//   - content blocks only: an execution.Success with Content.
//
// Anything else, an input-required result among them, is an error.
func OutcomeOf(res *mcp.CallToolResult) (execution.Outcome, error) {
	switch {
	case res == nil:
		return nil, fmt.Errorf("%w: no result", errNotCanonical)
	case res.NeedsInput():
		return nil, fmt.Errorf("%w: input is still required after the client's answers", errNotCanonical)
	case res.IsError:
		return failureOf(res)
	case res.StructuredContent != nil:
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, err
		}
		var env map[string]json.RawMessage
		if err := json.Unmarshal(b, &env); err != nil || len(env) != 1 || env["result"] == nil {
			return nil, fmt.Errorf("%w: structuredContent %s is not {\"result\": value}", errNotCanonical, b)
		}
		if v := env["result"]; !bytes.Equal(v, []byte("null")) {
			return execution.Success{Value: v}, nil
		}
		return execution.Success{}, nil
	}
	content := make([]execution.Content, 0, len(res.Content))
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			content = append(content, execution.Text{Text: c.Text})
		case *mcp.ImageContent:
			content = append(content, execution.Image{Data: c.Data, MIMEType: c.MIMEType})
		case *mcp.AudioContent:
			content = append(content, execution.Audio{Data: c.Data, MIMEType: c.MIMEType})
		case *mcp.EmbeddedResource:
			r := c.Resource
			if r == nil {
				return nil, fmt.Errorf("%w: an embedded resource without contents", errNotCanonical)
			}
			content = append(content, execution.Resource{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob})
		case *mcp.ResourceLink:
			content = append(content, execution.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType})
		default:
			return nil, fmt.Errorf("%w: content block %T", errNotCanonical, c)
		}
	}
	return execution.Success{Content: content}, nil
}

// failureOf decodes a failure's one text block, strictly: a field agnara
// does not project is an error, not ignored.
func failureOf(res *mcp.CallToolResult) (*execution.Failure, error) {
	text, ok := (*mcp.TextContent)(nil), len(res.Content) == 1
	if ok {
		text, ok = res.Content[0].(*mcp.TextContent)
	}
	if !ok {
		return nil, fmt.Errorf("%w: an error result without exactly one text block", errNotCanonical)
	}
	var f struct {
		Code    *execution.Code  `json:"code"`
		Reason  execution.Reason `json:"reason"`
		Message string           `json:"message"`
		Details map[string]any   `json:"details"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text.Text)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || f.Code == nil {
		return nil, fmt.Errorf("%w: error text %q is not a canonical failure", errNotCanonical, text.Text)
	}
	return &execution.Failure{Code: *f.Code, Reason: f.Reason, Message: f.Message, Details: f.Details}, nil
}

// decodeValue decodes s's value into v; nil v ignores it.
func decodeValue(s execution.Success, v any) error {
	if v == nil {
		return nil
	}
	raw, _ := s.Value.(json.RawMessage)
	if raw == nil {
		if s.Content != nil {
			return fmt.Errorf("the success has content blocks, no value: %s", describe(s))
		}
		raw = json.RawMessage("null")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decoding the value %s into %T: %w", raw, v, err)
	}
	return nil
}

// describe says what an outcome is, for a test failure's message.
func describe(out execution.Outcome) string {
	switch o := out.(type) {
	case execution.Success:
		if o.Content != nil {
			return fmt.Sprintf("success with %d content blocks", len(o.Content))
		}
		if raw, ok := o.Value.(json.RawMessage); ok {
			return "success " + string(raw)
		}
		return "success"
	case *execution.Failure:
		b, _ := json.Marshal(o.Details)
		return fmt.Sprintf("failure %v (reason %q): %s, details %s", o.Code, o.Reason, o.Message, b)
	}
	return fmt.Sprintf("%T", out)
}
