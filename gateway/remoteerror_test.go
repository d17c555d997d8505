package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agnara-go/agnara/gateway"
)

// TestUpstreamToolErrorReachesTheLogNotTheCaller: an upstream tool that
// fails saying why ("path outside allowed directories", as the filesystem
// server does) answers the gateway's caller with the fixed failure only,
// and the gateway's log gets the upstream's words at warn, on one line,
// with the upstream and the tool named.
func TestUpstreamToolErrorReachesTheLogNotTheCaller(t *testing.T) {
	upstream := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	upstream.AddTool(&mcp.Tool{Name: "read_file", Description: "Reads a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
				Text: "Error: Access denied - path outside allowed directories: /etc/passwd not in /srv\nlevel=ERROR msg=forged"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, nil))
	t.Cleanup(srv.Close)
	_, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "files", Prefix: "fs_", HTTP: &gateway.HTTPUpstream{URL: srv.URL},
		Tools: []gateway.Tool{standard("read_file", "", "Read a file", "files:read")},
	}}}, nil)

	for _, protocol := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(protocol, func(t *testing.T) {
			cs := connect(t, url, protocol)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.fs_read_file", Arguments: map[string]any{"path": "/etc/passwd"}})
			if err != nil {
				t.Fatal(err)
			}
			answer, _ := json.Marshal(res)
			if !res.IsError || !strings.Contains(string(answer), "the remote tool reported an error") {
				t.Errorf("the caller's answer %s: want the fixed failure", answer)
			}
			if strings.Contains(string(answer), "allowed directories") || strings.Contains(string(answer), "forged") {
				t.Errorf("the caller's answer holds the upstream's words: %s", answer)
			}
		})
	}
	want := regexp.MustCompile(`(?m)^time=\S+ level=WARN msg="mcpimport: remote tool failed" server=files tool=read_file reason=mcp_tool_error ` +
		`remote_error="Error: Access denied - path outside allowed directories: /etc/passwd not in /srv\\\\nlevel=ERROR msg=forged"$`)
	if n := len(want.FindAllString(log.String(), -1)); n != 2 {
		t.Errorf("the gateway's log has %d warn records of the upstream's words, want one per call (2):\n%s", n, log)
	}
	if strings.Contains(log.String(), "\nlevel=ERROR msg=forged") {
		t.Errorf("the upstream's text forged a record of the gateway's log:\n%s", log)
	}
}
