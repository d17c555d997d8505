package mcpexpose

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/canonjson"
)

// SnapshotFormat is the "format" member of a snapshot's JSON form
// ([Snapshot.MarshalJSON]). It changes when a member changes meaning or
// goes away; members may be added without changing it.
const SnapshotFormat = "agnara.snapshot/v1"

// MarshalJSON returns the snapshot's review form: everything the snapshot
// exposes and how it is governed, as JSON, for reading in a pull request or
// diffing between two builds without serving anything. It is deterministic:
// tools, resources, templates and prompts sorted by name (or URI), scope
// lists sorted, and the whole document in the RFC 8785 canonical form
// (object members sorted, no whitespace), so that the same snapshot gives
// the same bytes in every run and process. [Snapshot.WriteJSON] writes it
// indented. (json.Marshal of a *Snapshot escapes <, > and & inside strings,
// as it does everywhere; a json.Encoder with SetEscapeHTML(false) does not.)
//
// The document (format [SnapshotFormat]):
//
//	{
//	  "format": "agnara.snapshot/v1",
//	  "app": {"name": "users", "version": "0.1.0"},
//	  "scopes": [every scope declared, sorted],
//	  "tools": [{
//	    "name", "title", "description",
//	    "scopes":      [required scopes, sorted; omitted when none],
//	    "annotations": ["destructive", "idempotent", "open-world", "read-only"; omitted when none],
//	    "confirm":     the confirmation question (omitted when none),
//	    "anyoneMayCall": true when the capability declares that anyone,
//	                   anonymous callers included, may call it
//	                   (CapabilityOptions.AnyoneMayCall; omitted otherwise),
//	    "timeout":     the capability's own time limit, such as "5s" (omitted when none),
//	    "rateLimit":   {"rate": calls per second, "burst"} (omitted when none),
//	    "task":        "optional" or "required" (omitted when the tool never runs as a task),
//	    "ui":          the tool's MCP App view (omitted when none, see [UI]):
//	                   {"resourceUri", "csp": {"connectDomains", ...} (omitted when
//	                   empty), "prefersBorder" (omitted when false), and
//	                   "htmlSha256", the hex SHA-256 of static HTML, or
//	                   "rendered": true for a view rendered on each read},
//	    "inputSchema", "outputSchema" (omitted for content tools): as published
//	  }],
//	  "withdrawn": [{
//	    "name",
//	    "scopes":  [required scopes, sorted; omitted when none],
//	    "failure": the failure every call is answered with, as the tool result's text carries it
//	  }],
//	  "resources":         [{"uri", "name", "title", "description", "mimeType", "scopes", ...}],
//	  "resourceTemplates": [{"uriTemplate", "name", ...}],
//	  "prompts":           [{"name", "title", "description", "arguments": [{"name", "description", "required"}], "scopes", ...}],
//	  "search":            {"listed": [names listed beside the search tools, sorted], "results"} (omitted without Exposure.Search)
//	}
//
// Every tool is listed to the callers its scopes admit; the names of
// "withdrawn" ([Exposure.Withdrawn]) are in no tools/list and run nothing.
// Empty strings and lists are omitted ("withdrawn" too); "tools",
// "resources", "resourceTemplates" and "prompts" are always present, []
// when empty.
// Nothing in it is secret: it is what tools/list publishes, plus the
// governance (scopes, confirmation, limits) a reviewer should see.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	doc := snapshotDoc{
		Format:    SnapshotFormat,
		App:       appDoc{Name: s.app.Name(), Version: s.app.Version()},
		Scopes:    sorted(s.Scopes()),
		Tools:     []toolDoc{},
		Resources: []resourceDoc{},
		Templates: []resourceDoc{},
		Prompts:   []promptDoc{},
	}
	for _, t := range s.tools {
		d := toolDoc{
			Name:        t.name,
			Title:       t.def.Title,
			Description: t.def.Description,
			governance:  governanceOf(t.plan),
			InputSchema: json.RawMessage(t.plan.InputSchema()),
		}
		if t.task != TaskNever {
			d.Task = t.task.String()
		}
		if t.def.OutputSchema != nil {
			d.OutputSchema = t.def.OutputSchema.(json.RawMessage)
		}
		if v := s.byUI[t.uiURI]; t.ui != nil && v != nil {
			d.UI = &uiDoc{ResourceURI: v.uri, CSP: v.meta["csp"], PrefersBorder: v.ui.PrefersBorder, HTMLSHA256: v.htmlSHA256, Rendered: v.ui.Render != nil}
		}
		doc.Tools = append(doc.Tools, d)
	}
	for _, w := range s.withdrawnList {
		doc.Withdrawn = append(doc.Withdrawn, withdrawnDoc{Name: w.name, Scopes: sorted(slices.Clone(w.scopes)), Failure: json.RawMessage(w.text)})
	}
	for _, r := range s.resources {
		doc.Resources = append(doc.Resources, resourceDoc{URI: r.uri, Name: r.name, Title: r.def.Title, Description: r.def.Description, MIMEType: r.def.MIMEType, governance: governanceOf(r.plan)})
	}
	for _, t := range s.templates {
		doc.Templates = append(doc.Templates, resourceDoc{URITemplate: t.def.URITemplate, Name: t.name, Title: t.def.Title, Description: t.def.Description, MIMEType: t.def.MIMEType, governance: governanceOf(t.plan)})
	}
	for _, p := range s.prompts {
		d := promptDoc{Name: p.name, Title: p.def.Title, Description: p.def.Description, governance: governanceOf(p.plan)}
		for _, a := range p.args {
			d.Arguments = append(d.Arguments, argumentDoc{Name: a.name, Description: a.description, Required: a.required})
		}
		doc.Prompts = append(doc.Prompts, d)
	}
	if sr := s.search; sr != nil {
		doc.Search = &searchDoc{Results: sr.results}
		for t := range sr.listed {
			doc.Search.Listed = append(doc.Search.Listed, t.name)
		}
		slices.Sort(doc.Search.Listed)
	}
	slices.SortFunc(doc.Tools, func(a, b toolDoc) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(doc.Withdrawn, func(a, b withdrawnDoc) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(doc.Resources, func(a, b resourceDoc) int { return cmp.Compare(a.URI, b.URI) })
	slices.SortFunc(doc.Templates, func(a, b resourceDoc) int { return cmp.Compare(a.URITemplate, b.URITemplate) })
	slices.SortFunc(doc.Prompts, func(a, b promptDoc) int { return cmp.Compare(a.Name, b.Name) })
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("mcpexpose: snapshot JSON: %w", err)
	}
	c, err := canonjson.Canonicalize(b)
	if err != nil {
		return nil, fmt.Errorf("mcpexpose: snapshot JSON: %w", err)
	}
	return c, nil
}

// WriteJSON writes the snapshot's review form ([Snapshot.MarshalJSON])
// to w, indented by two spaces and ending in a newline: a file that diffs
// line by line. An application offers it behind a flag of its own, before
// it serves:
//
//	if *dumpSnapshot {
//		return snap.WriteJSON(os.Stdout)
//	}
func (s *Snapshot) WriteJSON(w io.Writer) error {
	b, err := s.MarshalJSON()
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return fmt.Errorf("mcpexpose: snapshot JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

type snapshotDoc struct {
	Format    string         `json:"format"`
	App       appDoc         `json:"app"`
	Scopes    []string       `json:"scopes,omitempty"`
	Tools     []toolDoc      `json:"tools"`
	Withdrawn []withdrawnDoc `json:"withdrawn,omitempty"`
	Resources []resourceDoc  `json:"resources"`
	Templates []resourceDoc  `json:"resourceTemplates"`
	Prompts   []promptDoc    `json:"prompts"`
	Search    *searchDoc     `json:"search,omitempty"`
}

// searchDoc is a snapshot's search (search.go) in its review form.
type searchDoc struct {
	Listed  []string `json:"listed,omitempty"`
	Results int      `json:"results"`
}

type appDoc struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// governance is what a plan decides beyond the published definition.
type governance struct {
	Scopes        []string      `json:"scopes,omitempty"`
	Annotations   []string      `json:"annotations,omitempty"`
	Confirm       string        `json:"confirm,omitempty"`
	AnyoneMayCall bool          `json:"anyoneMayCall,omitempty"`
	Timeout       string        `json:"timeout,omitempty"`
	RateLimit     *rateLimitDoc `json:"rateLimit,omitempty"`
}

type rateLimitDoc struct {
	Rate  float64 `json:"rate"`
	Burst int     `json:"burst"`
}

type toolDoc struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	governance
	Task         string          `json:"task,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	UI           *uiDoc          `json:"ui,omitempty"`
}

// uiDoc is a tool's view in the review form: a changed page, CSP or URI
// changes it.
type uiDoc struct {
	ResourceURI   string `json:"resourceUri"`
	CSP           any    `json:"csp,omitempty"`
	PrefersBorder bool   `json:"prefersBorder,omitempty"`
	HTMLSHA256    string `json:"htmlSha256,omitempty"`
	Rendered      bool   `json:"rendered,omitempty"`
}

type withdrawnDoc struct {
	Name    string          `json:"name"`
	Scopes  []string        `json:"scopes,omitempty"`
	Failure json.RawMessage `json:"failure"`
}

type resourceDoc struct {
	URI         string `json:"uri,omitempty"`
	URITemplate string `json:"uriTemplate,omitempty"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
	governance
}

type promptDoc struct {
	Name        string        `json:"name"`
	Title       string        `json:"title,omitempty"`
	Description string        `json:"description,omitempty"`
	Arguments   []argumentDoc `json:"arguments,omitempty"`
	governance
}

type argumentDoc struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

func governanceOf(p *execution.Plan) governance {
	o := p.Capability().Options()
	g := governance{Scopes: sorted(p.Scopes()), Confirm: o.Confirm, AnyoneMayCall: o.AnyoneMayCall}
	a := p.Annotations()
	for _, x := range []struct {
		a    agnara.Annotations
		name string
	}{{agnara.Destructive, "destructive"}, {agnara.Idempotent, "idempotent"}, {agnara.OpenWorld, "open-world"}, {agnara.ReadOnly, "read-only"}} {
		if a.Has(x.a) {
			g.Annotations = append(g.Annotations, x.name)
		}
	}
	if d := o.Timeout; d > 0 {
		g.Timeout = d.String()
	}
	if l := o.RateLimit; !l.IsZero() {
		g.RateLimit = &rateLimitDoc{Rate: l.Rate, Burst: l.Burst}
	}
	return g
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
