package mcpimport

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A remote result becomes the execution.Result of the imported call: every
// content block the MCP tools/call result may hold (text, image, audio,
// resource link, embedded resource), each with its annotations, and the
// structured content when the tool advertises an output schema, which is
// then the local tool's output schema as well (ADR 40). Each block is
// checked before it is passed on: its size against the limits, its MIME
// type well-formed (an image's an image/*, an audio clip's an audio/*),
// its URI absolute, its annotations within the protocol's ranges. What a
// block carries beyond those fields (_meta, a link's icons) is not passed
// on: nothing downstream could tell a remote's vendor data from ours.

// maxMIMEType bounds a MIME type (RFC 6838: 127 characters each side of
// the slash).
const maxMIMEType = 255

// project turns a remote result into the result of the local call, or names
// why it cannot.
func (t *tool) project(res *mcp.CallToolResult) (execution.Result, execution.Reason) {
	limits := t.cat.limits
	switch {
	case res == nil:
		return execution.Result{}, ReasonProtocolError
	case res.NeedsInput():
		return execution.Result{}, ReasonProtocolError // questions are relayed before a result is projected (questions.go)
	case isTaskAnswer(res):
		return execution.Result{}, ReasonProtocolError // a task nobody asked for, or a task inside a task
	case res.IsError:
		return execution.Result{}, ReasonToolError
	case len(res.Content) > limits.ContentBlocks:
		return execution.Result{}, ReasonResultTooLarge
	}
	out := execution.Result{Content: make([]execution.Content, 0, len(res.Content))}
	total := 0
	for _, c := range res.Content {
		block, size, code := contentOf(c, limits)
		if code != "" {
			return execution.Result{}, code
		}
		if total += size; total > limits.ResultBytes {
			return execution.Result{}, ReasonResultTooLarge
		}
		out.Content = append(out.Content, block)
	}
	if t.output != nil {
		if res.StructuredContent == nil {
			return execution.Result{}, ReasonResultInvalid // text, however JSON-like, is no substitute
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return execution.Result{}, ReasonResultInvalid
		}
		if len(b) > limits.ObjectBytes || total+len(b) > limits.ResultBytes {
			return execution.Result{}, ReasonResultTooLarge
		}
		v, err := documentOf(res.StructuredContent, b)
		if err != nil || t.output.Validate(v) != nil {
			return execution.Result{}, ReasonResultInvalid
		}
		out.Structured = b
	}
	// Without an output schema, structured content is not passed on:
	// nothing published describes it, and nothing validated it.
	return out, ""
}

// contentOf checks one remote content block and returns it as execution
// content, with its size as counted against the limits.
func contentOf(c mcp.Content, limits Limits) (execution.Content, int, execution.Reason) {
	var (
		block execution.Content
		size  int
		ann   *mcp.Annotations
		ok    = true
	)
	switch c := c.(type) {
	case *mcp.TextContent:
		size, ann = len(c.Text), c.Annotations
		block = execution.Text{Text: c.Text}
	case *mcp.ImageContent:
		size, ann = len(c.Data)+len(c.MIMEType), c.Annotations
		ok = wellFormedType(c.MIMEType, "image")
		block = execution.Image{Data: c.Data, MIMEType: c.MIMEType}
	case *mcp.AudioContent:
		size, ann = len(c.Data)+len(c.MIMEType), c.Annotations
		ok = wellFormedType(c.MIMEType, "audio")
		block = execution.Audio{Data: c.Data, MIMEType: c.MIMEType}
	case *mcp.ResourceLink:
		size, ann = len(c.URI)+len(c.Name)+len(c.Title)+len(c.Description)+len(c.MIMEType), c.Annotations
		ok = absoluteURI(c.URI) && c.Name != "" && (c.MIMEType == "" || wellFormedType(c.MIMEType, "")) && (c.Size == nil || *c.Size >= 0)
		block = execution.ResourceLink{URI: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MIMEType: c.MIMEType, Size: c.Size}
	case *mcp.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return nil, 0, ReasonResultInvalid
		}
		size, ann = len(r.URI)+len(r.MIMEType)+len(r.Text)+len(r.Blob), c.Annotations
		ok = absoluteURI(r.URI) && (r.MIMEType == "" || wellFormedType(r.MIMEType, "")) && (r.Text == "" || r.Blob == nil)
		block = execution.Resource{URI: r.URI, MIMEType: r.MIMEType, Text: r.Text, Blob: r.Blob}
	default:
		return nil, 0, ReasonResultUnsupported // the SDK decodes no other kind into a tool result
	}
	if size > limits.BlockBytes {
		return nil, 0, ReasonResultTooLarge
	}
	a, annOK := annotationsOf(ann)
	if !ok || !annOK {
		return nil, 0, ReasonResultInvalid
	}
	if a != nil {
		block = annotated(block, a)
	}
	return block, size, ""
}

// annotated returns block with its annotations set.
func annotated(block execution.Content, a *execution.ContentAnnotations) execution.Content {
	switch b := block.(type) {
	case execution.Text:
		b.Annotations = a
		return b
	case execution.Image:
		b.Annotations = a
		return b
	case execution.Audio:
		b.Annotations = a
		return b
	case execution.ResourceLink:
		b.Annotations = a
		return b
	case execution.Resource:
		b.Annotations = a
		return b
	}
	return block
}

// annotationsOf checks a block's annotations: the audience is "user" and
// "assistant" at most once each, the priority within 0..1, the last
// modification an RFC 3339 timestamp.
func annotationsOf(a *mcp.Annotations) (*execution.ContentAnnotations, bool) {
	if a == nil {
		return nil, true
	}
	out := &execution.ContentAnnotations{Priority: a.Priority, LastModified: a.LastModified}
	for _, r := range a.Audience {
		if (r != "user" && r != "assistant") || slices.Contains(out.Audience, string(r)) {
			return nil, false
		}
		out.Audience = append(out.Audience, string(r))
	}
	if a.Priority < 0 || a.Priority > 1 {
		return nil, false
	}
	if a.LastModified != "" {
		if _, err := time.Parse(time.RFC3339Nano, a.LastModified); err != nil {
			return nil, false
		}
	}
	return out, true
}

// wellFormedType reports whether s is a well-formed MIME type (type/subtype,
// with parameters if any, see mediaType) whose type is top, when top is
// not empty.
func wellFormedType(s, top string) bool {
	if s == "" || len(s) > maxMIMEType {
		return false
	}
	mt, ok := mediaType(s)
	return ok && (top == "" || strings.HasPrefix(mt, top+"/"))
}

// absoluteURI reports whether s is an absolute URI: a scheme, then
// anything url.Parse accepts (no control characters, no spaces).
func absoluteURI(s string) bool {
	if s == "" || strings.ContainsAny(s, " \t\r\n") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}
