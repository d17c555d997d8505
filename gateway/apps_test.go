package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	viewURI   = "ui://viewer/index.html"
	otherView = "ui://viewer/v2.html"
	firstPage = "<!doctype html>\n<html><body>\n<p id=\"x\">héllo</p>\n<script>window.parent.postMessage({jsonrpc:\"2.0\"}, \"*\")</script>\n</body></html>\n"
)

// viewUpstream is an SDK server listing "show", which links a view the
// test changes at will, and "plain", which links none.
type viewUpstream struct {
	s *mcp.Server

	mu     sync.Mutex
	linked bool   // show links uri
	uri    string // the view's URI
	html   string
	csp    []any // connectDomains
	border bool
}

func newViewUpstream(t *testing.T, linked bool) (*viewUpstream, string) {
	t.Helper()
	v := &viewUpstream{s: mcp.NewServer(&mcp.Implementation{Name: "viewer", Version: "1"}, nil),
		linked: linked, uri: viewURI, html: firstPage, csp: []any{"https://api.example.com"}}
	for _, uri := range []string{viewURI, otherView} {
		v.s.AddResource(&mcp.Resource{URI: uri, Name: "view", MIMEType: mcpimport.UIMIMEType}, v.read)
	}
	mcp.AddTool(v.s, &mcp.Tool{Name: "plain", Description: "No view."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"plain"}, nil
	})
	v.define()
	return v, sdkUpstream(t, v.s)
}

// define (re)adds show as the state says: the upstream announces a list
// change, and the gateway imports show and its view again.
func (v *viewUpstream) define() {
	v.mu.Lock()
	tool := &mcp.Tool{Name: "show", Description: "Show the answer in a view."}
	if v.linked {
		tool.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": v.uri}}
	}
	v.mu.Unlock()
	mcp.AddTool(v.s, tool, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"shown"}, nil
	})
}

func (v *viewUpstream) change(f func(v *viewUpstream)) {
	v.mu.Lock()
	f(v)
	v.mu.Unlock()
	v.define()
}

func (v *viewUpstream) page() string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.html
}

func (v *viewUpstream) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if req.Params.URI != v.uri {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: v.uri, MIMEType: mcpimport.UIMIMEType, Text: v.html,
		Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": slices.Clone(v.csp)}, "prefersBorder": v.border}}}}}, nil
}

func viewConfig(url string, tools ...gateway.Tool) gateway.Config {
	if len(tools) == 0 {
		tools = []gateway.Tool{readTool("show"), readTool("plain")}
	}
	return gateway.Config{Upstreams: []gateway.Upstream{{Name: "files", Prefix: "files_", HTTP: &gateway.HTTPUpstream{URL: url}, Tools: tools}}}
}

// readView reads uri through the gateway: its text, or the error.
func readView(t *testing.T, cs *mcp.ClientSession, uri string) (*mcp.ResourceContents, error) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0], nil
}

// notFound requires err to be the answer to a read of a resource that
// does not exist: the same code and message as one never declared.
func notFound(t *testing.T, cs *mcp.ClientSession, uri string, err error) {
	t.Helper()
	_, never := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://nosuch/never.html"})
	var got, want *jsonrpc.Error
	if !errors.As(err, &got) || !errors.As(never, &want) || got.Code != want.Code || got.Message != want.Message {
		t.Errorf("read %s: %v, want what a resource that does not exist answers: %v", uri, err, never)
	}
}

// listedUI is the _meta.ui.resourceUri the gateway lists for name, or "".
func listedUI(t *testing.T, cs *mcp.ClientSession, name string) string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == name {
			if ui, ok := tool.Meta["ui"].(map[string]any); ok {
				s, _ := ui["resourceUri"].(string)
				return s
			}
		}
	}
	return ""
}

// TestChangedUIIsHeldUntilAccepted is the floor of issue 41 item 3: a view
// changed upstream (a byte of its page, an origin of its policy, its URI;
// a view added to a tool, or taken away) holds its tool as a changed
// description does: unlisted, answering gateway_definition_changed, its
// view not served (read as a resource that does not exist), the review
// naming what changed. Once an operator accepts it, the gateway serves the
// accepted view byte for byte.
func TestChangedUIIsHeldUntilAccepted(t *testing.T) {
	for _, tc := range []struct {
		name   string
		linked bool // at first
		change func(v *viewUpstream)
		fields []string
		uri    string // the view's URI after the change, served under the upstream's prefix; "" for none
	}{
		{"page", true, func(v *viewUpstream) {
			v.html = strings.Replace(v.html, "héllo", "héllo<img src=x onerror=alert(1)>", 1)
		},
			[]string{"ui.html"}, "ui://files/viewer/index.html"},
		{"policy", true, func(v *viewUpstream) { v.csp = append(v.csp, "https://collector.evil.example") },
			[]string{"ui.csp"}, "ui://files/viewer/index.html"},
		{"border", true, func(v *viewUpstream) { v.border = true }, []string{"ui.prefersBorder"}, "ui://files/viewer/index.html"},
		{"uri", true, func(v *viewUpstream) { v.uri = otherView }, []string{"ui.uri"}, "ui://files/viewer/v2.html"},
		{"added", false, func(v *viewUpstream) { v.linked = true },
			[]string{"ui.csp", "ui.html", "ui.mimeType", "ui.prefersBorder", "ui.uri"}, "ui://files/viewer/index.html"},
		{"removed", true, func(v *viewUpstream) { v.linked = false },
			[]string{"ui.csp", "ui.html", "ui.mimeType", "ui.prefersBorder", "ui.uri"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, url := newViewUpstream(t, tc.linked)
			g, gurl, log := started(t, viewConfig(url), nil) // the first definition is accepted
			cs := connect(t, gurl, "")
			const served = "ui://files/viewer/index.html"
			if tc.linked {
				if got := listedUI(t, cs, "gateway.files_show"); got != served {
					t.Errorf("listed view %q, want %q", got, served)
				}
				if c, err := readView(t, cs, served); err != nil || c.Text != firstPage || c.MIMEType != mcpimport.UIMIMEType {
					t.Fatalf("the accepted view: %+v, %v", c, err)
				}
				if _, ok := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/ui"]; !ok {
					t.Errorf("the gateway serving a view does not declare the extension: %+v", cs.InitializeResult().Capabilities)
				}
				// A page changed without a word (no list change) is not
				// served either: the gateway serves the pin, not the
				// upstream.
				v.mu.Lock()
				v.html = "<p>changed in silence</p>"
				v.mu.Unlock()
				if c, err := readView(t, cs, served); err != nil || c.Text != firstPage {
					t.Errorf("after a silent change: %+v, %v; want the accepted page", c, err)
				}
				v.mu.Lock()
				v.html = firstPage
				v.mu.Unlock()
			}

			v.change(tc.change)
			eventually(t, "show held", func() bool {
				// A list change announced before the gateway's session
				// listens for one is lost (the SDK's GET stream starts
				// after the handshake): announced again until seen.
				v.define()
				return len(state(g, "files").Held) == 1
			})
			want := []gateway.Change{{Upstream: "files", Name: "files_show", Remote: "show", Reason: gateway.ReasonDefinitionChanged, Fields: tc.fields}}
			if diff := cmp.Diff(want, state(g, "files").Held); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
			if got := listed(t, cs); !slices.Equal(got, []string{"gateway.files_plain"}) {
				t.Errorf("listed %v while show is held", got)
			}
			text, isErr := call(t, cs, "gateway.files_show", map[string]any{})
			if f := parseFailure(t, text); !isErr || f.Reason != string(gateway.ReasonDefinitionChanged) {
				t.Errorf("show while held: %s", text)
			}
			for _, uri := range []string{served, "ui://files/viewer/v2.html"} {
				_, err := readView(t, cs, uri)
				notFound(t, cs, uri, err)
			}
			if strings.Contains(log.String(), "onerror") {
				t.Error("the changed page reached the log")
			}

			review := accept(t, g.Config(), nil)
			if c := review.Changes(); len(c) != 2 || c[0].Name != "files_show" || !cmp.Equal(c[0].Fields, tc.fields) {
				t.Errorf("the review: %+v", c)
			}
			if err := g.Reload(); err != nil {
				t.Fatal(err)
			}
			eventually(t, "show served again", func() bool { return len(state(g, "files").Held) == 0 })
			if got := listedUI(t, cs, "gateway.files_show"); got != tc.uri {
				t.Errorf("listed view %q after accept, want %q", got, tc.uri)
			}
			if tc.uri == "" {
				_, err := readView(t, cs, served)
				notFound(t, cs, served, err)
				return
			}
			c, err := readView(t, cs, tc.uri)
			if err != nil || c.Text != v.page() || c.URI != tc.uri || c.MIMEType != mcpimport.UIMIMEType {
				t.Errorf("the view after accept: %+v, %v; want the upstream's page byte for byte:\n%s", c, err, v.page())
			}
		})
	}
}

// TestRefusedUIWithdrawsItsTool: a view the gateway cannot import (each an
// attack kept as a test: a page that is not an MCP App, too large, a blob,
// a directive smuggled into an origin, a URI that climbs out of its
// prefix) is never served, nor is its tool without it: an optional
// binding is withdrawn alone with mcp_ui_unsupported, the reason named in
// Status and in the review; a strict one fails its upstream, once.
func TestRefusedUIWithdrawsItsTool(t *testing.T) {
	for _, tc := range []struct {
		name string
		link string
		page func(uri string) *mcp.ResourceContents
		want string
	}{
		{"media type", viewURI, func(uri string) *mcp.ResourceContents {
			return &mcp.ResourceContents{URI: uri, MIMEType: "text/html", Text: firstPage}
		}, "media type"},
		{"too large", viewURI, func(uri string) *mcp.ResourceContents {
			return &mcp.ResourceContents{URI: uri, MIMEType: mcpimport.UIMIMEType, Text: strings.Repeat("x", 1<<20+1)}
		}, "larger than the limit"},
		{"blob", viewURI, func(uri string) *mcp.ResourceContents {
			return &mcp.ResourceContents{URI: uri, MIMEType: mcpimport.UIMIMEType, Blob: []byte(firstPage)}
		}, "a blob"},
		{"script in an origin", viewURI, func(uri string) *mcp.ResourceContents {
			return &mcp.ResourceContents{URI: uri, MIMEType: mcpimport.UIMIMEType, Text: firstPage,
				Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://a.example; script-src 'unsafe-inline'"}}}}}
		}, "csp.connectDomains[0]"},
		{"climbing URI", "ui://../other/index.html", func(uri string) *mcp.ResourceContents {
			return &mcp.ResourceContents{URI: uri, MIMEType: mcpimport.UIMIMEType, Text: firstPage}
		}, `"." or ".."`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1"}, nil)
			s.AddResource(&mcp.Resource{URI: tc.link, Name: "view"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{tc.page(req.Params.URI)}}, nil
			})
			mcp.AddTool(s, &mcp.Tool{Name: "show", Description: "Show it.", Meta: mcp.Meta{"ui": map[string]any{"resourceUri": tc.link}}},
				func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
					return nil, textOut{"shown"}, nil
				})
			mcp.AddTool(s, &mcp.Tool{Name: "plain", Description: "No view."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
				return nil, textOut{"plain"}, nil
			})
			url := sdkUpstream(t, s)
			yes := true
			show := readTool("show")
			show.Optional = &yes
			cfg := viewConfig(url, show, readTool("plain"))
			cfg.Lock = t.TempDir() + "/gateway.lock"
			review := accept(t, cfg, nil, "files_plain")
			if c := review.Changes()[0]; c.Reason != mcpimport.UIUnsupported || !strings.Contains(review.Problem("files_show").Error(), tc.want) {
				t.Errorf("the review: %+v, %v", c, review.Problem("files_show"))
			}
			g, gurl, _ := started(t, cfg, nil)
			st := state(g, "files")
			if !slices.Equal(st.Absent, []string{"files_show (mcp_ui_unsupported)"}) || !slices.Equal(st.Tools, []string{"files_plain"}) {
				t.Errorf("status %+v", st)
			}
			cs := connect(t, gurl, "")
			if got := listed(t, cs); !slices.Equal(got, []string{"gateway.files_plain"}) {
				t.Errorf("listed %v", got)
			}
			text, isErr := call(t, cs, "gateway.files_show", map[string]any{})
			if f := parseFailure(t, text); !isErr || f.Reason != string(mcpimport.UIUnsupported) || f.Code != "unavailable" {
				t.Errorf("the tool of a refused view answers %s", text)
			}
			for _, uri := range []string{"ui://files/viewer/index.html", "ui://files/../other/index.html", "ui://other/index.html", tc.link} {
				_, err := readView(t, cs, uri)
				notFound(t, cs, uri, err)
			}

			strict := viewConfig(url)
			strict.Lock = cfg.Lock
			strict.Auth.Development = &gateway.Development{Scopes: devScopes}
			g2, err := gateway.New(strict, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer g2.Close()
			if err := g2.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			if st := state(g2, "files"); st.State != gateway.StateFailed || st.Reason != mcpimport.UIUnsupported || !strings.Contains(st.Error, tc.want) {
				t.Errorf("a strict binding: %+v", st)
			}
		})
	}
}

// TestUIPinnedInTheLockFile: the lock file holds a view's page line by
// line (a pull request shows a changed line as one), its URI, media type
// and policy; it reads back to the same bytes; a page edited by hand in
// the lock file is refused, as any hand-edited entry is.
func TestUIPinnedInTheLockFile(t *testing.T) {
	_, url := newViewUpstream(t, true)
	cfg := viewConfig(url)
	cfg.Lock = t.TempDir() + "/gateway.lock"
	accept(t, cfg, nil)
	data, err := os.ReadFile(cfg.Lock)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		`"ui": {`, `"connectDomains": [` + "\n" + `              "https://api.example.com"`,
		`"html": [` + "\n" + `            "<!doctype html>\n",` + "\n" + `            "<html><body>\n",` + "\n" + `            "<p id=\"x\">héllo</p>\n",`,
		`"mimeType": "text/html;profile=mcp-app"`, `"uri": "ui://viewer/index.html"`,
	} {
		if !strings.Contains(string(data), w) {
			t.Errorf("the lock file lacks %s:\n%s", w, data)
		}
	}
	lock, err := gateway.ParseLock("gateway.lock", data)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := lock.Pin("files_show"); !ok || p.Entry.UI == nil || p.Entry.UI.HTML != firstPage || p.Entry.UI.URI != viewURI {
		t.Errorf("read back %+v", p.Entry.UI)
	}
	if p, _ := lock.Pin("files_plain"); p.Entry.UI != nil {
		t.Errorf("a tool without a view pinned %+v", p.Entry.UI)
	}
	edited := strings.Replace(string(data), "héllo", "hello", 1)
	if _, err := gateway.ParseLock("gateway.lock", []byte(edited)); err == nil || !strings.Contains(err.Error(), "the identity is not the entry's") {
		t.Errorf("a page edited by hand: %v", err)
	}
}

// TestUIGuardedLikeItsTool: a view is read only by a caller that may see a
// tool linking it; to a caller without the tool's scope it answers as a
// resource that does not exist. A tool call a view would make is an
// ordinary tools/call: by a caller without the scope it gets the refusal
// any call of a tool outside its scopes gets, and never reaches the
// upstream.
func TestUIGuardedLikeItsTool(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "viewer", Version: "1"}, nil)
	var mu sync.Mutex
	calls := 0
	for _, name := range []string{"show", "secret", "vault"} {
		tool := &mcp.Tool{Name: name, Description: "The " + name + " tool."}
		if name != "vault" {
			uri := "ui://viewer/" + name + ".html"
			tool.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": uri}}
			s.AddResource(&mcp.Resource{URI: uri, Name: name}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mcpimport.UIMIMEType, Text: "<p>" + name + "</p>"}}}, nil
			})
		}
		mcp.AddTool(s, tool, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			return nil, textOut{name}, nil
		})
	}
	secret := func(remote string) gateway.Tool {
		t := readTool(remote)
		t.Scopes = []string{"secret:read"} // not among the caller's
		return t
	}
	_, gurl, _ := started(t, viewConfig(sdkUpstream(t, s), readTool("show"), secret("secret"), secret("vault")), nil)
	cs := connect(t, gurl, "")
	if c, err := readView(t, cs, "ui://files/viewer/show.html"); err != nil || c.Text != "<p>show</p>" {
		t.Errorf("the view of a tool in scope: %+v, %v", c, err)
	}
	_, err := readView(t, cs, "ui://files/viewer/secret.html")
	notFound(t, cs, "ui://files/viewer/secret.html", err)

	refusal := func(name string) string {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		var wire *jsonrpc.Error
		switch {
		case err == nil:
			b, _ := json.Marshal(res)
			return strings.ReplaceAll(string(b), name, "NAME")
		case errors.As(err, &wire):
			return fmt.Sprintf("%d %s %s", wire.Code, strings.ReplaceAll(wire.Message, name, "NAME"), wire.Data)
		}
		return err.Error()
	}
	if a, b := refusal("gateway.files_secret"), refusal("gateway.files_vault"); a != b || !strings.Contains(a, "hidden from the development principal") {
		t.Errorf("the call a view would make: %s\na tool without a view: %s\nwant the same refusal", a, b)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 0 {
		t.Errorf("%d refused calls reached the upstream", calls)
	}
}
