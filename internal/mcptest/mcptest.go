// Package mcptest builds raw 2026-07-28 MCP requests and reads their
// responses, for tests that must see the wire itself (status codes,
// challenges, error bodies) rather than what an SDK client makes of it.
package mcptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

// Meta is the request _meta a 2026-07-28 client sends, with the given
// client capabilities.
func Meta(capabilities map[string]any) map[string]any {
	if capabilities == nil {
		capabilities = map[string]any{}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcpversion.Modern,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "mcptest", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": capabilities,
	}
}

// Request builds a 2026-07-28 JSON-RPC POST of method with params (which
// should carry "_meta"), with the protocol's headers and, when token is not
// empty, a bearer token.
func Request(t testing.TB, url, method string, params map[string]any, token string) *http.Request {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpversion.Modern)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// Do sends req and returns the response (its body read and closed), the
// body, and the JSON-RPC response message in it (from a JSON body or an
// event stream), or nil when there is none.
func Do(t testing.TB, req *http.Request) (*http.Response, []byte, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	data := Message(resp.Header.Get("Content-Type"), body)
	var msg map[string]any
	if json.Unmarshal(data, &msg) != nil {
		msg = nil
	}
	return resp, body, msg
}

// Message returns the JSON-RPC response in body: the body itself, or, for
// an event stream, the data of the event carrying an id.
func Message(contentType string, body []byte) []byte {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return body
	}
	var data []byte
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, len(body)+1) // an event may be as long as the body
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
			data = []byte(d)
		}
	}
	return data
}
