package execution

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agnara-go/agnara/internal/portableschema"
)

// mcpTagKey is the struct tag agnara reads for what a field means to MCP
// beyond its schema. Its one key today is header:
//
//	Region string `json:"region" mcp:"header=Region"`
//
// declares the argument a header parameter: published with "x-mcp-header":
// "Region" in the input schema, so that clients of the 2026-07-28 revision
// mirror it in an Mcp-Param-Region HTTP header and proxies can route on it
// without reading the body (SEP-2243). The plan itself is unchanged: the
// handler reads the field as any other, and the exposure checks the header
// against it.
const mcpTagKey = "mcp"

// Safe integers (SEP-2243): a header integer must survive a round trip
// through an IEEE-754 double, as JavaScript clients read it.
const (
	maxSafeInteger = "9007199254740991"
	minSafeInteger = "-9007199254740991"
)

// headerTag checks the mcp tag of field f of a struct at loc; root tells
// whether the struct is the input struct itself.
func (g *schemaGen) headerTag(f field, loc string, root bool) {
	tag := *f.mcp
	key, name, hasVal := strings.Cut(tag, "=")
	switch {
	case g.output:
		g.problem(loc, "the mcp tag applies to the fields of a capability's input struct only; here it would be ignored")
		return
	case !hasVal || key != "header":
		g.problem(loc, "mcp tag %q: want mcp:\"header=<Name>\" (the one key the tag has)", tag)
		return
	case !root:
		g.problem(loc, "mcp:\"header=%s\" applies to top-level fields of the input struct only: a header mirrors one argument", name)
		return
	}
	if msg := headerNameProblem(name); msg != "" {
		g.problem(loc, "mcp:\"header=%s\": %s", name, msg)
		return
	}
	t := f.typ
	if t.Kind() == reflect.Pointer {
		g.problem(loc, "a header parameter cannot be a pointer: null has no header form, and the Go MCP SDK ignores every x-mcp-header of a schema with a nullable property; use %s (with omitempty when optional)", t.Elem())
		return
	}
	switch k := jsonKind(t, false); k {
	case "string", "integer", "boolean":
	case "number":
		g.problem(loc, "a header parameter must be a string, an integer or a boolean (SEP-2243 leaves number out: a float has no single text form); %s is a number", t)
		return
	default:
		g.problem(loc, "a header parameter must be a string, an integer or a boolean; %s is not", t)
		return
	}
	if g.headers == nil {
		g.headers = map[string]string{}
	}
	lower := strings.ToLower(name)
	if prev, dup := g.headers[lower]; dup {
		g.problem(loc, "header parameter %q is already declared by %s (header names are case-insensitive)", name, prev)
		return
	}
	g.headers[lower] = f.goPath
}

// headerNameProblem says why name cannot follow Mcp-Param- in a header
// name, or "": it must be an HTTP token (RFC 9110 §5.6.2).
func headerNameProblem(name string) string {
	if name == "" {
		return "the header name is empty"
	}
	for _, c := range name {
		if !tokenChar(c) {
			return "the header name must be an HTTP token (letters, digits and !#$%&'*+-.^_`|~), " + quoteRune(c) + " is not allowed"
		}
	}
	return ""
}

func quoteRune(c rune) string { return strconv.QuoteRune(c) }

// tokenChar reports whether c is an RFC 9110 tchar.
func tokenChar(c rune) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", c)
}

// publishHeaders adds x-mcp-header to the properties of t's header
// parameters in tree, the post-processed input schema of t, whose tags
// [schemaGen.headerTag] accepted; integers get the safe range as bounds
// unless they declare their own.
func publishHeaders(tree any, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return
	}
	root, _ := tree.(*object)
	if root == nil {
		return
	}
	props, _ := root.vals["properties"].(*object)
	if props == nil {
		return
	}
	fields, _ := structFields(t)
	for _, f := range fields {
		if f.mcp == nil {
			continue
		}
		_, name, _ := strings.Cut(*f.mcp, "=")
		p, _ := props.vals[f.name].(*object)
		if p == nil {
			continue
		}
		if p.vals["type"] == "integer" {
			if _, ok := p.vals["minimum"]; !ok {
				p.set("minimum", json.Number(minSafeInteger))
			}
			if _, ok := p.vals["maximum"]; !ok {
				p.set("maximum", json.Number(maxSafeInteger))
			}
		}
		p.set(portableschema.HeaderKeyword, name)
		slices.SortStableFunc(p.keys, func(a, b string) int { return keywordRank(a) - keywordRank(b) })
	}
}
