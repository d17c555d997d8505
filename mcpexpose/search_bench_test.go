package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// catalogFile is the 12-server, 121-tool catalog the gateway's search
// figures are measured on (docs/gateway.md, "Search"): our own definitions
// of what such servers offer.
const catalogFile = "../gateway/testdata/catalog.json"

// catalogTools reads the catalog: every tool's wire name (server.tool),
// title, description and input schema.
func catalogTools(t testing.TB) []struct {
	name, title, desc string
	schema            json.RawMessage
} {
	t.Helper()
	data, err := os.ReadFile(catalogFile)
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
	var out []struct {
		name, title, desc string
		schema            json.RawMessage
	}
	for _, s := range cat.Servers {
		for _, tl := range s.Tools {
			out = append(out, struct {
				name, title, desc string
				schema            json.RawMessage
			}{s.Name + "_" + tl.Name, tl.Title, tl.Description, tl.InputSchema})
		}
	}
	return out
}

// catalogSnapshot exposes the catalog's tools as raw capabilities that
// answer "ok", with a search when searched.
func catalogSnapshot(t testing.TB, searched bool) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("gateway", nil)
	exp := mcpexpose.New(app)
	ok := func(context.Context, json.RawMessage) (string, error) { return "ok", nil }
	for _, tl := range catalogTools(t) {
		exp.Tool(app.Capability(ok, &agnara.CapabilityOptions{Name: tl.name, Title: tl.title, Description: tl.desc, InputSchema: tl.schema}), nil)
	}
	if searched {
		exp.Search(nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// searchQuery is a typical search: what a model asks for.
const searchQuery = "create an issue in a repository"

// benchBodies are the 2026-07-28 requests the benchmark sends, by name.
func benchBodies() map[string]struct{ method, name, body string } {
	return map[string]struct{ method, name, body string }{
		"tools_list":   {"tools/list", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + diffMeta + `}}`},
		"search_tools": {"tools/call", "search_tools", callBody("1", "search_tools", `{"query":"`+searchQuery+`"}`, diffMeta)},
		"direct_call":  {"tools/call", "gateway.code_create_issue", callBody("1", "gateway.code_create_issue", `{"repo":"o/r","title":"t"}`, diffMeta)},
		"call_tool":    {"tools/call", "call_tool", viaCall("1", "gateway.code_create_issue", `{"repo":"o/r","title":"t"}`, "")},
	}
}

// BenchmarkSearch measures, through the HTTP handler in process at
// 2026-07-28, a tools/list of the 121-tool catalog listed in full and
// with a search, one search_tools call, and a tool called directly and
// through call_tool: the search's cost per call beside a plain
// tools/list's. docs/gateway.md ("Search") reports it as ratios.
func BenchmarkSearch(b *testing.B) {
	bodies := benchBodies()
	for _, bc := range []struct {
		name     string
		searched bool
		request  string
	}{
		{"tools_list/listed", false, "tools_list"},
		{"tools_list/searched", true, "tools_list"},
		{"search_tools", true, "search_tools"},
		{"tools_call/direct", true, "direct_call"},
		{"tools_call/call_tool", true, "call_tool"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h, err := mcpexpose.NewHandler(catalogSnapshot(b, bc.searched), nil)
			if err != nil {
				b.Fatal(err)
			}
			r := bodies[bc.request]
			header := baseHeader(r.method, r.name)
			body := []byte(r.body)
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
				req.Header = header
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != 200 || strings.Contains(rec.Body.String(), `"isError":true`) {
					b.Fatal(rec.Code, rec.Body.String())
				}
			}
		})
	}
}
