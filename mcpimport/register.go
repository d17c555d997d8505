package mcpimport

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
)

// Register registers every tool of the catalog with app as a capability, in
// snapshot order, and returns their handles. Each capability is named by its
// binding, published with the remote input schema and, when the remote tool
// has one, its output schema (both verbatim, in canonical form), annotated
// read-only, and guarded by the binding's scopes; the application's scope
// rule, policies, outcomes and logging apply as to any capability. A call
// returns an [execution.Result]: the remote content blocks and, under the
// output schema, the remote structured content as it is (ADR 40). Expose
// them as usual (with mcpexpose, say).
//
// Register them while the session stays open. When the catalog goes stale,
// build a new application from a new catalog.
func (c *Catalog) Register(app *agnara.App) []*agnara.Capability {
	caps := make([]*agnara.Capability, 0, len(c.tools))
	for _, t := range c.tools {
		if t.entry.Mode == ModeConfirm {
			caps = append(caps, t.registerWrite(app))
			continue
		}
		desc := t.publishedDescription()
		// t.call validates the structured content of every result against
		// the output schema registered here (project), with a reason of
		// its own when it fails: exposures need not again (ADR 81).
		caps = append(caps, app.Capability(registry.CheckedResult(t.call), &agnara.CapabilityOptions{
			Name:         t.entry.Name,
			Title:        t.entry.Title,
			Description:  desc,
			Scopes:       slices.Clone(t.sel.scopes),
			InputSchema:  json.RawMessage(t.entry.InputSchema),
			OutputSchema: t.outputSchema(),
			Annotations:  agnara.ReadOnly,
		}))
	}
	return caps
}

// t.call has the type registry.CheckedResult takes.
var _ func(*execution.Context, json.RawMessage) (execution.Result, error) = (*tool)(nil).call

// outputSchema is the local tool's output schema: the remote one, as the
// snapshot holds it, or nil when the remote tool has none.
func (t *tool) outputSchema() json.RawMessage {
	if t.entry.OutputSchema == nil {
		return nil
	}
	return json.RawMessage(t.entry.OutputSchema)
}

// publishedDescription is the binding's description, else the remote
// tool's, else (a remote tool may have none, and every published tool
// needs one) the binding's title.
func (t *tool) publishedDescription() string {
	return cmp.Or(t.sel.description, t.entry.Description, t.entry.Title)
}
