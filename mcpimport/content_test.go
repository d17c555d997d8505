package mcpimport_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
)

// media is a remote server whose tool "show" answers with the content
// blocks the test hands it, and whose tool "weather" has an output schema.
type media struct {
	server *mcp.Server
	blocks chan []mcp.Content
}

const weatherOutput = `{"type":"object","properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}},"required":["temperature","conditions"],"additionalProperties":false}`

func newMedia() *media {
	m := &media{blocks: make(chan []mcp.Content, 1)}
	m.server = mcp.NewServer(&mcp.Implementation{Name: "media", Version: "1"}, nil)
	m.server.AddTool(&mcp.Tool{Name: "show", Description: "Show things.", InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: <-m.blocks}, nil
		})
	m.server.AddTool(&mcp.Tool{Name: "weather", Description: "The weather.", InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`), OutputSchema: json.RawMessage(weatherOutput)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: text(`{"conditions":"Cloudy","temperature":33}`), StructuredContent: map[string]any{"temperature": 33, "conditions": "Cloudy"}}, nil
		})
	return m
}

func mediaBindings() map[string]mcpimport.Binding {
	return map[string]mcpimport.Binding{
		"show":    {Name: "show", Title: "Show", NoScopeValidator: true},
		"weather": {Name: "weather", Title: "Weather", NoScopeValidator: true},
	}
}

func size(n int64) *int64 { return &n }

var png = []byte("\x89PNG\r\n\x1a\n-a-tiny-image")

// TestEveryContentKindPassesThrough: text, image, audio, resource links and
// embedded resources, with their annotations, reach the caller of the
// imported tool as they left the remote; what a block carries beyond them
// (_meta, icons) does not.
func TestEveryContentKindPassesThrough(t *testing.T) {
	m := newMedia()
	cs, mon := connect(t, m.server, "2025-11-25")
	_, plans := imported(t, cs, mon, mediaBindings(), nil)
	ann := &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.7, LastModified: "2026-01-02T03:04:05Z"}
	m.blocks <- []mcp.Content{
		&mcp.TextContent{Text: "Here it is:", Annotations: ann, Meta: mcp.Meta{"vendor": "x"}},
		&mcp.ImageContent{Data: png, MIMEType: "image/png"},
		&mcp.AudioContent{Data: []byte("RIFF....WAVE"), MIMEType: "audio/wav", Annotations: &mcp.Annotations{Audience: []mcp.Role{"assistant", "user"}}},
		&mcp.ResourceLink{URI: "demo://resource/1", Name: "Resource 1", Title: "One", Description: "the first", MIMEType: "text/plain", Size: size(42), Icons: []mcp.Icon{{Source: "https://tracker.example/pixel.png"}}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://resource/2", MIMEType: "text/plain", Text: "embedded text"}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://resource/3", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}}, Annotations: &mcp.Annotations{Priority: 1}},
	}
	p, _ := plans.Lookup("gw.show")
	out, err := p.Invoke(context.Background(), &execution.Invocation{Principal: reader})
	if err != nil {
		t.Fatal(err)
	}
	succ, ok := out.(execution.Success)
	if !ok {
		t.Fatalf("outcome %+v", out)
	}
	want := []execution.Content{
		execution.Text{Text: "Here it is:", Annotations: &execution.ContentAnnotations{Audience: []string{"user"}, Priority: 0.7, LastModified: "2026-01-02T03:04:05Z"}},
		execution.Image{Data: png, MIMEType: "image/png"},
		execution.Audio{Data: []byte("RIFF....WAVE"), MIMEType: "audio/wav", Annotations: &execution.ContentAnnotations{Audience: []string{"assistant", "user"}}},
		execution.ResourceLink{URI: "demo://resource/1", Name: "Resource 1", Title: "One", Description: "the first", MIMEType: "text/plain", Size: size(42)},
		execution.Resource{URI: "demo://resource/2", MIMEType: "text/plain", Text: "embedded text"},
		execution.Resource{URI: "demo://resource/3", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2}, Annotations: &execution.ContentAnnotations{Priority: 1}},
	}
	if diff := cmp.Diff(want, succ.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if succ.Structured != nil {
		t.Errorf("structured %s from a tool without an output schema", succ.Structured)
	}
}

// TestMalformedContentIsRefused: a block that is not what it says fails
// the call closed, with a caller-safe failure.
func TestMalformedContentIsRefused(t *testing.T) {
	m := newMedia()
	cs, mon := connect(t, m.server, "2026-07-28")
	_, plans := imported(t, cs, mon, mediaBindings(), &mcpimport.Options{Limits: mcpimport.Limits{BlockBytes: 64}})
	for _, tc := range []struct {
		name  string
		block mcp.Content
		want  execution.Reason
	}{
		{"an image that says it is HTML", &mcp.ImageContent{Data: png, MIMEType: "text/html"}, mcpimport.ReasonResultInvalid},
		{"an image without a MIME type", &mcp.ImageContent{Data: png}, mcpimport.ReasonResultInvalid},
		{"audio typed as an image", &mcp.AudioContent{Data: png, MIMEType: "image/png"}, mcpimport.ReasonResultInvalid},
		{"a MIME type that is not one", &mcp.ImageContent{Data: png, MIMEType: "image"}, mcpimport.ReasonResultInvalid},
		{"a relative link", &mcp.ResourceLink{URI: "/etc/passwd", Name: "passwd"}, mcpimport.ReasonResultInvalid},
		{"a link without a name", &mcp.ResourceLink{URI: "file:///etc/passwd"}, mcpimport.ReasonResultInvalid},
		{"a link of negative size", &mcp.ResourceLink{URI: "file:///x", Name: "x", Size: size(-1)}, mcpimport.ReasonResultInvalid},
		{"a link with spaces", &mcp.ResourceLink{URI: "file:///a b", Name: "x"}, mcpimport.ReasonResultInvalid},
		{"a resource with text and blob", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://r", Text: "a", Blob: []byte("b")}}, mcpimport.ReasonResultInvalid},
		{"a resource without a URI", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{Text: "a"}}, mcpimport.ReasonResultInvalid},
		{"a priority past 1", &mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1.5}}, mcpimport.ReasonResultInvalid},
		{"an unknown audience", &mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Audience: []mcp.Role{"admin"}}}, mcpimport.ReasonResultInvalid},
		{"an audience twice", &mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Audience: []mcp.Role{"user", "user"}}}, mcpimport.ReasonResultInvalid},
		{"a date that is not one", &mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{LastModified: "yesterday"}}, mcpimport.ReasonResultInvalid},
		{"a block past the limit", &mcp.ImageContent{Data: []byte(strings.Repeat("x", 60)), MIMEType: "image/png"}, mcpimport.ReasonResultTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.blocks <- []mcp.Content{tc.block}
			_, err := call(t, plans, "show", `{}`)
			wantCode(t, err, tc.want)
		})
	}
}

// TestOneEnvelope: served again by mcpexpose, an imported tool publishes
// the remote output schema as its own and its structured content is the
// remote one, once, not wrapped in another envelope; a tool without an
// output schema publishes none (never an empty schema).
func TestOneEnvelope(t *testing.T) {
	m := newMedia()
	ucs, mon := connect(t, m.server, "2026-07-28")
	cat, err := mcpimport.Discover(context.Background(), newSession(t, ucs, mon, "media"), mediaBindings(), nil)
	if err != nil {
		t.Fatal(err)
	}
	app := agnara.New("gw", nil)
	exp := mcpexpose.New(app)
	for _, c := range cat.Register(app) {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	who := policy.NewPrincipal("alice", nil)
	srv := mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{DevelopmentPrincipal: &who}))
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs, _ := connect(t, srv, version)
			list, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			schemas := map[string]string{}
			for _, tool := range list.Tools {
				b, _ := json.Marshal(tool.OutputSchema)
				schemas[tool.Name] = string(b)
			}
			if diff := cmp.Diff(map[string]string{"gw.show": "null", "gw.weather": canonical(t, weatherOutput)}, schemas); diff != "" {
				t.Errorf("published output schemas (-want +got):\n%s", diff)
			}

			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gw.weather", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("weather: %v %+v", err, res)
			}
			b, _ := json.Marshal(res.StructuredContent)
			if string(b) != `{"conditions":"Cloudy","temperature":33}` {
				t.Errorf("structured content %s, want the remote's, unwrapped", b)
			}
			if len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != `{"conditions":"Cloudy","temperature":33}` {
				t.Errorf("content %+v, want the remote's text block", res.Content)
			}

			m.blocks <- []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png", Annotations: &mcp.Annotations{Priority: 0.5}},
				&mcp.ResourceLink{URI: "demo://resource/1", Name: "Resource 1", MIMEType: "text/plain"}}
			res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gw.show", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("show: %v %+v", err, res)
			}
			want := []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png", Annotations: &mcp.Annotations{Priority: 0.5}},
				&mcp.ResourceLink{URI: "demo://resource/1", Name: "Resource 1", MIMEType: "text/plain"}}
			if diff := cmp.Diff(want, res.Content); diff != "" {
				t.Errorf("content through the gateway (-want +got):\n%s", diff)
			}
			if res.StructuredContent != nil {
				t.Errorf("structured content %v from a tool without an output schema", res.StructuredContent)
			}
		})
	}
}
