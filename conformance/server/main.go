// Command server is the fixture server for the official MCP conformance
// suite. It serves, through agnara-go's public API only, the fixture tools
// the suite's tool scenarios call, at /mcp, for both protocol eras.
//
//	go run ./conformance/server -addr 127.0.0.1:0
//
// It prints the URL it serves on its first line of output. Fixtures that need
// interaction (sampling, elicitation, input-required results) and the prompt,
// resource and completion scenarios do not apply yet; see
// conformance/baseline.yml and docs/CONFORMANCE.md.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string) error {
	h, err := newHandler(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shutdown) // waits for requests in flight
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// A 1×1 PNG and a tiny WAV file, as the suite's reference server sends.
var (
	png, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wav, _ = base64.StdEncoding.DecodeString("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
)

// schema2020 is the input schema the json-schema-2020-12 scenario expects to
// find published verbatim.
const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

// fixture is one tool of the suite's contract.
type fixture struct {
	name        string
	description string
	fn          any
	opts        agnara.CapabilityOptions
}

func fixtures() []fixture {
	text := func(s string) []execution.Content { return []execution.Content{execution.Text{Text: s}} }
	return []fixture{
		{"test_simple_text", "Returns a simple text response.", func() ([]execution.Content, error) {
			return text("This is a simple text response for testing."), nil
		}, agnara.CapabilityOptions{Annotations: agnara.ReadOnly}},
		{"test_image_content", "Returns an image.", func() ([]execution.Content, error) {
			return []execution.Content{execution.Image{Data: png, MIMEType: "image/png"}}, nil
		}, agnara.CapabilityOptions{}},
		{"test_audio_content", "Returns an audio clip.", func() ([]execution.Content, error) {
			return []execution.Content{execution.Audio{Data: wav, MIMEType: "audio/wav"}}, nil
		}, agnara.CapabilityOptions{}},
		{"test_embedded_resource", "Returns an embedded resource.", func() ([]execution.Content, error) {
			return []execution.Content{execution.Resource{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}, nil
		}, agnara.CapabilityOptions{}},
		{"test_multiple_content_types", "Returns text, an image and a resource.", func() ([]execution.Content, error) {
			return []execution.Content{
				execution.Text{Text: "Multiple content types test:"},
				execution.Image{Data: png, MIMEType: "image/png"},
				execution.Resource{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`},
			}, nil
		}, agnara.CapabilityOptions{}},
		{"test_error_handling", "Always fails, as a tool result.", func() error {
			return execution.Fail(execution.Conflict, "This tool intentionally returns an error for testing", nil)
		}, agnara.CapabilityOptions{}},
		{"test_tool_with_progress", "Reports progress three times.", func(ec *execution.Context) ([]execution.Content, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ec, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				ec.Progress(p, 100, fmt.Sprintf("Completed step %g of 100", p))
			}
			return text("progress complete"), nil
		}, agnara.CapabilityOptions{}},
		{"test_tool_with_logging", "Logs three messages.", func(ec *execution.Context) ([]execution.Content, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ec, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				ec.Logger().InfoContext(ec, msg)
			}
			return text("Tool with logging executed successfully"), nil
		}, agnara.CapabilityOptions{}},
		{"test_logging_tool", "Logs one message, which reaches only clients that asked for logs.", func(ec *execution.Context) ([]execution.Content, error) {
			ec.Logger().InfoContext(ec, "test_logging_tool executed")
			return text("Log attempted; the framework forwards it only at the level the client asked for."), nil
		}, agnara.CapabilityOptions{}},
		{"test_streaming_elicitation", "Returns at once, with no request to the client on the stream.", func() ([]execution.Content, error) {
			return text("stream observed: result frames only, no top-level requests"), nil
		}, agnara.CapabilityOptions{}},
		{"json_schema_2020_12_tool", "Takes arguments described by a JSON Schema 2020-12 document.", func(raw json.RawMessage) ([]execution.Content, error) {
			return text("arguments accepted: " + string(raw)), nil
		}, agnara.CapabilityOptions{InputSchema: json.RawMessage(schema2020)}},
	}
}

// newHandler builds the fixture application and its MCP handler.
func newHandler(logger *slog.Logger) (*mcpexpose.Handler, error) {
	app := agnara.New("conformance", &agnara.Options{Version: "1.0.0", Logger: logger})
	exp := mcpexpose.New(app)
	for _, f := range fixtures() {
		opts := f.opts
		opts.Name = f.name
		opts.Description = f.description
		exp.Tool(app.Capability(f.fn, &opts), &mcpexpose.ToolOptions{Name: f.name})
	}
	snap, err := exp.Compile()
	if err != nil {
		return nil, err
	}
	return mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
		Server: mcpexpose.ServerOptions{ForwardLogs: true, Logger: logger},
	})
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
