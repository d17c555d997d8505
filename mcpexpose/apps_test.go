package mcpexpose_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	uiExt  = "io.modelcontextprotocol/ui"
	uiMIME = "text/html;profile=mcp-app"
)

// renderReport is the Render of the view two tools share.
func renderReport(ctx context.Context) (string, error) { return "<p>report</p>", nil }

// shopSnapshot has four tools with views and one without:
//   - shop.cart (public): static HTML, CSP, border, the default URI;
//   - shop.ledger (ledger:write): its own URI;
//   - shop.report (public) and shop.report_admin (ledger:write): one
//     rendered view, shared;
//   - shop.plain: no view.
func shopSnapshot(t testing.TB, cartHTML string) *mcpexpose.Snapshot {
	t.Helper()
	app := agnara.New("shop", nil)
	capability := func(name string, scopes ...string) *agnara.Capability {
		return app.Capability(func() (string, error) { return name + " ran", nil },
			&agnara.CapabilityOptions{Name: name, Description: "The " + name + ".", Scopes: scopes})
	}
	exp := mcpexpose.New(app)
	exp.Tool(capability("cart"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{
		HTML: cartHTML, CSP: mcpexpose.UICSP{ConnectDomains: []string{"https://api.shop.test"}}, PrefersBorder: true,
	}})
	exp.Tool(capability("ledger", "ledger:write"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shop/ledger", HTML: "<p>ledger</p>"}})
	report := &mcpexpose.UI{URI: "ui://shop/report", Render: renderReport}
	exp.Tool(capability("report"), &mcpexpose.ToolOptions{UI: report})
	exp.Tool(capability("report_admin", "ledger:write"), &mcpexpose.ToolOptions{UI: report})
	exp.Tool(capability("plain"), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

const cartView = `<!doctype html><p>cart</p>`

// uiOf returns the _meta.ui.resourceUri of a listed tool, "" without one.
func uiOf(tl *mcp.Tool) string {
	ui, _ := tl.Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	return uri
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Both eras, over HTTP, with the Go SDK client: the extension declared,
// each tool's view linked, the views listed and read, and a view whose
// every tool the caller may not see answered exactly as a missing
// resource.
func TestUIBothEras(t *testing.T) {
	srv := serve(t, &fixture{snap: shopSnapshot(t, cartView)}, &mcpexpose.HandlerOptions{Tokens: tokens})
	for _, era := range eras[:2] {
		t.Run(era.name, func(t *testing.T) {
			ctx := context.Background()
			reader := connect(t, srv.URL+"/mcp", "reader", era.version, nil)
			writer := connect(t, srv.URL+"/mcp", "writer", era.version, nil)
			caps := reader.InitializeResult().Capabilities
			if _, ok := caps.Extensions[uiExt]; !ok || caps.Resources == nil {
				t.Errorf("capabilities = %+v, want resources and the %s extension", caps, uiExt)
			}

			for _, c := range []struct {
				cs          *mcp.ClientSession
				tools, uris string
			}{
				{reader, "shop.cart=ui://shop.cart shop.report=ui://shop/report shop.plain=", "ui://shop.cart ui://shop/report"},
				{writer, "shop.cart=ui://shop.cart shop.ledger=ui://shop/ledger shop.report=ui://shop/report shop.report_admin=ui://shop/report shop.plain=", "ui://shop.cart ui://shop/ledger ui://shop/report"},
			} {
				tools, err := c.cs.ListTools(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, tl := range tools.Tools {
					got = append(got, tl.Name+"="+uiOf(tl))
				}
				if g := strings.Join(got, " "); g != c.tools {
					t.Errorf("tools/list views = %s, want %s", g, c.tools)
				}
				res, err := c.cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range res.Resources {
					uris = append(uris, r.URI)
				}
				if g := strings.Join(uris, " "); g != c.uris {
					t.Errorf("resources/list = %s, want %s", g, c.uris)
				}
			}
			res, _ := reader.ListResources(ctx, nil)
			if got, want := mustJSON(t, res.Resources[0]), `{"_meta":{"ui":{"csp":{"connectDomains":["https://api.shop.test"]},"prefersBorder":true}},"mimeType":"text/html;profile=mcp-app","name":"shop.cart","uri":"ui://shop.cart"}`; got != want {
				t.Errorf("listed view:\n got %s\nwant %s", got, want)
			}

			reads := []struct {
				cs        *mcp.ClientSession
				uri, want string
			}{
				{reader, "ui://shop.cart", `[{"uri":"ui://shop.cart","mimeType":"text/html;profile=mcp-app","text":"\u003c!doctype html\u003e\u003cp\u003ecart\u003c/p\u003e","_meta":{"ui":{"csp":{"connectDomains":["https://api.shop.test"]},"prefersBorder":true}}}]`},
				{reader, "ui://shop/report", `[{"uri":"ui://shop/report","mimeType":"text/html;profile=mcp-app","text":"\u003cp\u003ereport\u003c/p\u003e","_meta":{"ui":{}}}]`},
				{writer, "ui://shop/ledger", `[{"uri":"ui://shop/ledger","mimeType":"text/html;profile=mcp-app","text":"\u003cp\u003eledger\u003c/p\u003e","_meta":{"ui":{}}}]`},
			}
			for _, r := range reads {
				res, err := r.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.uri})
				if err != nil {
					t.Fatalf("read %s: %v", r.uri, err)
				}
				if diff := cmp.Diff(r.want, mustJSON(t, res.Contents)); diff != "" {
					t.Errorf("read %s (-want +got):\n%s", r.uri, diff)
				}
			}

			// The reader may see no tool linking the ledger's view.
			_, errHidden := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://shop/ledger"})
			_, errMissing := reader.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://shop/nothing"})
			if h, m := rpcError(t, errHidden, "ui://shop/ledger"), rpcError(t, errMissing, "ui://shop/nothing"); h != m || !strings.HasPrefix(h, "-32602 ") {
				t.Errorf("hidden view: %s; missing view: %s; want the same resource-not-found", h, m)
			}
			if era.version != "" {
				errHidden = reader.Subscribe(ctx, &mcp.SubscribeParams{URI: "ui://shop/ledger"})
				errMissing = reader.Subscribe(ctx, &mcp.SubscribeParams{URI: "ui://shop/nothing"})
				if h, m := rpcError(t, errHidden, "ui://shop/ledger"), rpcError(t, errMissing, "ui://shop/nothing"); h != m {
					t.Errorf("subscribing to a hidden view: %s; to a missing one: %s", h, m)
				}
				if err := reader.Subscribe(ctx, &mcp.SubscribeParams{URI: "ui://shop.cart"}); err != nil {
					t.Errorf("subscribe to a visible view: %v", err)
				}
			}
		})
	}
}

// A caller without a tool's scope finds nothing of its view, for every
// view of a scoped catalog: neither in resources/list nor by reading it.
func TestUIScopedVisibility(t *testing.T) {
	snap := shopSnapshot(t, cartView)
	srv := serve(t, &fixture{snap: snap}, &mcpexpose.HandlerOptions{Tokens: tokens})
	ctx := context.Background()
	for _, era := range eras[:2] {
		for _, token := range []string{"reader", "writer"} {
			cs := connect(t, srv.URL+"/mcp", token, era.version, nil)
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			linked := map[string]bool{}
			for _, tl := range tools.Tools {
				if uri := uiOf(tl); uri != "" {
					linked[uri] = true
				}
			}
			listed, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range listed.Resources {
				if !linked[r.URI] {
					t.Errorf("%s/%s: resources/list has %s, which no tool it sees links", era.name, token, r.URI)
				}
			}
			for _, r := range snap.Resources() {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
				if linked[r.URI] != (err == nil) {
					t.Errorf("%s/%s: read %s: %v; a tool it sees links it: %v", era.name, token, r.URI, err, linked[r.URI])
				}
			}
		}
	}
}

// The edge (which answers tools/list itself) and the SDK route answer
// tools/list, resources/list and resources/read of views alike, at both
// eras, for a caller with and without the scopes.
func TestUIDifferential(t *testing.T) {
	fastH, _, fastURL, sdkURL := servePair(t, shopSnapshot(t, cartView), shopSnapshot(t, cartView), mcpexpose.HandlerOptions{Tokens: tokens})
	ctx := context.Background()
	answers := func(url, token, version string) []string {
		cs := connect(t, url, token, version, nil)
		var out []string
		add := func(res any, err error) {
			if err != nil {
				out = append(out, "error: "+err.Error())
				return
			}
			out = append(out, mustJSON(t, res))
		}
		add(cs.ListTools(ctx, nil))
		add(cs.ListResources(ctx, nil))
		for _, uri := range []string{"ui://shop.cart", "ui://shop/ledger", "ui://shop/report", "ui://shop/nothing"} {
			add(cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}))
		}
		out = append(out, mustJSON(t, cs.InitializeResult().Capabilities.Extensions))
		return out
	}
	before := fastH.FastPathRequests()
	for _, era := range eras[:2] {
		for _, token := range []string{"reader", "writer"} {
			if diff := cmp.Diff(answers(sdkURL, token, era.version), answers(fastURL, token, era.version)); diff != "" {
				t.Errorf("%s/%s: edge and SDK differ (-sdk +edge):\n%s", era.name, token, diff)
			}
		}
	}
	if fastH.FastPathRequests() == before {
		t.Error("the edge answered nothing: the comparison compared the SDK with itself")
	}
}

// Render's error reaches the log, never the caller, who gets a generic
// internal error; so does a panic.
func TestUIRenderError(t *testing.T) {
	for name, render := range map[string]func(context.Context) (string, error){
		"error": func(context.Context) (string, error) { return "", errors.New("template: password=hunter2") },
		"panic": func(context.Context) (string, error) { panic("password=hunter2") },
	} {
		t.Run(name, func(t *testing.T) {
			app := agnara.New("broken", nil)
			exp := mcpexpose.New(app)
			exp.Tool(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "view", Description: "A view."}),
				&mcpexpose.ToolOptions{UI: &mcpexpose.UI{Render: render}})
			snap, err := exp.Compile()
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			srv := serve(t, &fixture{snap: snap}, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Logger: slog.New(slog.NewTextHandler(&logs, nil))}})
			for _, era := range eras[:2] {
				cs := connect(t, srv.URL+"/mcp", "", era.version, nil)
				_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://broken.view"})
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInternalError || strings.Contains(err.Error(), "hunter2") || strings.Contains(string(je.Data), "hunter2") {
					t.Errorf("%s: read = %v, want an internal error without the render error's text", era.name, err)
				}
			}
			if got := logs.String(); strings.Count(got, "UI render failed") != 2 || !strings.Contains(got, "hunter2") || !strings.Contains(got, "ui://broken.view") {
				t.Errorf("log = %s, want both failures with their cause", got)
			}
		})
	}
}

// here returns the line it is called from.
func here() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

// Every mistake a view can make, each reported at the file:line of the
// tool declaration, and all of them in one Compile.
func TestUICompileMistakes(t *testing.T) {
	type tc struct {
		name string
		ui   mcpexpose.UI
		want string
	}
	page := "<p>x</p>"
	cases := []tc{
		{"uri not ui", mcpexpose.UI{URI: "https://x.test/view", HTML: page}, `ToolOptions.UI.URI "https://x.test/view" must be a ui:// URI`},
		{"bare scheme", mcpexpose.UI{URI: "ui://", HTML: page}, `must be a ui:// URI`},
		{"invalid uri", mcpexpose.UI{URI: "ui://a b%zz", HTML: page}, `is not a valid URI`},
		{"no page", mcpexpose.UI{}, "needs its page: set HTML or Render"},
		{"two pages", mcpexpose.UI{HTML: page, Render: renderReport}, "sets both HTML and Render"},
		{"plain http", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ConnectDomains: []string{"http://api.test"}}}, `CSP.ConnectDomains: "http://api.test" is not served over TLS`},
		{"path", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ResourceDomains: []string{"https://cdn.test/lib"}}}, `CSP.ResourceDomains: "https://cdn.test/lib" is not an origin`},
		{"trailing slash", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ResourceDomains: []string{"https://cdn.test/"}}}, `"https://cdn.test/" is not an origin`},
		{"query", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{FrameDomains: []string{"https://x.test?a=1"}}}, `CSP.FrameDomains: "https://x.test?a=1" is not an origin`},
		{"credentials", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{BaseURIDomains: []string{"https://u:p@x.test"}}}, `CSP.BaseURIDomains: "https://u:p@x.test" is not an origin`},
		{"inner wildcard", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ConnectDomains: []string{"https://a.*.test"}}}, `wildcard other than a leading`},
		{"bare wildcard", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ConnectDomains: []string{"*"}}}, `"*" is not an origin`},
		{"host only", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ConnectDomains: []string{"api.test"}}}, `"api.test" is not an origin`},
		{"other scheme", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ConnectDomains: []string{"ftp://x.test"}}}, `scheme "ftp" is not https`},
		{"bad host", mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{ConnectDomains: []string{"https://x_y.test"}}}, `has no valid host`},
	}
	app := agnara.New("mistakes", nil)
	exp := mcpexpose.New(app)
	newCap := func(name string) *agnara.Capability {
		return app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: name, Description: "d"})
	}
	var wants []string
	for i, c := range cases {
		ui := c.ui
		exp.Tool(newCap(fmt.Sprintf("t%d", i)), &mcpexpose.ToolOptions{UI: &ui})
		wants = append(wants, fmt.Sprintf("apps_test.go:%d: mistakes.t%d: \x00%s", here()-1, i, c.want))
	}
	// What only views together make: a URI a resource or template serves,
	// two tools sharing a URI with different views.
	exp.Resource(newCap("res"), &mcpexpose.ResourceOptions{URI: "ui://taken"})
	exp.ResourceTemplate(app.Capability(func(in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "", nil
	}, &agnara.CapabilityOptions{Name: "tmpl", Description: "d"}), &mcpexpose.ResourceTemplateOptions{URITemplate: "ui://pages/{name}"})
	exp.Tool(newCap("clash"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://taken", HTML: page}})
	wants = append(wants, fmt.Sprintf("apps_test.go:%d: mistakes.clash: \x00ToolOptions.UI URI ui://taken is also the URI of the resource declared at", here()-1))
	exp.Tool(newCap("matched"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://pages/home", HTML: page}})
	wants = append(wants, fmt.Sprintf("apps_test.go:%d: mistakes.matched: \x00ToolOptions.UI URI ui://pages/home is matched by the resource template ui://pages/{name}", here()-1))
	exp.Tool(newCap("one"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shared", HTML: page}})
	exp.Tool(newCap("two"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shared", HTML: page + " "}})
	wants = append(wants, fmt.Sprintf("apps_test.go:%d: mistakes.two: \x00ToolOptions.UI ui://shared differs from the view tool mistakes.one declared at", here()-1))
	exp.Tool(newCap("three"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shared", HTML: page, PrefersBorder: true}})
	wants = append(wants, fmt.Sprintf("apps_test.go:%d: mistakes.three: \x00ToolOptions.UI ui://shared differs", here()-1))
	// Fine: what the checks must let through.
	exp.Tool(newCap("fine"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: page, CSP: mcpexpose.UICSP{
		ConnectDomains:  []string{"https://api.test", "wss://rt.api.test", "http://localhost:8080", "ws://127.0.0.1:9000"},
		ResourceDomains: []string{"https://*.cdn.test", "https://[2001:db8::1]"},
	}}})
	exp.Tool(newCap("shared_fine"), &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shared", HTML: page}})

	_, err := exp.Compile()
	if err == nil {
		t.Fatal("Compile accepted every mistake")
	}
	got := unjoinErrs(err)
	for _, w := range wants {
		// "at: subject: \x00what": the mistake begins with at and subject,
		// and says what somewhere after.
		at, what, _ := strings.Cut(w, "\x00")
		if !slices.ContainsFunc(got, func(e error) bool {
			i := strings.Index(e.Error(), "apps_test.go:")
			if i < 0 {
				return false
			}
			rest, ok := strings.CutPrefix(e.Error()[i:], at)
			return ok && strings.Contains(rest, what)
		}) {
			t.Errorf("missing mistake %q", w)
		}
	}
	if len(got) != len(wants) {
		t.Errorf("Compile reported %d mistakes, want %d:\n%v", len(got), len(wants), err)
	}
}

func unjoinErrs(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// A server without a view declares no extension: it is no MCP App.
func TestNoUINoExtension(t *testing.T) {
	srv := serve(t, &fixture{snap: docsSnapshot(t)}, &mcpexpose.HandlerOptions{Tokens: tokens})
	for _, era := range eras[:2] {
		cs := connect(t, srv.URL+"/mcp", "reader", era.version, nil)
		if _, ok := cs.InitializeResult().Capabilities.Extensions[uiExt]; ok {
			t.Errorf("%s: a server without views declares %s", era.name, uiExt)
		}
	}
}

// A swap serves the new page to the next read, and one that drops the view
// makes it a missing resource.
func TestUISwap(t *testing.T) {
	h, err := mcpexpose.NewHandler(shopSnapshot(t, "<p>v1</p>"), &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	ctx := context.Background()
	cs := connect(t, url, "", "2025-11-25", nil)
	read := func() string {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "ui://shop.cart"})
		if err != nil {
			return "error: " + err.Error()
		}
		return res.Contents[0].Text
	}
	if got := read(); got != "<p>v1</p>" {
		t.Fatalf("before the swap: %s", got)
	}
	if err := h.Swap(shopSnapshot(t, "<p>v2</p>")); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "<p>v2</p>" {
		t.Errorf("after the swap: %s, want v2", got)
	}
	app := agnara.New("shop", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "cart", Description: "The cart."}), nil)
	plain, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Swap(plain); err != nil {
		t.Fatal(err)
	}
	if got := read(); !strings.Contains(got, "Resource not found") {
		t.Errorf("after the view went: %s", got)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 0 {
		t.Errorf("resources/list after the view went: %+v, %v", res, err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Meta != nil {
		t.Errorf("tools/list after the view went: %s, %v", mustJSON(t, tools), err)
	}
}

// The server NewServer builds (and RunStdio, which shares it) serves views
// too.
func TestUIInMemory(t *testing.T) {
	cs := inMemory(t, shopSnapshot(t, cartView))
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://shop.cart"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != cartView || res.Contents[0].MIMEType != uiMIME {
		t.Errorf("read = %+v, %v", res, err)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions[uiExt]; !ok {
		t.Errorf("no %s extension", uiExt)
	}
}

// The review form names each tool's view, and a changed page changes it.
func TestUISnapshotJSON(t *testing.T) {
	doc := func(html string) map[string]any {
		b, err := json.Marshal(shopSnapshot(t, html))
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Tools []struct {
				Name string         `json:"name"`
				UI   map[string]any `json:"ui"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, tl := range d.Tools {
			out[tl.Name] = tl.UI
		}
		return out
	}
	v1 := doc("<p>v1</p>")
	sha := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	want := map[string]any{
		"shop.cart": map[string]any{"resourceUri": "ui://shop.cart", "csp": map[string]any{"connectDomains": []any{"https://api.shop.test"}}, "prefersBorder": true,
			"htmlSha256": sha("<p>v1</p>")},
		"shop.ledger":       map[string]any{"resourceUri": "ui://shop/ledger", "htmlSha256": sha("<p>ledger</p>")},
		"shop.report":       map[string]any{"resourceUri": "ui://shop/report", "rendered": true},
		"shop.report_admin": map[string]any{"resourceUri": "ui://shop/report", "rendered": true},
		"shop.plain":        map[string]any(nil),
	}
	if diff := cmp.Diff(want, v1); diff != "" {
		t.Errorf("views in the review form (-want +got):\n%s", diff)
	}
	v2 := doc("<p>v2</p>")
	if v1["shop.cart"].(map[string]any)["htmlSha256"] == v2["shop.cart"].(map[string]any)["htmlSha256"] {
		t.Error("a changed page left the review form unchanged")
	}
}

// A view is copied when declared and every projection is fresh: changing
// the options after Tool, or what Tools and Resources return, changes
// nothing served.
func TestUIDeclarationIsCopied(t *testing.T) {
	app := agnara.New("copy", nil)
	exp := mcpexpose.New(app)
	ui := &mcpexpose.UI{HTML: "<p>a</p>", CSP: mcpexpose.UICSP{ConnectDomains: []string{"https://a.test"}}}
	exp.Tool(app.Capability(func() (string, error) { return "", nil }, &agnara.CapabilityOptions{Name: "view", Description: "A view."}), &mcpexpose.ToolOptions{UI: ui})
	ui.HTML, ui.CSP.ConnectDomains[0], ui.URI = "<p>b</p>", "https://b.test", "ui://elsewhere"
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	snap.Tools()[0].Meta["ui"].(map[string]any)["resourceUri"] = "ui://changed"
	snap.Resources()[0].Meta["ui"].(map[string]any)["csp"].(map[string]any)["connectDomains"].([]string)[0] = "https://changed.test"
	if got := mustJSON(t, snap.Tools()[0].Meta); got != `{"ui":{"resourceUri":"ui://copy.view"}}` {
		t.Errorf("tool _meta = %s", got)
	}
	cs := inMemory(t, snap)
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "ui://copy.view"})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, res.Contents); got != `[{"uri":"ui://copy.view","mimeType":"text/html;profile=mcp-app","text":"\u003cp\u003ea\u003c/p\u003e","_meta":{"ui":{"csp":{"connectDomains":["https://a.test"]}}}}]` {
		t.Errorf("read = %s", got)
	}
}

// A rendered view may differ by caller: no shared cache may keep it, even
// when every tool linking it is public; a static public view may be kept.
func TestUIRenderedReadIsPrivate(t *testing.T) {
	app := agnara.New("views", nil)
	exp := mcpexpose.New(app)
	noop := func() (string, error) { return "", nil }
	exp.Tool(app.Capability(noop, &agnara.CapabilityOptions{Name: "rendered", Description: "A rendered view."}),
		&mcpexpose.ToolOptions{UI: &mcpexpose.UI{Render: func(context.Context) (string, error) { return "<p>hi</p>", nil }}})
	exp.Tool(app.Capability(noop, &agnara.CapabilityOptions{Name: "static", Description: "A static view."}),
		&mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: "<p>hi</p>"}})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, &fixture{snap: snap}, nil)
	cs := connect(t, srv.URL+"/mcp", "", "", nil)
	for uri, want := range map[string]string{"ui://views.rendered": "private", "ui://views.static": "public"} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		if res.CacheScope != want {
			t.Errorf("read %s: cacheScope %q, want %q", uri, res.CacheScope, want)
		}
	}
}
