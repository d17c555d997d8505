package mcpexpose

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// The MCP Apps extension (SEP-1865): its identifier, declared in the
// server's capabilities when a tool has a UI (or the server is swappable),
// and the media type of a view.
const (
	uiExtension = "io.modelcontextprotocol/ui"
	uiMIMEType  = "text/html;profile=mcp-app"
)

// UI is the view of an MCP App (the io.modelcontextprotocol/ui extension,
// see docs/apps.md): an HTML page a host renders beside the tool's results,
// in a sandboxed frame, and which may call the server's tools through the
// host. It is served as a resource at URI (mime type
// "text/html;profile=mcp-app"), which the tool's definition links as
// _meta.ui.resourceUri. A view is code a host runs: it is published with
// the same care as the tool, readable only by callers who may see a tool
// linking it, and a tool call it makes is an ordinary tools/call with the
// caller's credentials.
type UI struct {
	// URI is the ui:// URI of the view's resource. Default: "ui://" + the
	// tool's wire name. Tools may share one view by declaring the same URI;
	// their UI values must then be equal (same HTML or same Render func
	// pointer, same CSP), else Compile reports it.
	URI string
	// HTML is the page. Exactly one of HTML and Render.
	HTML string
	// Render renders the page on each resources/read (for example from a
	// template); an error is logged and the caller gets an internal error,
	// never its text.
	Render func(ctx context.Context) (string, error)
	// CSP lists the origins the host may let the view reach.
	CSP UICSP
	// PrefersBorder asks the host to draw a border round the view.
	PrefersBorder bool
}

// UICSP is the Content Security Policy of a view: the origins its host may
// let it reach, each such as "https://api.example.com",
// "https://*.example.com" or "http://localhost:8080". Empty lists mean
// none: a view that loads nothing from elsewhere needs no CSP.
type UICSP struct {
	// ConnectDomains may be fetched from, or opened as WebSockets.
	ConnectDomains []string
	// ResourceDomains may serve scripts, styles, images, fonts and media.
	ResourceDomains []string
	// FrameDomains may be framed by the view.
	FrameDomains []string
	// BaseURIDomains may be the document's base URI.
	BaseURIDomains []string
}

// cloneUI returns a copy of u that shares no slice with it.
func cloneUI(u *UI) *UI {
	c := *u
	c.CSP = UICSP{
		ConnectDomains:  slices.Clone(u.CSP.ConnectDomains),
		ResourceDomains: slices.Clone(u.CSP.ResourceDomains),
		FrameDomains:    slices.Clone(u.CSP.FrameDomains),
		BaseURIDomains:  slices.Clone(u.CSP.BaseURIDomains),
	}
	return &c
}

// uiView is one compiled view: the resource at uri and the tools linking
// it, in declaration order.
type uiView struct {
	uri   string
	ui    *UI
	site  site.Site // the first tool declaring it
	tools []*tool
	meta  map[string]any // _meta.ui of the resource and its contents
	def   mcp.Resource
	// digest names the view's definition and, for static HTML, its page.
	digest string
	// htmlSHA256 is the hex SHA-256 of static HTML; "" for Render.
	htmlSHA256 string
}

// visibleTo reports whether p may see the view: whether p may see a tool
// linking it.
func (v *uiView) visibleTo(p policy.Principal) bool {
	return slices.ContainsFunc(v.tools, func(t *tool) bool { return t.plan.Allows(p) })
}

// scoped reports whether some tool linking the view needs a scope.
func (v *uiView) scoped() bool {
	return slices.ContainsFunc(v.tools, func(t *tool) bool { return len(t.plan.Scopes()) > 0 })
}

// uiURIOf returns the URI of d's view: declared, or the default.
func uiURIOf(d decl) string {
	if d.ui.URI != "" {
		return d.ui.URI
	}
	return "ui://" + d.name
}

// checkUI returns the mistakes of d's view alone, each at d's site.
func checkUI(d decl) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, site.Errorf(d.site, d.name, format, args...))
	}
	u := d.ui
	if u.URI != "" {
		if !strings.HasPrefix(u.URI, "ui://") || len(u.URI) == len("ui://") {
			fail("ToolOptions.UI.URI %q must be a ui:// URI, such as \"ui://%s\"", u.URI, d.name)
		} else if p, err := url.Parse(u.URI); err != nil || p.Host == "" && p.Opaque == "" && p.Path == "" {
			fail("ToolOptions.UI.URI %q is not a valid URI", u.URI)
		}
	}
	switch {
	case u.HTML == "" && u.Render == nil:
		fail("ToolOptions.UI needs its page: set HTML or Render")
	case u.HTML != "" && u.Render != nil:
		fail("ToolOptions.UI sets both HTML and Render: set exactly one")
	}
	for _, l := range []struct {
		name    string
		origins []string
	}{
		{"ConnectDomains", u.CSP.ConnectDomains},
		{"ResourceDomains", u.CSP.ResourceDomains},
		{"FrameDomains", u.CSP.FrameDomains},
		{"BaseURIDomains", u.CSP.BaseURIDomains},
	} {
		for _, o := range l.origins {
			if err := checkOrigin(o); err != nil {
				fail("ToolOptions.UI.CSP.%s: %v", l.name, err)
			}
		}
	}
	return errs
}

// checkOrigin refuses what is not an origin a view may be let reach:
// https or wss anywhere, http or ws on localhost only, no path, query,
// fragment or credentials, a port from 1 to 65535 if any, and no wildcard
// but a leading "*." host label. The host joins the origins into a
// Content-Security-Policy header as they are written: nothing but an
// origin may pass.
func checkOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an origin: want a scheme and a host, such as \"https://api.example.com\"", o)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(o, "/") || strings.ContainsAny(o, "?#") {
		return fmt.Errorf("%q is not an origin: want only a scheme, a host and a port, without path, query or credentials", o)
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return fmt.Errorf("%q has no valid port: want 1 to 65535, or none", o)
		}
	}
	host := u.Hostname()
	name := strings.TrimPrefix(host, "*.")
	if strings.Contains(name, "*") {
		return fmt.Errorf("%q has a wildcard other than a leading \"*.\" host label", o)
	}
	local := host == "localhost" || host == "127.0.0.1"
	switch u.Scheme {
	case "https", "wss":
	case "http", "ws":
		if !local {
			return fmt.Errorf("%q is not served over TLS: want %s, or %s only on localhost or 127.0.0.1", o, secureScheme(u.Scheme), u.Scheme)
		}
	default:
		return fmt.Errorf("%q: scheme %q is not https, wss, or http or ws on localhost", o, u.Scheme)
	}
	if name == "" || (net.ParseIP(name) == nil && !hostPattern(name)) {
		return fmt.Errorf("%q has no valid host", o)
	}
	return nil
}

func secureScheme(s string) string {
	if s == "ws" {
		return "wss"
	}
	return "https"
}

// hostPattern reports whether name is a DNS name: dot-separated labels of
// letters, digits and '-'.
func hostPattern(name string) bool {
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// sameUI reports whether two tools sharing a URI declared the same view.
func sameUI(a, b *UI) bool {
	return a.HTML == b.HTML && funcPointer(a.Render) == funcPointer(b.Render) && a.PrefersBorder == b.PrefersBorder &&
		slices.Equal(a.CSP.ConnectDomains, b.CSP.ConnectDomains) && slices.Equal(a.CSP.ResourceDomains, b.CSP.ResourceDomains) &&
		slices.Equal(a.CSP.FrameDomains, b.CSP.FrameDomains) && slices.Equal(a.CSP.BaseURIDomains, b.CSP.BaseURIDomains)
}

func funcPointer(f func(context.Context) (string, error)) uintptr {
	if f == nil {
		return 0
	}
	return reflect.ValueOf(f).Pointer()
}

// compileUIs checks the views the tools declare and compiles those of the
// tools that compiled into snap. It returns every mistake: each view's own
// (checkUI), two tools sharing a URI with different views, and a view's URI
// that a resource or a resource template also serves, each at the file:line
// of the tool's declaration.
func (e *Exposure) compileUIs(snap *Snapshot) []error {
	var errs []error
	first := map[string]decl{}
	for _, d := range e.decls {
		if d.ui == nil {
			continue
		}
		own := checkUI(d)
		errs = append(errs, own...)
		if len(own) > 0 || !toolNamePattern.MatchString(d.name) {
			continue
		}
		uri := uiURIOf(d)
		if prev, ok := first[uri]; ok {
			if !sameUI(prev.ui, d.ui) {
				errs = append(errs, site.Errorf(d.site, d.name, "ToolOptions.UI %s differs from the view tool %s declared at %s: tools sharing a view declare the same UI", uri, prev.name, prev.site))
			}
			continue
		}
		first[uri] = d
		if err := e.uiCollision(d, uri); err != nil {
			errs = append(errs, err)
		}
	}
	for _, t := range snap.tools {
		if t.ui == nil {
			continue
		}
		d, ok := first[t.uiURI]
		if !ok {
			continue // a view with a mistake, reported
		}
		v := snap.byUI[t.uiURI]
		if v == nil {
			v = newUIView(t.uiURI, d)
			snap.uis = append(snap.uis, v)
			snap.byUI[t.uiURI] = v
		}
		v.tools = append(v.tools, t)
	}
	return errs
}

// uiCollision reports a resource or resource template that serves uri too.
func (e *Exposure) uiCollision(d decl, uri string) error {
	for _, f := range e.features {
		switch f.kind {
		case resourceKind:
			if f.resource.URI == uri {
				return site.Errorf(d.site, d.name, "ToolOptions.UI URI %s is also the URI of the resource declared at %s", uri, f.site)
			}
		case templateKind:
			if t, err := uritemplate.New(f.template.URITemplate); err == nil && t.Match(uri) != nil {
				return site.Errorf(d.site, d.name, "ToolOptions.UI URI %s is matched by the resource template %s declared at %s", uri, f.template.URITemplate, f.site)
			}
		}
	}
	return nil
}

func newUIView(uri string, d decl) *uiView {
	v := &uiView{uri: uri, ui: d.ui, site: d.site}
	ui := map[string]any{}
	csp := map[string]any{}
	for key, origins := range map[string][]string{
		"connectDomains": d.ui.CSP.ConnectDomains, "resourceDomains": d.ui.CSP.ResourceDomains,
		"frameDomains": d.ui.CSP.FrameDomains, "baseUriDomains": d.ui.CSP.BaseURIDomains,
	} {
		if len(origins) > 0 {
			csp[key] = slices.Clone(origins)
		}
	}
	if len(csp) > 0 {
		ui["csp"] = csp
	}
	if d.ui.PrefersBorder {
		ui["prefersBorder"] = true
	}
	v.meta = ui
	v.def = mcp.Resource{URI: uri, Name: strings.TrimPrefix(uri, "ui://"), MIMEType: uiMIMEType}
	h := sha256.New()
	def, _ := json.Marshal(v.project()) // strings, bools and lists of strings
	h.Write(def)
	if d.ui.Render == nil {
		sum := sha256.Sum256([]byte(d.ui.HTML))
		v.htmlSHA256 = hex.EncodeToString(sum[:])
		h.Write([]byte{0})
		h.Write(sum[:])
	} else {
		h.Write([]byte{1})
	}
	v.digest = base64.RawURLEncoding.EncodeToString(h.Sum(nil))
	return v
}

// uiMeta returns a fresh copy of the _meta of the view's resource.
func (v *uiView) uiMeta() mcp.Meta {
	ui := map[string]any{}
	for k, val := range v.meta {
		if csp, ok := val.(map[string]any); ok {
			c := map[string]any{}
			for ck, origins := range csp {
				c[ck] = slices.Clone(origins.([]string))
			}
			val = c
		}
		ui[k] = val
	}
	return mcp.Meta{"ui": ui}
}

// project returns a fresh copy of the view's resource definition.
func (v *uiView) project() *mcp.Resource {
	def := v.def
	def.Meta = v.uiMeta()
	return &def
}

// toolUIMeta is the _meta a tool with a view publishes.
func toolUIMeta(uri string) mcp.Meta {
	return mcp.Meta{"ui": map[string]any{"resourceUri": uri}}
}

// visibleUIs returns the definitions of the views p may see, in order.
func (s *Snapshot) visibleUIs(p policy.Principal) []*mcp.Resource {
	var out []*mcp.Resource
	for _, v := range s.uis {
		if v.visibleTo(p) {
			out = append(out, v.project())
		}
	}
	return out
}

// readUI answers a resources/read of a view: to p, who may not see it, as
// a resource that does not exist; else its page, rendered if need be. A
// Render error (or panic) is logged; the caller gets an internal error that
// does not carry its text.
func (s *server) readUI(ctx context.Context, req *mcp.ReadResourceRequest, v *uiView, p policy.Principal) (*mcp.ReadResourceResult, error) {
	if !v.visibleTo(p) {
		return nil, resourceNotFound(v.uri)
	}
	html := v.ui.HTML
	if v.ui.Render != nil {
		var err error
		if html, err = render(ctx, v.ui.Render); err != nil {
			s.logger.LogAttrs(ctx, slog.LevelError, "UI render failed", slog.String("uri", v.uri), slog.Any("error", err))
			return nil, failureError(execution.Fail(execution.InternalFailure, "", nil), "uri", v.uri)
		}
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: v.uri, MIMEType: uiMIMEType, Text: html, Meta: v.uiMeta()}}}
	res.TTLMs, res.CacheScope = 0, "public"
	// A rendered page may depend on who asked (Render runs with the
	// caller's context): no shared cache may keep it.
	if v.scoped() || v.ui.Render != nil {
		res.CacheScope = "private"
	}
	return readFinished(req, res, uiMIMEType)
}

// render runs a Render function, turning a panic into an error.
func render(ctx context.Context, f func(context.Context) (string, error)) (html string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in Render: %v", r)
		}
	}()
	return f(ctx)
}
