package mcpimport

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UIMIMEType is the media type of an MCP App view (the MCP Apps
// extension, io.modelcontextprotocol/ui): the only one discovery imports
// a tool's UI under.
const UIMIMEType = "text/html;profile=mcp-app"

// maxUIURIBytes bounds a remote UI URI.
const maxUIURIBytes = 512

// UI is the MCP App view a remote tool links, as discovery imported it
// (ADR 85): the remote tool lists "_meta": {"ui": {"resourceUri":
// "ui://…"}}, and discovery read that resource on the same session, one
// text content of media type [UIMIMEType] within [Limits.UIBytes], with
// the "csp" and "prefersBorder" members of its "_meta.ui". It is part of
// the tool's [Entry] and of its identity: an upstream that changes one
// byte of the page, one origin of its policy or its URI offers another
// definition.
//
// Discovery imports nothing else of the view: the resource's other
// "_meta.ui" members (a sandbox domain, permissions) are not imported, so
// that a host serving the view grants it no more than its policy.
type UI struct {
	// URI is the remote ui:// URI the tool links: "ui://", then one or
	// more segments of ASCII letters, digits, '.', '_', '~' and '-'
	// separated by '/', none of them "." or "..", with no query or
	// fragment, so that a host may serve it under a prefix of its own
	// ("ui://<prefix>/" and the rest) without it reaching out of the
	// prefix.
	URI string
	// HTML is the page, as the remote server's resources/read gave it:
	// valid UTF-8, byte for byte.
	HTML string
	// CSP is the view's Content Security Policy: the origins its host may
	// let it reach.
	CSP UICSP
	// PrefersBorder is the view's "_meta.ui.prefersBorder".
	PrefersBorder bool
}

// UICSP is the Content Security Policy a view asks of its host, each list
// of origins: "https://" and a host name (its first label may be "*"),
// with an optional port, or "http://" on localhost or 127.0.0.1; no path,
// no query, no other wildcard. Discovery refuses a UI with anything else
// in its policy, a directive smuggled into an origin included.
type UICSP struct {
	ConnectDomains  []string
	ResourceDomains []string
	FrameDomains    []string
	BaseURIDomains  []string
}

// clone returns a copy of ui sharing nothing with it; nil for nil.
func (ui *UI) clone() *UI {
	if ui == nil {
		return nil
	}
	c := *ui
	c.CSP = UICSP{
		ConnectDomains:  slices.Clone(ui.CSP.ConnectDomains),
		ResourceDomains: slices.Clone(ui.CSP.ResourceDomains),
		FrameDomains:    slices.Clone(ui.CSP.FrameDomains),
		BaseURIDomains:  slices.Clone(ui.CSP.BaseURIDomains),
	}
	return &c
}

// uiLink returns the ui:// URI a listed tool links, "" when it links
// none, or an error when its "_meta.ui.resourceUri" is there but not a
// URI discovery imports.
func uiLink(remote string, def *mcp.Tool) (string, *Error) {
	m, ok := def.Meta["ui"]
	if !ok {
		return "", nil
	}
	ui, ok := m.(map[string]any)
	if !ok {
		return "", newError(UIUnsupported, remote, "_meta.ui is not an object")
	}
	v, ok := ui["resourceUri"]
	if !ok {
		return "", nil // a tool may set other members (visibility) without a view
	}
	uri, ok := v.(string)
	if !ok {
		return "", newError(UIUnsupported, remote, "_meta.ui.resourceUri is not a string")
	}
	if err := checkUIURI(uri); err != nil {
		return "", newError(UIUnsupported, remote, "_meta.ui.resourceUri %s: %v", quote(uri), err)
	}
	return uri, nil
}

// checkUIURI checks a remote UI URI against the shape [UI.URI] documents.
func checkUIURI(uri string) error {
	rest, ok := strings.CutPrefix(uri, "ui://")
	switch {
	case !ok:
		return errors.New(`want a "ui://" URI`)
	case len(uri) > maxUIURIBytes:
		return fmt.Errorf("longer than %d bytes", maxUIURIBytes)
	}
	for seg := range strings.SplitSeq(rest, "/") {
		switch seg {
		case "":
			return errors.New("an empty segment")
		case ".", "..":
			return errors.New(`a "." or ".." segment`)
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._~-", r)) {
				return fmt.Errorf("%q: want ASCII letters, digits, '.', '_', '~', '-' and '/'", r)
			}
		}
	}
	return nil
}

// uiReader reads the UIs of one discovery, each URI once: two tools
// linking one view get the same page.
type uiReader struct {
	session *mcp.ClientSession
	limits  Limits
	read    map[string]uiRead
}

type uiRead struct {
	ui  *UI
	err *Error
}

// ui returns the UI of the selected remote tool, which links uri: an
// error with [UIUnsupported] when the view cannot be imported, or with
// [DiscoveryFailed] when the read failed for a reason another discovery
// may not meet (the session, a timeout).
func (r *uiReader) ui(ctx context.Context, remote, uri string) (*UI, error) {
	got, ok := r.read[uri]
	if !ok {
		got.ui, got.err = r.fetch(ctx, uri)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r.read[uri] = got
	}
	if got.err != nil {
		e := *got.err
		e.Tool = remote
		return nil, &e
	}
	return got.ui.clone(), nil
}

func (r *uiReader) fetch(ctx context.Context, uri string) (*UI, *Error) {
	bad := func(format string, args ...any) (*UI, *Error) {
		return nil, newError(UIUnsupported, "", "its UI %s: %s", quote(uri), fmt.Sprintf(format, args...))
	}
	if ir := r.session.InitializeResult(); ir == nil || ir.Capabilities == nil || ir.Capabilities.Resources == nil {
		return bad("the server offers no resources to read it from")
	}
	rctx, cancel := context.WithTimeout(ctx, r.limits.CallTimeout)
	defer cancel()
	res, err := r.session.ReadResource(rctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		if featureReason(rctx, err, true) == ReasonResourceNotFound {
			return bad("the server has no such resource")
		}
		return nil, &Error{Reason: DiscoveryFailed, msg: fmt.Sprintf("resources/read of the UI %s failed", quote(uri)), cause: err}
	}
	switch {
	case res == nil:
		return bad("no answer")
	case len(res.InputRequests) > 0 || res.RequestState != "":
		return bad("the server asked a question instead of answering")
	case len(res.Contents) != 1 || res.Contents[0] == nil:
		return bad("%d contents: want one", len(res.Contents))
	}
	c := res.Contents[0]
	switch {
	case c.URI != uri:
		return bad("the content is of another URI, %s", quote(c.URI))
	case !isUIMIMEType(c.MIMEType):
		return bad("media type %s: want %s", quote(c.MIMEType), UIMIMEType)
	case c.Blob != nil:
		return bad("a blob: want the page as text")
	case c.Text == "":
		return bad("no text")
	case len(c.Text) > r.limits.UIBytes:
		return bad("%d bytes: larger than the limit, %d bytes", len(c.Text), r.limits.UIBytes)
	case !utf8.ValidString(c.Text):
		return bad("the text is not UTF-8")
	}
	ui := &UI{URI: uri, HTML: c.Text}
	if err := readUIMeta(ui, c.Meta); err != nil {
		return bad("_meta.ui: %v", err)
	}
	return ui, nil
}

// isUIMIMEType reports whether s names [UIMIMEType]: text/html with the
// one parameter profile=mcp-app.
func isUIMIMEType(s string) bool {
	mt, params, err := mime.ParseMediaType(s)
	return err == nil && mt == "text/html" && len(params) == 1 && params["profile"] == "mcp-app"
}

// readUIMeta reads the "csp" and "prefersBorder" members of a UI
// resource's "_meta.ui" into ui.
func readUIMeta(ui *UI, meta mcp.Meta) error {
	m, ok := meta["ui"]
	if !ok {
		return nil
	}
	obj, ok := m.(map[string]any)
	if !ok {
		return errors.New("not an object")
	}
	if v, ok := obj["prefersBorder"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return errors.New("prefersBorder is not a boolean")
		}
		ui.PrefersBorder = b
	}
	v, ok := obj["csp"]
	if !ok || v == nil {
		return nil
	}
	csp, ok := v.(map[string]any)
	if !ok {
		return errors.New("csp is not an object")
	}
	lists := map[string]*[]string{
		"connectDomains":  &ui.CSP.ConnectDomains,
		"resourceDomains": &ui.CSP.ResourceDomains,
		"frameDomains":    &ui.CSP.FrameDomains,
		"baseUriDomains":  &ui.CSP.BaseURIDomains,
	}
	for _, k := range sortedKeys(csp) {
		dst, known := lists[k]
		if !known {
			// An unknown directive may grant what nobody reviewed.
			return fmt.Errorf("csp.%s is not a member the gateway knows (connectDomains, resourceDomains, frameDomains, baseUriDomains)", quote(k))
		}
		arr, ok := csp[k].([]any)
		if !ok && csp[k] != nil {
			return fmt.Errorf("csp.%s is not an array", k)
		}
		for i, e := range arr {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("csp.%s[%d] is not a string", k, i)
			}
			if err := checkOrigin(s); err != nil {
				return fmt.Errorf("csp.%s[%d] %s: %v", k, i, quote(s), err)
			}
			*dst = append(*dst, s)
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkOrigin checks one origin of a view's policy against [UICSP]'s
// rule: the origin, exactly as written, is scheme, host and port, and
// nothing else.
func checkOrigin(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" || u.User != nil || u.Host == "" {
		return errors.New("want an origin, scheme://host[:port]")
	}
	host, port := u.Hostname(), u.Port()
	want := u.Scheme + "://" + u.Host
	switch {
	case s != want:
		return errors.New("want an origin alone: no path, query, fragment or anything else")
	case port != "":
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
			return errors.New("the port is not one")
		}
	}
	local := host == "localhost" || host == "127.0.0.1"
	switch {
	case u.Scheme == "http" && local:
		return nil
	case u.Scheme != "https":
		return errors.New(`want https (or http on localhost or 127.0.0.1)`)
	case net.ParseIP(host) == nil && !isHostName(strings.TrimPrefix(host, "*.")):
		return errors.New(`want a host name (its first label may be "*") or an IP address`)
	}
	return nil
}

// isHostName reports whether s is a DNS host name in lower case: labels
// of letters, digits and inner hyphens, joined by dots.
func isHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}

// uiDoc is a UI's member of an entry's document ([Entry.MarshalJSON]).
type uiDoc struct {
	CSP           *cspDoc  `json:"csp,omitempty"`
	HTML          []string `json:"html"`
	MIMEType      string   `json:"mimeType"`
	PrefersBorder bool     `json:"prefersBorder"`
	URI           string   `json:"uri"`
}

type cspDoc struct {
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
}

// newUIDoc returns ui's document; nil for nil.
func newUIDoc(ui *UI) *uiDoc {
	if ui == nil {
		return nil
	}
	d := &uiDoc{HTML: htmlLines(ui.HTML), MIMEType: UIMIMEType, PrefersBorder: ui.PrefersBorder, URI: ui.URI}
	c := ui.CSP
	if len(c.BaseURIDomains)+len(c.ConnectDomains)+len(c.FrameDomains)+len(c.ResourceDomains) > 0 {
		d.CSP = &cspDoc{BaseURIDomains: c.BaseURIDomains, ConnectDomains: c.ConnectDomains, FrameDomains: c.FrameDomains, ResourceDomains: c.ResourceDomains}
	}
	return d
}

// htmlLines splits a page after each "\n": joined, the lines are the page.
func htmlLines(html string) []string {
	lines := strings.SplitAfter(html, "\n")
	if n := len(lines); n > 1 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// ui returns the UI the document describes, checked as discovery checks
// one (but for its size): nil for nil.
func (d *uiDoc) ui() (*UI, error) {
	if d == nil {
		return nil, nil
	}
	ui := &UI{URI: d.URI, HTML: strings.Join(d.HTML, ""), PrefersBorder: d.PrefersBorder}
	if d.CSP != nil {
		ui.CSP = UICSP{ConnectDomains: d.CSP.ConnectDomains, ResourceDomains: d.CSP.ResourceDomains, FrameDomains: d.CSP.FrameDomains, BaseURIDomains: d.CSP.BaseURIDomains}
	}
	if err := checkUIURI(d.URI); err != nil {
		return nil, fmt.Errorf("uri %s: %v", quote(d.URI), err)
	}
	if d.MIMEType != UIMIMEType {
		return nil, fmt.Errorf("mimeType %s: want %s", quote(d.MIMEType), UIMIMEType)
	}
	if ui.HTML == "" {
		return nil, errors.New("html: no page")
	}
	for name, list := range map[string][]string{"connectDomains": ui.CSP.ConnectDomains, "resourceDomains": ui.CSP.ResourceDomains, "frameDomains": ui.CSP.FrameDomains, "baseUriDomains": ui.CSP.BaseURIDomains} {
		for i, o := range list {
			if err := checkOrigin(o); err != nil {
				return nil, fmt.Errorf("csp.%s[%d] %s: %v", name, i, quote(o), err)
			}
		}
	}
	return ui, nil
}
