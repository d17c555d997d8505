package mcptest

import (
	"bytes"
	"io"
	"net/http"
)

// Misanswering is the HTTP transport of an MCP client that does not check
// its own answers against the form it was asked: in every request body,
// an answer's content From is sent as To. The Go SDK's client checks its
// answers, so a test's elicitation handler answers what fits and the wire
// says otherwise. From and To are JSON objects as encoding/json writes
// them.
type Misanswering struct{ From, To string }

// RoundTrip sends req with its answers rewritten.
func (m Misanswering) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Method != http.MethodPost {
		return http.DefaultTransport.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	body = bytes.ReplaceAll(body, []byte(`"content":`+m.From), []byte(`"content":`+m.To))
	out := req.Clone(req.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return http.DefaultTransport.RoundTrip(out)
}
