package mcpimport_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	viewURI  = "ui://viewer/index.html"
	viewHTML = "<!doctype html>\r\n<html><body>\n<p>héllo \u2028 <script>x()</script></p>\n</body></html>" // no final newline
)

// uiUpstream is an SDK server listing "show", linking the view link (none
// when ""), and serving at viewURI what read returns (no resources at all
// when read is nil).
func uiUpstream(link any, read func(uri string) *mcp.ReadResourceResult) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "viewer", Version: "1"}, nil)
	tool := &mcp.Tool{Name: "show", Description: "Show it.", InputSchema: json.RawMessage(echoInput)}
	if link != nil {
		tool.Meta = mcp.Meta{"ui": map[string]any{"resourceUri": link}}
	}
	s.AddTool(tool, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: text("shown")}, nil
	})
	if read != nil {
		s.AddResource(&mcp.Resource{URI: viewURI, Name: "viewer", MIMEType: mcpimport.UIMIMEType},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return read(req.Params.URI), nil
			})
	}
	return s
}

// page is the read answer of a view: html at uri, under meta's _meta.ui.
func page(uri, mimeType, html string, ui map[string]any) *mcp.ReadResourceResult {
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeType, Text: html}
	if ui != nil {
		c.Meta = mcp.Meta{"ui": ui}
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
}

func discoverShow(t *testing.T, s *mcp.Server, limits mcpimport.Limits, allowAbsent bool) (*mcpimport.Catalog, error) {
	t.Helper()
	cs, mon := connect(t, s, "2025-11-25")
	b := map[string]mcpimport.Binding{"show": {Name: "show", Title: "Show", NoScopeValidator: true}}
	return mcpimport.Discover(context.Background(), newSession(t, cs, mon, "viewer"), b, &mcpimport.Options{Limits: limits, AllowAbsent: allowAbsent})
}

// TestUIImportedWithItsTool: a tool's view is read at discovery and kept
// in its entry byte for byte, with its policy; the entry's document
// carries it line by line and reads back to the same bytes; a changed
// page, policy or URI is another identity.
func TestUIImportedWithItsTool(t *testing.T) {
	csp := map[string]any{"connectDomains": []any{"https://api.example.com", "http://localhost:8080"}, "resourceDomains": []any{"https://*.cdn.example.com"}}
	identity := func(html, uri string, csp map[string]any) (mcpimport.Entry, string) {
		t.Helper()
		s := uiUpstream(uri, func(string) *mcp.ReadResourceResult {
			return page(uri, mcpimport.UIMIMEType, html, map[string]any{"csp": csp, "prefersBorder": true, "permissions": map[string]any{"camera": map[string]any{}}})
		})
		if uri != viewURI {
			s.AddResource(&mcp.Resource{URI: uri, Name: "other"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return page(uri, mcpimport.UIMIMEType, html, map[string]any{"csp": csp, "prefersBorder": true}), nil
			})
		}
		cat, err := discoverShow(t, s, mcpimport.Limits{}, false)
		if err != nil {
			t.Fatal(err)
		}
		e := cat.Snapshot().Entries()[0]
		id, err := e.Identity()
		if err != nil {
			t.Fatal(err)
		}
		return e, id
	}
	e, id := identity(viewHTML, viewURI, csp)
	want := &mcpimport.UI{URI: viewURI, HTML: viewHTML, PrefersBorder: true, CSP: mcpimport.UICSP{
		ConnectDomains: []string{"https://api.example.com", "http://localhost:8080"}, ResourceDomains: []string{"https://*.cdn.example.com"}}}
	if diff := cmp.Diff(want, e.UI); diff != "" {
		t.Errorf("UI (-want +got):\n%s", diff)
	}
	doc, err := e.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), `"html":["<!doctype html>\r\n","<html><body>\n","<p>héllo `+"\u2028"+` <script>x()</script></p>\n","</body></html>"]`) {
		t.Errorf("the document does not hold the page line by line:\n%s", doc)
	}
	var back mcpimport.Entry
	if err := json.Unmarshal(doc, &back); err != nil {
		t.Fatal(err)
	}
	if back.UI == nil || back.UI.HTML != viewHTML || !cmp.Equal(back.UI, e.UI) {
		t.Errorf("read back %+v, want %+v", back.UI, e.UI)
	}
	for what, other := range map[string]func() (mcpimport.Entry, string){
		"a byte of the page": func() (mcpimport.Entry, string) { return identity(viewHTML+" ", viewURI, csp) },
		"an origin": func() (mcpimport.Entry, string) {
			return identity(viewHTML, viewURI, map[string]any{"connectDomains": []any{"https://api.example.com"}})
		},
		"the URI": func() (mcpimport.Entry, string) { return identity(viewHTML, "ui://viewer/other.html", csp) },
	} {
		if _, id2 := other(); id2 == id {
			t.Errorf("changing %s kept the identity %s", what, id)
		}
	}

	// A tool without a view has none, and the document it always had.
	cat, err := discoverShow(t, uiUpstream(nil, nil), mcpimport.Limits{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if e := cat.Snapshot().Entries()[0]; e.UI != nil {
		t.Errorf("a tool without a view imported %+v", e.UI)
	} else if doc, _ := e.MarshalJSON(); strings.Contains(string(doc), `"ui"`) {
		t.Errorf("the document of a tool without a view: %s", doc)
	}
}

// TestUIRefused: every view discovery cannot import, each an attack or a
// mistake kept as a test. The tool is never imported without it: left out
// with mcp_ui_unsupported (AllowAbsent), or failing discovery.
func TestUIRefused(t *testing.T) {
	ok := func(string) *mcp.ReadResourceResult { return page(viewURI, mcpimport.UIMIMEType, viewHTML, nil) }
	withCSP := func(csp any) func(string) *mcp.ReadResourceResult {
		return func(string) *mcp.ReadResourceResult {
			return page(viewURI, mcpimport.UIMIMEType, viewHTML, map[string]any{"csp": csp})
		}
	}
	origin := func(o string) func(string) *mcp.ReadResourceResult {
		return withCSP(map[string]any{"connectDomains": []any{"https://fine.example.com", o}})
	}
	for _, tc := range []struct {
		name   string
		link   any
		read   func(string) *mcp.ReadResourceResult
		limits mcpimport.Limits
		want   string
	}{
		{"link not a string", 42, ok, mcpimport.Limits{}, "resourceUri is not a string"},
		{"link not ui://", "https://evil.example/x.html", ok, mcpimport.Limits{}, `want a "ui://" URI`},
		{"link escapes with ..", "ui://../other/x.html", ok, mcpimport.Limits{}, `"." or ".."`},
		{"link escapes inside", "ui://viewer/../../x", ok, mcpimport.Limits{}, `"." or ".."`},
		{"link with a query", "ui://viewer/index.html?x=1", ok, mcpimport.Limits{}, "want ASCII letters"},
		{"link with an empty segment", "ui://viewer//x", ok, mcpimport.Limits{}, "an empty segment"},
		{"link with userinfo", "ui://a@viewer/x", ok, mcpimport.Limits{}, "want ASCII letters"},
		{"no resources offered", viewURI, nil, mcpimport.Limits{}, "offers no resources"},
		{"no such resource", "ui://viewer/missing.html", ok, mcpimport.Limits{}, "no such resource"},
		{"wrong media type", viewURI, func(string) *mcp.ReadResourceResult { return page(viewURI, "text/html", viewHTML, nil) }, mcpimport.Limits{}, "media type"},
		{"media type with another parameter", viewURI, func(string) *mcp.ReadResourceResult {
			return page(viewURI, "text/html;profile=mcp-app;charset=utf-8", viewHTML, nil)
		}, mcpimport.Limits{}, "media type"},
		{"a blob", viewURI, func(string) *mcp.ReadResourceResult {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: viewURI, MIMEType: mcpimport.UIMIMEType, Blob: []byte(viewHTML)}}}
		}, mcpimport.Limits{}, "a blob"},
		{"two contents", viewURI, func(string) *mcp.ReadResourceResult {
			r := page(viewURI, mcpimport.UIMIMEType, viewHTML, nil)
			r.Contents = append(r.Contents, r.Contents[0])
			return r
		}, mcpimport.Limits{}, "2 contents"},
		{"content of another URI", viewURI, func(string) *mcp.ReadResourceResult {
			return page("ui://viewer/x", mcpimport.UIMIMEType, viewHTML, nil)
		}, mcpimport.Limits{}, "another URI"},
		{"too large", viewURI, ok, mcpimport.Limits{UIBytes: len(viewHTML) - 1}, "larger than the limit"},
		{"script in an origin", viewURI, origin("https://cdn.example.com; script-src 'unsafe-inline'"), mcpimport.Limits{}, "csp.connectDomains[1]"},
		{"a path", viewURI, origin("https://cdn.example.com/x"), mcpimport.Limits{}, "an origin alone"},
		{"a trailing slash", viewURI, origin("https://cdn.example.com/"), mcpimport.Limits{}, "an origin alone"},
		{"plain http", viewURI, origin("http://cdn.example.com"), mcpimport.Limits{}, "want https"},
		{"a scheme alone", viewURI, origin("https:"), mcpimport.Limits{}, "want an origin"},
		{"a keyword", viewURI, origin("'self'"), mcpimport.Limits{}, "want an origin"},
		{"a bare wildcard", viewURI, origin("*"), mcpimport.Limits{}, "want an origin"},
		{"a wildcard host", viewURI, origin("https://*"), mcpimport.Limits{}, "host name"},
		{"an inner wildcard", viewURI, origin("https://a.*.example.com"), mcpimport.Limits{}, "host name"},
		{"javascript", viewURI, origin("javascript:alert(1)"), mcpimport.Limits{}, "want an origin"},
		{"upper case", viewURI, origin("https://CDN.example.com"), mcpimport.Limits{}, "host name"},
		{"an unknown directive", viewURI, withCSP(map[string]any{"scriptDomains": []any{"https://cdn.example.com"}}), mcpimport.Limits{}, "not a member the gateway knows"},
		{"csp not an object", viewURI, withCSP("default-src *"), mcpimport.Limits{}, "csp is not an object"},
		{"an origin not a string", viewURI, withCSP(map[string]any{"frameDomains": []any{1}}), mcpimport.Limits{}, "is not a string"},
		{"prefersBorder not a boolean", viewURI, func(string) *mcp.ReadResourceResult {
			return page(viewURI, mcpimport.UIMIMEType, viewHTML, map[string]any{"prefersBorder": "yes"})
		}, mcpimport.Limits{}, "prefersBorder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat, err := discoverShow(t, uiUpstream(tc.link, tc.read), tc.limits, true)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(cat.Snapshot().Entries()); n != 0 {
				t.Errorf("%d tools imported", n)
			}
			a := cat.Absent()
			if len(a) != 1 || a[0].Reason != mcpimport.UIUnsupported || !strings.Contains(a[0].Err.Error(), tc.want) {
				t.Fatalf("absent %+v, want one with %s and %q", a, mcpimport.UIUnsupported, tc.want)
			}
			_, err = discoverShow(t, uiUpstream(tc.link, tc.read), tc.limits, false)
			var e *mcpimport.Error
			if execution.ReasonOf(err) != mcpimport.UIUnsupported || !errors.As(err, &e) || e.Tool != "show" {
				t.Errorf("strict discovery: %v", err)
			}
		})
	}
}

// TestUIDocumentRefused: an entry document whose view is not one
// discovery would import is refused when read back (a lock file edited
// by hand).
func TestUIDocumentRefused(t *testing.T) {
	base := `{"concurrencySafe":false,"description":"d","inputSchema":{"type":"object"},"localName":"a","outputSchema":null,"policy":{"mode":"read","title":"A"},"remoteName":"a",`
	for name, ui := range map[string]string{
		"media type":     `"ui":{"html":["x"],"mimeType":"text/html","prefersBorder":false,"uri":"ui://a/b"}`,
		"uri":            `"ui":{"html":["x"],"mimeType":"text/html;profile=mcp-app","prefersBorder":false,"uri":"ui://a/../b"}`,
		"origin":         `"ui":{"csp":{"frameDomains":["https://a.com; frame-ancestors *"]},"html":["x"],"mimeType":"text/html;profile=mcp-app","prefersBorder":false,"uri":"ui://a/b"}`,
		"unknown":        `"ui":{"html":["x"],"mimeType":"text/html;profile=mcp-app","prefersBorder":false,"uri":"ui://a/b","domain":"x"}`,
		"unknown in csp": `"ui":{"csp":{"scriptDomains":["https://a.com"]},"html":["x"],"mimeType":"text/html;profile=mcp-app","prefersBorder":false,"uri":"ui://a/b"}`,
		"no page":        `"ui":{"html":[],"mimeType":"text/html;profile=mcp-app","prefersBorder":false,"uri":"ui://a/b"}`,
	} {
		var e mcpimport.Entry
		if err := json.Unmarshal([]byte(base+ui+"}"), &e); err == nil {
			t.Errorf("%s: read back %+v", name, e.UI)
		}
	}
}
