package gateway

import (
	"slices"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
)

// Resources and prompts: an upstream's resources, resource templates and
// prompts are imported with mcpimport.DiscoverFeatures beside its tools,
// on the same session, into a catalog of their own (whose staleness is
// their own: a resources/list_changed leaves the tools serving), and
// served through the same exposure. While the upstream is down they are
// not listed, and a read or get is answered as for one that does not
// exist.

// featureBindings returns the mcpimport bindings of an upstream's
// resources, templates and prompts, and whether it has any.
func featureBindings(cfg *Upstream) (mcpimport.FeatureBindings, bool) {
	var b mcpimport.FeatureBindings
	resources := func(list []Resource) map[string]mcpimport.ResourceBinding {
		if len(list) == 0 {
			return nil
		}
		m := make(map[string]mcpimport.ResourceBinding, len(list))
		for _, r := range list {
			m[r.Remote] = mcpimport.ResourceBinding{
				Name: r.Name, URI: r.URI, Title: r.Title, Description: r.Description,
				Scopes: slices.Clone(r.Scopes), MIMETypes: slices.Clone(r.MIMETypes),
			}
		}
		return m
	}
	b.Resources, b.ResourceTemplates = resources(cfg.Resources), resources(cfg.ResourceTemplates)
	if len(cfg.Prompts) > 0 {
		b.Prompts = make(map[string]mcpimport.PromptBinding, len(cfg.Prompts))
		for _, p := range cfg.Prompts {
			b.Prompts[p.Remote] = mcpimport.PromptBinding{Name: p.Name, Title: p.Title, Description: p.Description, Scopes: slices.Clone(p.Scopes)}
		}
	}
	return b, len(b.Resources)+len(b.ResourceTemplates)+len(b.Prompts) > 0
}

// exposeFeatures registers a catalog's resources, templates and prompts
// with app and declares them to exp: resources at their local URIs,
// templates at their local URI templates, prompts as "<gateway>.<name>".
func exposeFeatures(app *agnara.App, exp *mcpexpose.Exposure, cat *mcpimport.Catalog) {
	for _, r := range cat.RegisterResources(app) {
		if r.URITemplate != "" {
			exp.ResourceTemplate(r.Capability, &mcpexpose.ResourceTemplateOptions{URITemplate: r.URITemplate, Name: r.Name, MIMEType: r.MIMEType})
			continue
		}
		exp.Resource(r.Capability, &mcpexpose.ResourceOptions{URI: r.URI, Name: r.Name, MIMEType: r.MIMEType})
	}
	for _, c := range cat.RegisterPrompts(app) {
		exp.Prompt(c, nil)
	}
}

// featuresStale is closed when the served resources and prompts go stale;
// nil (never ready) without them.
func (s served) featuresStale() <-chan struct{} {
	if s.features == nil {
		return nil
	}
	return s.features.Stale()
}
