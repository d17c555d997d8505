package mcpexpose_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// searchSpec is one tool of the scoped search catalog.
type searchSpec struct {
	name, title, desc string
	scopes            []string
}

// searchSpecs is a catalog whose tools need different scopes, with words
// shared between tools a caller may call and tools it may not.
var searchSpecs = []searchSpec{
	{"echo", "Echo", "Echo the text back.", nil},
	{"issues.create", "Create issue", "Create an issue in a repository.", []string{"issues:write"}},
	{"issues.list", "List issues", "List the open issues of a repository.", []string{"issues:read"}},
	{"issues.close", "Close issue", "Close an issue, with a comment.", []string{"issues:write"}},
	{"pages.publish", "Publish pages", "Publish the site's pages to production.", []string{"pages:admin"}},
	{"pages.preview", "", "Preview a page as Markdown.", nil},
	{"billing.refundPayment", "Refund", "Refund a customer's payment.", []string{"billing:admin"}},
	{"billing.get_invoice", "Invoice", "Look up an invoice by its number.", []string{"billing:read"}},
	{"weather.forecast", "Forecast", "Forecast the weather for a city.", nil},
	{"secrets.rotate", "Rotate secret", "Rotate a repository's deploy key.", []string{"secrets:admin", "issues:write"}},
	{"mail-send_bulk", "Bulk mail", "Send one mail to every customer.", []string{"mail:admin"}},
}

// heldName is the catalog's withdrawn tool, as a gateway declares a tool
// whose changed definition is held: its name's words appear nowhere else.
const heldName = "exfiltrate.dump_everything"

type searchIn struct {
	Note string `json:"note,omitempty"`
}

// searchCatalog compiles the catalog's tools that keep accepts, with their
// scopes unless unscoped, under application "cat", with a search whose
// Listed tool is echo.
func searchCatalog(t testing.TB, keep func(searchSpec) bool, unscoped bool, opts *agnara.Options) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("cat", opts)
	exp := mcpexpose.New(app)
	for _, s := range searchSpecs {
		if keep != nil && !keep(s) {
			continue
		}
		o := &agnara.CapabilityOptions{Name: strings.NewReplacer(".", "_", "-", "_").Replace(s.name), Title: s.title, Description: s.desc, Scopes: s.scopes}
		if unscoped {
			o.Scopes = nil
		}
		name := s.name
		exp.Tool(app.Capability(func(ctx context.Context, in searchIn) (string, error) {
			return "ran " + name, nil
		}, o), &mcpexpose.ToolOptions{Name: s.name})
	}
	exp.Withdrawn(heldName, execution.Fail(execution.Unavailable, "held for an operator", nil), nil)
	exp.Search(&mcpexpose.SearchOptions{Listed: []string{"echo"}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// scopeTokens verifies a bearer token that lists its scopes, '+'
// between them ("-" for none), for the subject "u:<token>".
func scopeTokens(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	var scopes []string
	if token != "-" {
		scopes = strings.Split(token, "+")
	}
	return &auth.TokenInfo{UserID: "u:" + token, Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
}

// searchQueries are every word of every tool's name, title and
// description (held tool's included), and odd queries.
func searchQueries() []string {
	seen := map[string]bool{}
	var qs []string
	add := func(q string) {
		if !seen[q] {
			seen[q] = true
			qs = append(qs, q)
		}
	}
	for _, s := range searchSpecs {
		add(s.name)
		for _, text := range []string{s.name, s.title, s.desc} {
			for _, w := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '.' || r == '_' || r == '-' || r == ',' }) {
				add(w)
			}
		}
	}
	add(heldName)
	add("exfiltrate")
	add("dump everything")
	for _, q := range []string{"", " ", "\t\n", "*", ".*", "^(a|b)+$", "[", "%", "issues:write", "ÉCHO", "日本語 の 天気", "🙂", "\u0000", "\\u0065cho",
		strings.Repeat("issue ", 166), strings.Repeat("z", 1000), strings.Repeat("é", 1000)} {
		add(q)
	}
	return qs
}

// callable reports whether a caller holding scopes may call s.
func callable(s searchSpec, scopes []string) bool {
	for _, sc := range s.scopes {
		if !slices.Contains(scopes, sc) {
			return false
		}
	}
	return true
}

// foundNames returns the names of the tools a search_tools result holds,
// failing the test when it is not one.
func foundNames(t testing.TB, res *mcp.CallToolResult) []string {
	t.Helper()
	if res.IsError {
		t.Fatalf("search failed: %s", textOf(t, res))
	}
	var got struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := json.Unmarshal([]byte(textOf(t, res)), &got); err != nil {
		t.Fatalf("search answered %s: %v", textOf(t, res), err)
	}
	var text any
	_ = json.Unmarshal([]byte(textOf(t, res)), &text)
	if !reflect.DeepEqual(res.StructuredContent, text) {
		t.Errorf("structured content %v differs from the text %s", res.StructuredContent, textOf(t, res))
	}
	names := make([]string, len(got.Tools))
	for i, tl := range got.Tools {
		names[i] = tl.Name
	}
	return names
}

// The must-show: a caller without a scope finds nothing it cannot call, by
// any query (every word of every tool, odd queries), at both eras, for
// callers with different scope sets; the held definition is never found;
// every tool a caller may call is found by its own name; and what a caller
// finds, in its order, is what it would find in a catalog of only the tools
// it may call (no tool it cannot see moves a result).
func TestSearchFindsOnlyWhatTheCallerMayCall(t *testing.T) {
	snap := searchCatalog(t, nil, false, nil)
	srv := serveSnap(t, snap, &mcpexpose.HandlerOptions{Tokens: scopeTokens})
	callers := [][]string{nil, {"issues:read"}, {"issues:write"}, {"issues:read", "issues:write", "secrets:admin"}, {"billing:read", "pages:admin"},
		{"issues:read", "issues:write", "pages:admin", "billing:admin", "billing:read", "secrets:admin", "mail:admin"}}
	queries := searchQueries()
	for _, scopes := range callers {
		token := strings.Join(scopes, "+")
		if token == "" {
			token = "-"
		}
		// The catalog of only what this caller may call, unscoped, seen
		// in memory by an anonymous caller.
		alone := connectInMemory(searchCatalog(t, func(s searchSpec) bool { return callable(s, scopes) }, true, nil))
		for _, version := range []string{"", "2025-11-25"} {
			t.Run(token+"/"+version, func(t *testing.T) {
				cs := connect(t, srv.URL+"/mcp", token, version, nil)
				may := map[string]bool{}
				for _, s := range searchSpecs {
					if callable(s, scopes) {
						may[s.name] = true
					}
				}
				list, err := cs.ListTools(t.Context(), nil)
				if err != nil {
					t.Fatal(err)
				}
				if got := toolNames(list.Tools); got != "search_tools,call_tool,echo" {
					t.Errorf("tools/list: %s", got)
				}
				foundSelf := map[string]bool{}
				for _, q := range queries {
					res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": q, "limit": 8}})
					if err != nil {
						t.Fatalf("query %q: %v", q, err)
					}
					if len(q) > 1000 && strings.Count(q, "") > 1001 {
						if !res.IsError {
							t.Errorf("a query of %d characters was searched", len(q))
						}
						continue
					}
					names := foundNames(t, res)
					for _, n := range names {
						if !may[n] {
							t.Errorf("query %q found %s, which the caller may not call", q, n)
						}
					}
					if slices.Contains(names, q) {
						foundSelf[q] = true
					}
					want, err := alone.CallTool(t.Context(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": q, "limit": 8}})
					if err != nil {
						t.Fatal(err)
					}
					if w := foundNames(t, want); !slices.Equal(names, w) {
						t.Errorf("query %q found %v; in a catalog of only what the caller may call: %v", q, names, w)
					}
				}
				for n := range may {
					if !foundSelf[n] {
						t.Errorf("%s, which the caller may call, is not found by its own name", n)
					}
				}
			})
		}
		alone.Close()
	}
}

// serveSnap serves snap's handler on loopback until the test ends.
func serveSnap(t testing.TB, snap *mcpexpose.Snapshot, opts *mcpexpose.HandlerOptions) *httptest.Server {
	t.Helper()
	return serve(t, &fixture{snap: snap}, opts)
}

// Search mistakes are Compile's, with the file:line of the declaration.
func TestSearchMistakes(t *testing.T) {
	cases := []struct {
		name string
		decl func(app *agnara.App, exp *mcpexpose.Exposure)
		want []string
	}{
		{"tool named search_tools", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Tool(app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "s", Description: "d"}), &mcpexpose.ToolOptions{Name: "search_tools"})
			exp.Search(nil)
		}, []string{`search_tools: the tool name "search_tools" is the search's`}},
		{"withdrawn named call_tool", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Withdrawn("call_tool", execution.Fail(execution.Unavailable, "x", nil), nil)
			exp.Search(nil)
		}, []string{`call_tool: the tool name "call_tool" is the search's`}},
		{"listed unknown", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Search(&mcpexpose.SearchOptions{Listed: []string{"nope"}})
		}, []string{`SearchOptions.Listed names "nope", which is no tool of the exposure`}},
		{"results too many", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Search(&mcpexpose.SearchOptions{Results: 51})
		}, []string{"SearchOptions.Results 51: want 1 to 50"}},
		{"results negative", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Search(&mcpexpose.SearchOptions{Results: -1})
		}, []string{"SearchOptions.Results -1: want 1 to 50"}},
		{"twice", func(app *agnara.App, exp *mcpexpose.Exposure) {
			exp.Search(nil)
			exp.Search(nil)
		}, []string{"mcpexpose.Search called twice (first at mcpexpose/search_test.go:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			app := agnara.New("m", nil)
			exp := mcpexpose.New(app)
			c.decl(app, exp)
			_, err := exp.Compile()
			if err == nil {
				t.Fatal("compiled")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) || !strings.Contains(err.Error(), "search_test.go:") {
					t.Errorf("error %q lacks %q and a file:line", err, w)
				}
			}
		})
	}
	app := agnara.New("m", nil)
	exp := mcpexpose.New(app)
	if _, err := exp.Compile(); err != nil {
		t.Fatal(err)
	}
	exp.Search(nil)
	if _, err := exp.Compile(); err == nil || !strings.Contains(err.Error(), "frozen") {
		t.Errorf("a search after Compile: %v", err)
	}
}

// The snapshot's review form shows the search, and nothing without one.
func TestSearchInSnapshotJSON(t *testing.T) {
	b, err := json.Marshal(searchCatalog(t, nil, false, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"search":{"listed":["echo"],"results":8}`) {
		t.Errorf("snapshot JSON: %s", b)
	}
	b, err = json.Marshal(newFixture(t).snap)
	if err != nil || strings.Contains(string(b), `"search"`) {
		t.Errorf("a snapshot without a search shows one (%v): %s", err, b)
	}
}

// A swap that turns the search on, the tools unchanged, tells the
// connected clients of both eras that their list changed, and their next
// tools/list holds the search tools.
func TestSwapToSearchTellsClients(t *testing.T) {
	snap := func(search bool) *mcpexpose.Snapshot {
		app := agnara.New("sw", nil)
		exp := mcpexpose.New(app)
		exp.Tool(app.Capability(func(ctx context.Context, in EchoIn) (string, error) { return in.Text, nil },
			&agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), nil)
		if search {
			exp.Search(nil)
		}
		s, err := exp.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	h, err := mcpexpose.NewHandler(snap(false), swappable(nil))
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	clients := map[string]*listener{"2026-07-28": listen(t, url, "", ""), "2025-11-25": listen(t, url, "", "2025-11-25")}
	for _, l := range clients {
		if _, err := l.cs.ListTools(t.Context(), nil); err != nil { // a session is told of the lists it has seen
			t.Fatal(err)
		}
	}
	if err := h.Swap(snap(true)); err != nil {
		t.Fatal(err)
	}
	for version, l := range clients {
		l.await(t, version)
		res, err := l.cs.ListTools(t.Context(), nil)
		if err != nil || toolNames(res.Tools) != "search_tools,call_tool" {
			t.Errorf("%s lists %v after the swap (%v)", version, res, err)
		}
	}
}
