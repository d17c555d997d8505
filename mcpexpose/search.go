package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/mcpexpose/internal/rank"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// SearchOptions configures the search of an exposure ([Exposure.Search]).
// A nil *SearchOptions means the defaults.
type SearchOptions struct {
	// Listed are the wire names of tools still listed in full, beside the
	// search tools, to every caller who may call them: the few a model
	// needs on every turn. Each must be a declared tool (or withdrawn
	// tool, which is never listed). Default: none.
	Listed []string
	// Results is the most definitions one search answers, and the
	// largest limit a caller may ask for: 1 to 50. Default 8.
	Results int
}

// The search tools' wire names, and the bounds of their arguments.
const (
	searchToolName = "search_tools"
	callToolName   = "call_tool"
	defaultResults = 8
	maxResults     = 50
	maxQueryRunes  = 1000
)

// Search replaces the wall of tool definitions a caller's tools/list holds
// with two tools: search_tools, which answers the definitions of the
// tools that best match a query (ranked by BM25F over their names, titles
// and descriptions: ADR 83), exactly as tools/list would list them; and
// call_tool, which calls a tool by name with its arguments. Tools named in
// opts.Listed stay listed beside them.
//
// A search ranks only the tools its caller may call, with statistics
// computed over those alone, so that no query finds, or is ordered by, a
// tool the caller may not see; a withdrawn tool (an imported tool whose
// changed definition is held for an operator, say) is never found. A
// call_tool request is rewritten, before anything else runs, into a
// tools/call of the named tool with the given arguments (and the request's
// _meta, state and answers), so that the tool passes the same scope guard,
// rate limit, policies, confirmation, rounds of questions, audit and
// metrics as when it is called by its own name, which keeps working. A
// name the caller may not call answers through call_tool exactly what it
// answers called directly. call_tool does not call search_tools or
// itself.
//
// A declared tool named search_tools or call_tool, a Listed name no tool
// or withdrawn tool has, a Results outside 1 to 50 and a second Search are
// mistakes Compile reports, with the file:line of this call.
func (e *Exposure) Search(opts *SearchOptions) {
	s := site.Caller(1)
	d := &searchDecl{site: s, results: defaultResults}
	if opts != nil {
		d.listed = slices.Clone(opts.Listed)
		if opts.Results != 0 {
			d.results = opts.Results
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.frozen:
		e.errs = append(e.errs, &site.Error{Site: s, Subject: searchToolName, Err: ErrFrozen})
	case e.search != nil:
		e.errs = append(e.errs, site.Errorf(s, searchToolName, "mcpexpose.Search called twice (first at %s)", e.search.site))
	case d.results < 1 || d.results > maxResults:
		e.errs = append(e.errs, site.Errorf(s, searchToolName, "SearchOptions.Results %d: want 1 to %d", d.results, maxResults))
		e.search = &searchDecl{site: s, listed: d.listed, results: defaultResults}
	default:
		e.search = d
	}
}

// searchDecl is a declared search.
type searchDecl struct {
	site    site.Site
	listed  []string
	results int
}

// search is a snapshot's compiled search: immutable, safe for concurrent
// use.
type search struct {
	listed  map[*tool]bool
	results int
	docs    map[*tool]*rank.Doc
	defs    [2]mcp.Tool // search_tools, call_tool: prototypes, copied before use
}

// compileSearch adds the declared search to snap, whose tools and
// withdrawn tools are compiled, and returns the mistakes found.
func (e *Exposure) compileSearch(snap *Snapshot, c *checks) []error {
	d := e.search
	if d == nil {
		return nil
	}
	var errs []error
	for _, name := range []string{searchToolName, callToolName} {
		if at, taken := c.names[name]; taken {
			errs = append(errs, site.Errorf(at, name, "the tool name %q is the search's (mcpexpose.Search at %s)", name, d.site))
		}
	}
	sr := &search{listed: map[*tool]bool{}, results: d.results, docs: map[*tool]*rank.Doc{}}
	for _, name := range d.listed {
		t, ok := snap.byName[name]
		switch {
		case ok:
			sr.listed[t] = true
		case snap.withdrawn[name] != nil:
			// Declared, never listed: a gateway lists a tool whose
			// upstream is down, and lists it again when it is up.
		default:
			if _, declared := c.names[name]; !declared {
				errs = append(errs, site.Errorf(d.site, searchToolName, "SearchOptions.Listed names %q, which is no tool of the exposure", name))
			}
		}
	}
	for _, t := range snap.tools {
		sr.docs[t] = rank.NewDoc(t.name, t.def.Title, t.def.Description)
	}
	sr.defs = searchDefs(d.results)
	snap.search = sr
	return errs
}

// searchDefs are the definitions of search_tools and call_tool, for
// searches of at most results definitions.
func searchDefs(results int) [2]mcp.Tool {
	f := false
	return [2]mcp.Tool{{
		Name:  searchToolName,
		Title: "Search tools",
		Description: "Find the tools that can do a task. Give a few words of what you want done; the answer lists the best matching tools' " +
			"full definitions. Call a tool found with call_tool, or by its name.",
		InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","maxLength":%d,"description":"Words describing the task, such as \"create an issue\"."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"The most tools to return. Default %d."}},`+
			`"required":["query"],"additionalProperties":false}`, maxQueryRunes, results, results)),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"tools":{"type":"array","items":{"type":"object"}}},"required":["tools"],"additionalProperties":false}`),
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f, IdempotentHint: true, OpenWorldHint: &f},
	}, {
		Name:  callToolName,
		Title: "Call a tool",
		Description: "Call a tool that search_tools found: its name, and its arguments as its inputSchema describes them. " +
			"The answer is the tool's own.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"The tool's name, as search_tools gave it."},` +
			`"arguments":{"type":"object","description":"The tool's arguments."}},` +
			`"required":["name"],"additionalProperties":false}`),
	}}
}

// def returns a detached copy of the definition of the search tool i.
func (sr *search) def(i int) *mcp.Tool {
	c := sr.defs[i]
	c.InputSchema = json.RawMessage(slices.Clone(c.InputSchema.(json.RawMessage)))
	if c.OutputSchema != nil {
		c.OutputSchema = json.RawMessage(slices.Clone(c.OutputSchema.(json.RawMessage)))
	}
	if c.Annotations != nil {
		a := *c.Annotations
		d, o := *a.DestructiveHint, *a.OpenWorldHint
		a.DestructiveHint, a.OpenWorldHint = &d, &o
		c.Annotations = &a
	}
	return &c
}

// list returns what tools/list holds for a caller who may see visible:
// the search tools, then the listed tools among visible, in order.
func (sr *search) list(visible []*tool, req mcp.Request) []*mcp.Tool {
	out := []*mcp.Tool{sr.def(0), sr.def(1)}
	for _, t := range visible {
		if sr.listed[t] {
			out = append(out, t.listed(req))
		}
	}
	return out
}

// builtin reports whether name is a search tool's.
func (sr *search) builtin(name string) bool {
	return name == searchToolName || name == callToolName
}

// unwrap reads rec, a tools/call on a snapshot with a search, that names a
// search tool: a call_tool is rewritten to the call of the tool it names,
// with the arguments it gives (rec.via records what it named), or refused
// (rec.bad) when its own arguments are wrong. The rest of the request —
// _meta, state, answers, task — stays the request's.
func (rec *record) unwrap() {
	rec.via = rec.name
	if rec.name != callToolName {
		return
	}
	var vs []execution.Violation
	var in map[string]segjson.RawMessage
	if len(rec.args) == 0 || bytes.Equal(bytes.TrimSpace(rec.args), []byte("null")) {
		vs = append(vs, execution.Violation{Path: "/name", Message: "missing required field"})
	} else if _, err := segjson.Parse(rec.args, &in, segjson.DontMatchCaseInsensitiveStructFields); err != nil || in == nil {
		vs = append(vs, execution.Violation{Path: "", Message: "must be an object"})
	}
	var name string
	var args json.RawMessage
	if in != nil {
		for k := range in {
			if k != "name" && k != "arguments" {
				vs = append(vs, execution.Violation{Path: pointerTo(k), Message: "unknown field"})
			}
		}
		raw, ok := in["name"]
		switch {
		case !ok:
			vs = append(vs, execution.Violation{Path: "/name", Message: "missing required field"})
		case segjson.Unmarshal(raw, &name) != nil || (len(raw) > 0 && raw[0] != '"'):
			vs = append(vs, execution.Violation{Path: "/name", Message: "must be a string"})
		case name == searchToolName || name == callToolName:
			vs = append(vs, execution.Violation{Path: "/name", Message: "call_tool calls the tools search_tools finds, not " + name + ": call it by its name"})
		}
		if raw, ok := in["arguments"]; ok {
			if t := bytes.TrimSpace(raw); len(t) == 0 || t[0] != '{' {
				vs = append(vs, execution.Violation{Path: "/arguments", Message: "must be an object"})
			} else {
				args = json.RawMessage(raw)
			}
		}
	}
	if len(vs) > 0 {
		rec.bad = invalidArguments(vs)
		return
	}
	rec.name, rec.args = name, args
}

// invalidArguments is the invalid_input failure of a search tool's
// arguments, worded as a plan words its own (execution's Violation).
func invalidArguments(vs []execution.Violation) *execution.Failure {
	slices.SortFunc(vs, func(a, b execution.Violation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	msg := "the arguments do not match the input schema"
	if len(vs) == 1 {
		where := vs[0].Path
		if where == "" {
			where = "the arguments"
		}
		msg += ": " + where + ": " + vs[0].Message
	} else {
		msg += fmt.Sprintf(" (%d violations)", len(vs))
	}
	return &execution.Failure{Code: execution.InvalidInput, Message: msg, Details: map[string]any{"violations": vs}}
}

// rewritten is req, a call_tool, as the call of the tool it names (rec's).
func rewritten(req *mcp.CallToolRequest, rec *record) *mcp.CallToolRequest {
	cp := *req
	params := *req.Params
	params.Name, params.Arguments = rec.name, rec.args
	cp.Params = &params
	return &cp
}

// callSearch answers rec's call of search_tools, or of a call_tool whose
// own arguments are wrong: authorized as any call (the caller's identity),
// observed, audited and metered under the search tool's name.
func (s *server) callSearch(ctx context.Context, rec *record, req *mcp.CallToolRequest) (mcp.Result, error) {
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	ctx = policy.WithPrincipal(ctx, p)
	var start time.Time
	if s.opts.Meter != nil {
		start = time.Now()
	}
	var end func(agnara.Label, error)
	if obs := s.app.Observer(); obs != nil {
		ctx, end = obs.Request(ctx, s.requestInfo("tools/call", rec.via, req, p))
	}
	var res *mcp.CallToolResult
	label := agnara.LabelOK
	f := rec.bad
	if f == nil {
		res, f = rec.e.snap.search.answer(rec.e.snap.visible(p), rec.args, req.ProtocolVersion() >= modernVersion)
	}
	if f != nil {
		res, label = projection.Failure(f), execution.LabelOf(f)
	}
	s.auditAs(ctx, req, rec.via, "", p, label, res)
	s.meterCall(rec.via, start, label, res, nil)
	if end != nil {
		end(label, nil)
	}
	return res, nil
}

// answer answers a search_tools call with arguments args by a caller who
// may see visible, at 2026-07-28 when modern: the definitions of the best
// matches, as tools/list lists them to the caller, or the failure of bad
// arguments.
func (sr *search) answer(visible []*tool, args json.RawMessage, modern bool) (*mcp.CallToolResult, *execution.Failure) {
	query, limit, f := sr.arguments(args)
	if f != nil {
		return nil, f
	}
	docs := make([]*rank.Doc, len(visible))
	for i, t := range visible {
		docs[i] = sr.docs[t]
	}
	hits := rank.Rank(docs, rank.Query(query), limit)
	found := struct {
		Tools []*mcp.Tool `json:"tools"`
	}{Tools: make([]*mcp.Tool, len(hits))}
	for i, h := range hits {
		t := visible[h]
		if t.params != nil && !modern {
			found.Tools[i] = t.sdkTool() // as tools/list lists it in the handshake era
		} else {
			found.Tools[i] = t.project()
		}
	}
	b, err := json.Marshal(&found)
	if err != nil {
		return nil, execution.Fail(execution.InternalFailure, "", nil)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)}, nil
}

// arguments reads search_tools' arguments: the query, and the limit
// (default and at most the search's Results).
func (sr *search) arguments(args json.RawMessage) (string, int, *execution.Failure) {
	var in map[string]segjson.RawMessage
	var vs []execution.Violation
	if len(args) == 0 || bytes.Equal(bytes.TrimSpace(args), []byte("null")) {
		return "", 0, invalidArguments([]execution.Violation{{Path: "/query", Message: "missing required field"}})
	}
	if _, err := segjson.Parse(args, &in, segjson.DontMatchCaseInsensitiveStructFields); err != nil || in == nil {
		return "", 0, invalidArguments([]execution.Violation{{Path: "", Message: "must be an object"}})
	}
	var query string
	limit := sr.results
	for k, raw := range in {
		switch k {
		case "query":
			if len(raw) == 0 || raw[0] != '"' || segjson.Unmarshal(raw, &query) != nil {
				vs = append(vs, execution.Violation{Path: "/query", Message: "must be a string"})
			} else if utf8.RuneCountInString(query) > maxQueryRunes {
				vs = append(vs, execution.Violation{Path: "/query", Message: fmt.Sprintf("must be at most %d characters", maxQueryRunes)})
			}
		case "limit":
			var n json.Number
			if len(raw) == 0 || raw[0] == '"' || segjson.Unmarshal(raw, &n) != nil {
				vs = append(vs, execution.Violation{Path: "/limit", Message: "must be an integer"})
				continue
			}
			v, err := n.Float64()
			if err != nil || v != float64(int64(v)) {
				vs = append(vs, execution.Violation{Path: "/limit", Message: "must be an integer"})
			} else if v < 1 || v > float64(sr.results) {
				vs = append(vs, execution.Violation{Path: "/limit", Message: fmt.Sprintf("must be from 1 to %d", sr.results)})
			} else {
				limit = int(v)
			}
		default:
			vs = append(vs, execution.Violation{Path: pointerTo(k), Message: "unknown field"})
		}
	}
	if _, ok := in["query"]; !ok {
		vs = append(vs, execution.Violation{Path: "/query", Message: "missing required field"})
	}
	if len(vs) > 0 {
		return "", 0, invalidArguments(vs)
	}
	return query, limit, nil
}

// pointerTo is the JSON Pointer of the top-level field key.
func pointerTo(key string) string {
	return "/" + strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// sameSearch reports whether two snapshots search alike: the search tools'
// definitions and the names listed beside them are the same. (A tool's
// definition the search finds is in the visible list sameList compares:
// a caller is told of its change too, and may search again.)
func sameSearch(a, b *Snapshot) bool {
	if a.search == nil || b.search == nil {
		return a.search == b.search
	}
	if a.search.results != b.search.results || len(a.search.listed) != len(b.search.listed) {
		return false
	}
	for t := range a.search.listed {
		if u, ok := b.byName[t.name]; !ok || !b.search.listed[u] {
			return false
		}
	}
	return true
}
