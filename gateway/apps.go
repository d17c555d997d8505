package gateway

import (
	"slices"
	"strings"

	"github.com/agnara-go/agnara/mcpexpose"
)

// viewURI is the URI under which the gateway serves the view of upstream
// up whose remote URI is remote: "ui://<upstream>/" and what follows
// "ui://" in the remote URI, so that remote ui://viewer/index.html of
// upstream files is ui://files/viewer/index.html (ADR 85). Discovery
// imports only remote URIs of plain segments, none "." or ".."
// (mcpimport.UI), and upstream names hold no '/': two upstreams' views
// never share a URI, and none reaches out of its upstream's prefix.
func viewURI(up, remote string) string {
	return "ui://" + up + "/" + strings.TrimPrefix(remote, "ui://")
}

// toolOptions returns how the gateway exposes the bound tool name of u,
// which is served (its live definition is the pinned one): with the view
// its pin holds, under the upstream's prefix, the accepted bytes and never
// the upstream's live ones; nil when the pin has no view. Must be called
// with g.mu held, or before the upstreams run.
func (g *Gateway) toolOptions(u *upstream, name string) *mcpexpose.ToolOptions {
	p, ok := g.lock.Pin(name)
	if !ok || p.Entry.UI == nil {
		return nil
	}
	ui := p.Entry.UI
	return &mcpexpose.ToolOptions{UI: &mcpexpose.UI{
		URI:  viewURI(u.cfg.Name, ui.URI),
		HTML: ui.HTML,
		CSP: mcpexpose.UICSP{
			ConnectDomains:  slices.Clone(ui.CSP.ConnectDomains),
			ResourceDomains: slices.Clone(ui.CSP.ResourceDomains),
			FrameDomains:    slices.Clone(ui.CSP.FrameDomains),
			BaseURIDomains:  slices.Clone(ui.CSP.BaseURIDomains),
		},
		PrefersBorder: ui.PrefersBorder,
	}}
}
