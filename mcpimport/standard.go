package mcpimport

import (
	"errors"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// Profile is the schema profile a binding imports its remote tool's schemas
// under. The zero value is [ProfileStrict].
type Profile string

// The schema profiles.
const (
	// ProfileStrict is agnara.schema-profile/v1, the default: closed objects
	// built from the keywords agnara itself publishes (see the package
	// documentation). Every downstream client can read what it publishes.
	ProfileStrict Profile = ""
	// ProfileStandard accepts standard JSON Schema (drafts 07, 2019-09 and
	// 2020-12, as the root "$schema" declares; 2020-12 when absent) with
	// references inside the document, open objects and "default" values,
	// and publishes it unchanged (see checkStandardSchema). Opt in per tool,
	// for remote servers whose schemas the strict profile refuses.
	ProfileStandard Profile = "standard"
)

// check reports what is wrong with a profile choice.
func (p Profile) check(remote string) *Error {
	switch p {
	case ProfileStrict, ProfileStandard:
		return nil
	}
	return newError(BindingInvalid, remote, "profile %s: want ProfileStrict or ProfileStandard", quote(string(p)))
}

// standardDialects are the "$schema" values the standard profile accepts,
// with the draft each names: http or https, with or without an empty
// fragment. The validator knows each as a built-in meta-schema, so none is
// ever fetched. The moving "json-schema.org/schema" (latest) is not one.
var standardDialects = func() map[string]string {
	m := map[string]string{}
	for path, draft := range map[string]string{
		"json-schema.org/draft-07/schema":      "draft-07",
		"json-schema.org/draft/2019-09/schema": "draft 2019-09",
		"json-schema.org/draft/2020-12/schema": "draft 2020-12",
	} {
		for _, scheme := range []string{"http://", "https://"} {
			m[scheme+path] = draft
			m[scheme+path+"#"] = draft // the empty fragment: the same URI
		}
	}
	return m
}()

// standardRefKeywords are the keywords whose value is a URI reference that
// the validator resolves.
var standardRefKeywords = map[string]bool{"$ref": true, "$dynamicRef": true, "$recursiveRef": true}

// Schema-valued keywords of drafts 07, 2019-09 and 2020-12: a schema, an
// array of schemas (or, for items and additionalItems in draft-07 and
// 2019-09, either), or an object of schemas. dependencies holds schemas or
// arrays of strings.
var (
	standardSchemaValued = map[string]bool{"items": true, "additionalItems": true, "additionalProperties": true,
		"not": true, "if": true, "then": true, "else": true, "contains": true, "propertyNames": true,
		"unevaluatedItems": true, "unevaluatedProperties": true, "contentSchema": true}
	standardSchemaArrays = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true, "additionalItems": true}
	standardSchemaMaps   = map[string]bool{"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true, "dependencies": true}
)

// checkStandardSchema checks one remote schema against the standard profile.
// It returns nil or a *profileError. As with the strict profile, nothing is
// stripped, defaulted or rewritten.
//
// The standard profile:
//
//   - The same document limits as the strict profile: at most maxBytes
//     bytes, valid UTF-8, no duplicate key, at most 512 levels of JSON
//     nesting, every number within the range of a double.
//   - The root is a JSON object with "type": "object" (MCP requires it).
//     Objects may be open: "additionalProperties" may be absent or true.
//   - "$schema" only at the root, and only one of the drafts 07, 2019-09 or
//     2020-12 (standardDialects: http or https, with or without "#");
//     absent means 2020-12. Anything else
//     (draft-04, draft-06, a custom meta-schema) is refused.
//   - Every "$ref", "$dynamicRef" and "$recursiveRef" is a fragment of
//     this document ("#", "#/$defs/...", "#/definitions/...", "#anchor").
//     "$id" is refused: it would change what a fragment refers to, and
//     could name a document to resolve against. Nothing is ever fetched.
//   - Any other keyword, "default" and vendor keywords included, is kept.
//     A "default" is published, never applied.
//   - Subschemas nest at most 64 levels below the root, and patterns
//     ("pattern" and the names of "patternProperties") stay within the
//     strict profile's compile budget.
//   - The schema compiles under its draft the way agnara validates
//     (formats and content asserted, no loader): patterns are RE2.
func checkStandardSchema(raw []byte, maxBytes int) error {
	if len(raw) > maxBytes {
		return &profileError{Reason: "schema is " + strconv.Itoa(len(raw)) + " bytes, over the limit of " + strconv.Itoa(maxBytes)}
	}
	if !utf8.Valid(raw) {
		return &profileError{Reason: "schema is not valid UTF-8"}
	}
	doc, perr := parseProfileDocument(raw)
	if perr != nil {
		return perr
	}
	root, ok := doc.(*profileObject)
	if !ok {
		return &profileError{Reason: "schema must be a JSON object"}
	}
	if root.vals["type"] != "object" {
		return &profileError{Reason: `root "type" must be "object"`}
	}
	draft := "draft 2020-12"
	if v, ok := root.vals["$schema"]; ok {
		s, _ := v.(string)
		if draft, ok = standardDialects[s]; !ok {
			return &profileError{Reason: `"$schema" must name draft-07, 2019-09 or 2020-12 (unknown dialect)`}
		}
	}
	if perr := new(profileWalk).standard(root, nil, 0); perr != nil {
		return perr
	}
	if perr := standardCompile(raw, draft); perr != nil {
		return perr
	}
	return nil
}

// standard checks the schema v at at, depth levels below the root, and its
// subschemas. A boolean schema is a schema in every accepted draft.
func (w *profileWalk) standard(v any, at *profileAt, depth int) *profileError {
	fail := func(reason string) *profileError { return &profileError{Pointer: at.pointer(), Reason: reason} }
	if depth > profileMaxDepth {
		return fail("subschemas nest deeper than " + strconv.Itoa(profileMaxDepth) + " levels")
	}
	o, ok := v.(*profileObject)
	if !ok {
		return nil // true, false; other values are left to the compiler
	}
	var children []profileChild
	for _, k := range o.keys {
		v := o.vals[k]
		switch {
		case k == "$schema" && depth > 0:
			return fail(`nested "$schema" is outside the standard profile (allowed only at the root)`)
		case k == "$id":
			return fail("keyword " + strconv.Quote(k) + " is outside the standard profile (a schema is one document, resolved only within itself)")
		case standardRefKeywords[k]:
			s, ok := v.(string)
			if !ok || !strings.HasPrefix(s, "#") {
				return fail("external reference: keyword " + strconv.Quote(k) + " must be a fragment of this document (#...); nothing is fetched")
			}
		case k == "pattern":
			if s, ok := v.(string); ok {
				if perr := w.pattern(s, fail); perr != nil {
					return perr
				}
			}
		}
		if standardSchemaMaps[k] {
			if m, ok := v.(*profileObject); ok {
				for _, name := range m.keys {
					if k == "patternProperties" {
						if perr := w.pattern(name, fail); perr != nil {
							return perr
						}
					}
					children = append(children, profileChild{m.vals[name], at.child(k, name)})
				}
			}
		}
		if a, ok := v.([]any); ok && standardSchemaArrays[k] {
			for i, s := range a {
				children = append(children, profileChild{s, at.child(k, strconv.Itoa(i))})
			}
		} else if standardSchemaValued[k] {
			children = append(children, profileChild{v, at.child(k)})
		}
	}
	for _, c := range children {
		if perr := w.standard(c.v, c.at, depth+1); perr != nil {
			return perr
		}
	}
	return nil
}

// pattern spends the compile budget on one pattern.
func (w *profileWalk) pattern(s string, fail func(string) *profileError) *profileError {
	// A pattern that does not parse is left to the compiler, which refuses
	// it.
	if re, err := syntax.Parse(s, syntax.Perl); err == nil {
		w.patternCost += profilePatternCost(re, profileMaxPatternCost+1-w.patternCost)
		if w.patternCost > profileMaxPatternCost {
			return fail("patterns are too complex: the patterns of a schema may cost at most " + strconv.Itoa(profileMaxPatternCost) + " units together")
		}
	}
	return nil
}

// standardCompile compiles raw the way agnara validates it: under the draft
// its "$schema" names, with a loader that refuses everything. A compiler
// panic is a refusal, as for the strict profile.
func standardCompile(raw []byte, draft string) (perr *profileError) {
	defer func() {
		if r := recover(); r != nil {
			perr = &profileError{Reason: "schema does not compile as JSON Schema " + draft + " (the compiler failed)"}
		}
	}()
	if _, err := schemacheck.Compile(raw); err != nil {
		var pointer *jsonschema.JSONPointerNotFoundError
		var anchor *jsonschema.AnchorNotFoundError
		if errors.As(err, &pointer) || errors.As(err, &anchor) {
			return &profileError{Reason: "a reference does not resolve within the document (nothing is fetched)"}
		}
		p := profileCompileError(err)
		p.Reason = "schema does not compile as JSON Schema " + draft
		return p
	}
	return nil
}
