package execution

// Content is one block of rich content a handler can return instead of a
// structured value, by declaring []Content as its result type. The set is
// closed: [Text], [Image], [Audio], [Resource] and [ResourceLink]. Adapters
// project each to their protocol's content blocks (for MCP, content blocks of
// the same names).
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
	Text string
}

// Image is an image, such as a PNG.
type Image struct {
	Data     []byte
	MIMEType string
}

// Audio is an audio clip, such as a WAV file.
type Audio struct {
	Data     []byte
	MIMEType string
}

// Resource is a resource embedded in the result: its URI and either its text
// or its binary contents (Blob).
type Resource struct {
	URI      string
	MIMEType string
	Text     string
	Blob     []byte
}

// ResourceLink points at a resource the caller may fetch on its own.
type ResourceLink struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

func (Text) isContent()         {}
func (Image) isContent()        {}
func (Audio) isContent()        {}
func (Resource) isContent()     {}
func (ResourceLink) isContent() {}
