// Package portableschema owns the portable JSON Schema keyword set (ADR 3,
// ADR 9): the keywords agnara publishes in tool schemas (package execution
// refuses to generate anything else) and the only keywords its importer
// accepts in a remote tool's schemas (package mcpimport's profile). One list,
// so that what agnara publishes is exactly what agnara imports.
package portableschema

import "slices"

// keywords is the set. "default" is deliberately absent: agnara never
// publishes defaults (a default a client fills in is an argument the caller
// did not choose) and refuses them on import. "$schema" is not here either:
// it is allowed only at a schema's root, which each user checks itself.
var keywords = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "format": true, "pattern": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "uniqueItems": true,
	"title": true, "description": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true,
	"anyOf": true, "oneOf": true, "contentEncoding": true, "contentMediaType": true,
}

// Keyword reports whether k is a portable keyword.
func Keyword(k string) bool { return keywords[k] }

// Keywords returns the portable keywords, sorted, in a new slice.
func Keywords() []string {
	out := make([]string, 0, len(keywords))
	for k := range keywords {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// HeaderKeyword is the one vendor keyword agnara publishes: on a top-level
// property of a tool's input schema, it names the Mcp-Param-{name} HTTP
// header that mirrors the argument (SEP-2243, MCP 2026-07-28). It is not a
// portable keyword: the set above, and so the importer's strict profile,
// leaves it out.
const HeaderKeyword = "x-mcp-header"
