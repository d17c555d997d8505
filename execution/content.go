package execution

import "encoding/json"

// Content is one block of rich content a handler can return instead of a
// structured value, by declaring []Content (or [Result]) as its result
// type. The set is closed: [Text], [Image], [Audio], [Resource] and
// [ResourceLink]. Adapters project each to their protocol's content blocks
// (for MCP, content blocks of the same names).
type Content interface {
	isContent()
}

var (
	_ Content = Text{}
	_ Content = Image{}
	_ Content = Audio{}
	_ Content = Resource{}
	_ Content = ResourceLink{}
)

// Text is a block of plain text.
type Text struct {
	Text        string
	Annotations *ContentAnnotations
}

// Image is an image, such as a PNG.
type Image struct {
	Data        []byte
	MIMEType    string
	Annotations *ContentAnnotations
}

// Audio is an audio clip, such as a WAV file.
type Audio struct {
	Data        []byte
	MIMEType    string
	Annotations *ContentAnnotations
}

// Resource is a resource embedded in the result: its URI and either its text
// or its binary contents (Blob).
type Resource struct {
	URI         string
	MIMEType    string
	Text        string
	Blob        []byte
	Annotations *ContentAnnotations
}

// ResourceLink points at a resource the caller may fetch on its own.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Size is the resource's size in bytes, when known.
	Size        *int64
	Annotations *ContentAnnotations
}

// ContentAnnotations tell a client how to use a content block: who it is
// for, how much it matters, when it last changed. Like a capability's
// annotations they are hints, and authorize nothing. A nil
// *ContentAnnotations declares none.
type ContentAnnotations struct {
	// Audience lists who the block is meant for: "user", "assistant", or
	// both. Empty: no preference.
	Audience []string
	// Priority is how important the block is, from 0 (entirely optional)
	// to 1 (required). Zero is also "not said": MCP omits it.
	Priority float64
	// LastModified is when the content last changed, as an ISO 8601
	// (RFC 3339) timestamp, or empty.
	LastModified string
}

func (Text) isContent()         {}
func (Image) isContent()        {}
func (Audio) isContent()        {}
func (Resource) isContent()     {}
func (ResourceLink) isContent() {}

// Result is the result type of a capability that answers with content
// blocks and, beside them, a structured value described by a JSON Schema
// the capability brings itself (CapabilityOptions.OutputSchema): a tool
// imported from another MCP server, whose output schema is the remote
// one. Exposures publish that schema verbatim and send Structured as it
// is, with no envelope around it, after validating it against the
// schema; without an output schema, Structured must be nil.
//
// A Result is a plain value; the adapter does not modify it.
type Result struct {
	// Content are the blocks, in order. Nil means none.
	Content []Content
	// Structured is the structured value, as JSON, or nil for none. With
	// an output schema it is required.
	Structured json.RawMessage
}
