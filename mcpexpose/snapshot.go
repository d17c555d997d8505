package mcpexpose

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Snapshot is the compiled, immutable set of tools, resources, resource
// templates and prompts of an exposure, in declaration order. Servers and handlers are built from it.
//
// A Snapshot is safe for concurrent use; nothing it returns aliases its own
// state.
type Snapshot struct {
	app    *agnara.App
	tools  []*tool
	byName map[string]*tool
	// withdrawn are the names answered with a fixed failure, in
	// declaration order and by name (withdrawn.go); none is a tool.
	withdrawnList []*withdrawnTool
	withdrawn     map[string]*withdrawnTool
	// search, when declared, lists the search tools instead of every
	// tool (search.go).
	search *search

	resources []*resource
	byURI     map[string]*resource
	templates []*resourceTemplate
	prompts   []*prompt
	byPrompt  map[string]*prompt
	// uis are the views tools link, in declaration order (apps.go).
	uis  []*uiView
	byUI map[string]*uiView
}

// tool is one compiled tool.
type tool struct {
	name   string
	site   site.Site
	plan   *execution.Plan
	def    mcp.Tool           // the projection prototype; copied before use
	output *jsonschema.Schema // validates the {"result": ...} envelope; nil for content tools
	// enforced: the output type guarantees the schema, so successes are
	// not validated against it (registry.PlanFacts.OutputEnforced).
	enforced bool
	// proof proves successes valid from their Go value when the schema
	// can reject them (!enforced): built for the type of the first value
	// checked, again when another type comes (outputProof, call.go).
	proof atomic.Pointer[projection.Checker]
	// checked: the capability validates its Result's structured value
	// against the schema itself, so it is not parsed and validated again
	// (registry.PlanFacts.StructuredChecked, ADR 81).
	checked bool
	// asks: a call may ask its caller for input, so a handshake-era
	// session's call the edge answers gets a stream for its questions
	// (registry.PlanFacts.Asks), read here once rather than per request.
	asks bool
	// digest names what the tool is: its plan's identity and scopes and its
	// published definition, hashed. Tools of two snapshots with the same
	// name and digest are the same tool, in this process or another: a swap
	// leaves it alone and a round begun on one completes on the other.
	digest string
	// params are the header parameters of the input schema, checked by the
	// Handler; sdkSchema is the input schema without them, which the SDK
	// is given. Both nil for a tool without header parameters.
	params    []headerParam
	sdkSchema []byte
	// task is how the tool runs as a task; askFirst that the handler
	// detaches by itself (ToolOptions).
	task     TaskSupport
	askFirst bool
	// ui is the tool's declared view and uiURI its URI, published as
	// _meta.ui.resourceUri; nil and "" without one.
	ui    *UI
	uiURI string
}

// App returns the application the snapshot exposes.
func (s *Snapshot) App() *agnara.App { return s.app }

// Names returns the tools' wire names, in declaration order.
func (s *Snapshot) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.name
	}
	return names
}

// Plan returns the plan behind the tool with the given wire name.
func (s *Snapshot) Plan(name string) (*execution.Plan, bool) {
	t, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return t.plan, true
}

// Scopes returns every scope some tool, resource, template, prompt or
// withdrawn tool declares, each once, in order of first declaration (tools
// first, withdrawn tools last): what an authorization server may be asked
// for.
func (s *Snapshot) Scopes() []string {
	var out []string
	seen := map[string]bool{}
	add := func(scopes []string) {
		for _, sc := range scopes {
			if !seen[sc] {
				seen[sc] = true
				out = append(out, sc)
			}
		}
	}
	for _, p := range s.plans() {
		add(p.Scopes())
	}
	for _, w := range s.withdrawnList {
		add(w.scopes)
	}
	return out
}

// plans returns the plans of everything the snapshot exposes, tools first.
func (s *Snapshot) plans() []*execution.Plan {
	ps := make([]*execution.Plan, 0, len(s.tools)+len(s.resources)+len(s.templates)+len(s.prompts))
	for _, t := range s.tools {
		ps = append(ps, t.plan)
	}
	for _, r := range s.resources {
		ps = append(ps, r.plan)
	}
	for _, t := range s.templates {
		ps = append(ps, t.plan)
	}
	for _, pr := range s.prompts {
		ps = append(ps, pr.plan)
	}
	return ps
}

// Tools projects every tool to an SDK tool definition, in declaration order.
// The definitions are fresh copies: changing them changes nothing in the
// snapshot or in later projections.
func (s *Snapshot) Tools() []*mcp.Tool {
	out := make([]*mcp.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t.project()
	}
	return out
}

// Tool projects the tool with the given wire name. It is an error naming the
// tool when there is none.
func (s *Snapshot) Tool(name string) (*mcp.Tool, error) {
	t, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("mcpexpose: no tool named %q in the snapshot", name)
	}
	return t.project(), nil
}

// visible returns the tools principal may see (and call), in order. Every
// tool is listed to whoever may call it: nothing runnable is hidden.
func (s *Snapshot) visible(p policy.Principal) []*tool {
	out := make([]*tool, 0, len(s.tools))
	for _, t := range s.tools {
		if t.plan.Allows(p) {
			out = append(out, t)
		}
	}
	return out
}

// callerDependent reports whether what a caller sees depends on who it is.
func (s *Snapshot) callerDependent() bool {
	for _, p := range s.plans() {
		if len(p.Scopes()) > 0 {
			return true
		}
	}
	return false
}

func newTool(d decl, p *execution.Plan) (*tool, error) {
	facts := registry.Facts(p)
	t := &tool{name: d.name, site: d.site, plan: p, task: d.task, askFirst: d.askFirst, asks: facts.Asks}
	o := p.Capability().Options()
	t.def = mcp.Tool{
		Name:        d.name,
		Title:       o.Title,
		Description: o.Description,
		InputSchema: json.RawMessage(p.InputSchema()),
		Annotations: annotations(p.Annotations()),
	}
	if d.ui != nil {
		t.ui, t.uiURI = d.ui, uiURIOf(d)
		t.def.Meta = toolUIMeta(t.uiURI)
	}
	params, sdkSchema, err := headerParams(p.InputSchema())
	if err != nil {
		return nil, fmt.Errorf("header parameters: %v", err)
	}
	if params != nil {
		t.params, t.sdkSchema = params, sdkSchema
	}
	if !facts.ReturnsContent {
		env := envelopeSchema(p.OutputSchema())
		t.enforced = facts.OutputEnforced
		if !t.enforced {
			// Tools returning the same type share one envelope validator.
			// A tool whose output type guarantees its schema needs none
			// (successes are not validated), and compiling one per output
			// type was half of a compile's cost.
			v, err := schemacheck.CompileShared(env)
			if err != nil {
				return nil, fmt.Errorf("output schema does not compile: %v", err)
			}
			t.output = v
		}
		t.def.OutputSchema = json.RawMessage(env)
	} else if s := p.OutputSchema(); s != nil {
		// An execution.Result's own schema, published as it is: the
		// structured content is the value itself, with no envelope.
		v, err := schemacheck.CompileShared(s)
		if err != nil {
			return nil, fmt.Errorf("output schema does not compile: %v", err)
		}
		t.output = v
		t.checked = facts.StructuredChecked
		t.def.OutputSchema = json.RawMessage(s)
	}
	def, err := json.Marshal(&t.def)
	if err != nil {
		return nil, fmt.Errorf("tool definition does not encode: %v", err)
	}
	h := sha256.New()
	for _, part := range append([]string{p.Identity()}, p.Scopes()...) {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	h.Write(def)
	if t.task != TaskNever {
		// Only task tools hash it, so that other digests stay as they were.
		h.Write([]byte{0, byte(t.task)})
		if t.askFirst {
			h.Write([]byte{1})
		}
	}
	t.digest = base64.RawURLEncoding.EncodeToString(h.Sum(nil))
	return t, nil
}

// envelopeSchema is the output schema of a tool: exactly the
// {"result": value} envelope of successful results.
func envelopeSchema(value json.RawMessage) []byte {
	if value == nil {
		value = json.RawMessage(`{"type":"null"}`) // functions that return only error
	}
	b := []byte(`{"type":"object","properties":{"result":`)
	b = append(b, value...)
	return append(b, `},"required":["result"],"additionalProperties":false}`...)
}

// annotations projects capability annotations. Nothing declared publishes
// nothing; otherwise every hint is published exactly as declared.
func annotations(a agnara.Annotations) *mcp.ToolAnnotations {
	if a == 0 {
		return nil
	}
	destructive := a.Has(agnara.Destructive)
	openWorld := a.Has(agnara.OpenWorld)
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    a.Has(agnara.ReadOnly),
		DestructiveHint: &destructive,
		IdempotentHint:  a.Has(agnara.Idempotent),
		OpenWorldHint:   &openWorld,
	}
}

// project returns a detached copy of the tool's definition.
func (t *tool) project() *mcp.Tool {
	c := t.def
	c.InputSchema = json.RawMessage(slices.Clone(t.def.InputSchema.(json.RawMessage)))
	if t.def.OutputSchema != nil {
		c.OutputSchema = json.RawMessage(slices.Clone(t.def.OutputSchema.(json.RawMessage)))
	}
	if t.def.Annotations != nil {
		a := *t.def.Annotations
		d, o := *a.DestructiveHint, *a.OpenWorldHint
		a.DestructiveHint, a.OpenWorldHint = &d, &o
		c.Annotations = &a
	}
	if t.ui != nil {
		c.Meta = toolUIMeta(t.uiURI)
	}
	return &c
}
