package hotspots

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The two protocol versions the HTTP reproduction compares: the first has
// standard headers (Mcp-Method, Mcp-Name, Mcp-Param-*) and the per-request
// `_meta` triple, the second has neither.
const (
	modernVersion = "2026-07-28"
	legacyVersion = "2025-11-25"
)

// httpSchemaProps are the input-schema sizes of the HTTP reproduction.
var httpSchemaProps = []int{1, 30, 300}

// newSchemaServer starts a stateless streamable HTTP server on 127.0.0.1
// with one raw tool "t" whose input schema has props string properties and
// which returns a fixed result without reading its arguments.
func newSchemaServer(tb testing.TB, props int) *httptest.Server {
	tb.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "t", InputSchema: schemaWith(props)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(h)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	tb.Cleanup(ts.Close)
	return ts
}

// callBody is a tools/call of "t" with one small argument. At 2026-07-28 it
// carries the `_meta` triple a conforming client sends on every request.
func callBody(version string) []byte {
	meta := ""
	if version >= modernVersion {
		meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `",` +
			`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},` +
			`"io.modelcontextprotocol/clientCapabilities":{}},`
	}
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + meta + `"name":"t","arguments":{"p0":"x"}}}`)
}

// postCall sends one tools/call and returns the status and the whole body.
func postCall(client *http.Client, url, version string, body []byte) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "t")
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// BenchmarkHTTPSchemaPerCall posts raw tools/call requests over a
// keep-alive connection to a stateless streamable HTTP server, for a tool
// whose input schema has 1, 30 or 300 properties, at 2026-07-28 and at
// 2025-11-25. The request and the tool's result are the same in every case.
//
// At 2026-07-28 the transport validates the standard headers of each POST
// (validateMcpHeaders → validateParamHeaders → extractParamHeaderAnnotations):
// it re-marshals the tool's input schema and unmarshals it into a tree of
// properties to look for x-mcp-header annotations, so CPU and bytes per
// call grow with the schema. At 2025-11-25 that validation is skipped and
// the cost stays flat. Numbers include the client side (same process).
func BenchmarkHTTPSchemaPerCall(b *testing.B) {
	for _, version := range []string{modernVersion, legacyVersion} {
		for _, props := range httpSchemaProps {
			b.Run(fmt.Sprintf("%s/props=%d", version, props), func(b *testing.B) {
				ts := newSchemaServer(b, props)
				client := ts.Client()
				body := callBody(version)
				b.ReportAllocs()
				for b.Loop() {
					status, data, err := postCall(client, ts.URL, version, body)
					if err != nil {
						b.Fatal(err)
					}
					if status != http.StatusOK {
						b.Fatalf("status %d: %s", status, data)
					}
				}
			})
		}
	}
}

// TestHTTPSchemaCall checks that the HTTP reproduction's request succeeds at
// both versions and every schema size: the server answers 200 with the
// tool's result, not an error.
func TestHTTPSchemaCall(t *testing.T) {
	for _, version := range []string{modernVersion, legacyVersion} {
		for _, props := range httpSchemaProps {
			ts := newSchemaServer(t, props)
			status, data, err := postCall(ts.Client(), ts.URL, version, callBody(version))
			if err != nil {
				t.Fatalf("%s/props=%d: %v", version, props, err)
			}
			if status != http.StatusOK || !strings.Contains(string(data), `"text":"ok"`) || strings.Contains(string(data), `"error"`) {
				t.Errorf("%s/props=%d: status %d, body %s", version, props, status, data)
			}
		}
	}
}
