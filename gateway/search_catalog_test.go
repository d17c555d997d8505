package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// catalogUpstreams serves testdata/catalog.json, our own definitions of
// what 12 typical MCP servers offer (121 tools), as 12 in-process Go SDK
// servers over loopback HTTP, each bound whole.
func catalogUpstreams(t *testing.T) []gateway.Upstream {
	t.Helper()
	data, err := os.ReadFile("testdata/catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var cat struct {
		Servers []struct {
			Name  string
			Tools []struct {
				Name, Title, Description string
				InputSchema              json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(data, &cat); err != nil {
		t.Fatal(err)
	}
	var ups []gateway.Upstream
	for _, s := range cat.Servers {
		srv := mcp.NewServer(&mcp.Implementation{Name: s.Name, Version: "1"}, nil)
		up := gateway.Upstream{Name: s.Name, Prefix: s.Name + "_"}
		for _, tl := range s.Tools {
			srv.AddTool(&mcp.Tool{Name: tl.Name, Title: tl.Title, Description: tl.Description, InputSchema: tl.InputSchema},
				func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				})
			up.Tools = append(up.Tools, gateway.Tool{Remote: tl.Name, Title: tl.Title, ConcurrencySafe: true})
		}
		up.HTTP = &gateway.HTTPUpstream{URL: sdkUpstream(t, srv)}
		ups = append(ups, up)
	}
	return ups
}

// catalogQuery is a typical search: what a model asks for.
const catalogQuery = "create an issue in a repository"

// TestSearchCatalogFigures measures what a caller receives from a gateway
// of 12 upstreams and 121 tools at 2026-07-28, listed in full and with a
// search: the bytes of the tools/list answer, and of a typical
// search_tools answer (8 definitions at most). Run with -v for the figures
// docs/gateway.md ("Search") reports; it requires the searched list and a
// search together to be a small part of the full list.
func TestSearchCatalogFigures(t *testing.T) {
	ups := catalogUpstreams(t)
	size := func(url, method string, params map[string]any) (int, map[string]any) {
		t.Helper()
		params["_meta"] = mcptest.Meta(nil)
		resp, body, msg := mcptest.Do(t, mcptest.Request(t, url, method, params, ""))
		if msg == nil || msg["result"] == nil {
			t.Fatalf("%s answered %d %s", method, resp.StatusCode, body)
		}
		return len(mcptest.Message(resp.Header.Get("Content-Type"), body)), msg["result"].(map[string]any)
	}
	_, listedURL, _ := started(t, gateway.Config{Upstreams: ups}, nil)
	full, res := size(listedURL, "tools/list", map[string]any{})
	if n := len(res["tools"].([]any)); n != 121 {
		t.Fatalf("the gateway lists %d tools, want 121", n)
	}
	_, searchedURL, _ := started(t, gateway.Config{Upstreams: ups, Search: &gateway.Search{}}, nil)
	list, res := size(searchedURL, "tools/list", map[string]any{})
	if n := len(res["tools"].([]any)); n != 2 {
		t.Fatalf("the searched gateway lists %d tools, want 2", n)
	}
	found, res := size(searchedURL, "tools/call", map[string]any{"name": "search_tools", "arguments": map[string]any{"query": catalogQuery}})
	tools := res["structuredContent"].(map[string]any)["tools"].([]any)
	if first := tools[0].(map[string]any)["name"]; first != "gateway.code_create_issue" {
		t.Errorf("%q found %v first", catalogQuery, first)
	}
	defs, _ := json.Marshal(tools)
	few, _ := size(searchedURL, "tools/call", map[string]any{"name": "search_tools", "arguments": map[string]any{"query": catalogQuery, "limit": 3}})
	t.Logf("tools/list, 121 tools listed:          %6d bytes", full)
	t.Logf("tools/list, searched (2 tools):        %6d bytes", list)
	t.Logf("search_tools %q, %d found: %6d bytes", catalogQuery, len(tools), found)
	t.Logf("  of which the definitions, once:      %6d bytes (the answer carries them as text and as structured content)", len(defs))
	t.Logf("search_tools, limit 3:                 %6d bytes", few)
	t.Logf("searched list + one search:            %6d bytes (%.1f%% of the full list)", list+found, 100*float64(list+found)/float64(full))
	if list+found > full/4 {
		t.Errorf("the searched list and a search take %d bytes, the full list %d: want at most a quarter", list+found, full)
	}
}
