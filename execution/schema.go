package execution

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/agnara-go/agnara/internal/schemacheck"
	jsv "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agnara-go/agnara/internal/portableschema"
)

// invopopHook names the method of t that invopop/jsonschema, which derived
// agnara-go's schemas until ADR 71, called to change the schema of a type
// that does not describe itself (JSONSchemaExtend), or the properties of
// a struct (JSONSchemaProperty, GetFieldDocString), or "".
func invopopHook(t reflect.Type) string {
	pt := reflect.PointerTo(t)
	for _, name := range []string{"JSONSchemaExtend", "JSONSchemaProperty"} {
		if _, ok := pt.MethodByName(name); ok {
			return name
		}
	}
	str := reflect.TypeFor[string]()
	if m, ok := pt.MethodByName("GetFieldDocString"); ok && m.Type.NumIn() == 2 && m.Type.In(1) == str && m.Type.NumOut() == 1 && m.Type.Out(0) == str {
		return "GetFieldDocString"
	}
	return ""
}

// refuseHook refuses a type with a method invopop/jsonschema called
// (JSONSchemaAlias, or one invopopHook names): ignored now, it would
// change the published schema without a word.
func (g *schemaGen) refuseHook(loc string, t reflect.Type, method string) {
	g.refuse(loc, "%s has a %s method, which agnara-go does not call (it no longer derives schemas with invopop/jsonschema, ADR 71): describe the type with a JSONSchema() method, or its fields with jsonschema tags", t, method)
}

// schemaGen generates one schema and collects its problems.
type schemaGen struct {
	output bool
	// form derives an elicitation form's schema, which may carry default
	// values (a form is not a published tool schema, DESIGN.md §5).
	form     bool
	problems []string
	headers  map[string]string // header parameter names, lowercased -> Go path
	// structural is set by a problem in the type's shape, which the
	// generator (typeSchema) must not see (it would recurse forever on some).
	// Other problems (tags, names) leave the schema derivable, so that its
	// own problems are reported in the same round.
	structural bool
	// tagged are the keywords a tag problem was reported for, by location:
	// the meta-schema check of the derived schema does not report them
	// again.
	tagged map[string]bool
}

func (g *schemaGen) problem(loc, format string, args ...any) {
	g.problems = append(g.problems, loc+": "+fmt.Sprintf(format, args...))
}

// refuse reports a problem in the type's shape (see structural).
func (g *schemaGen) refuse(loc, format string, args ...any) {
	g.structural = true
	g.problem(loc, format, args...)
}

// check rejects Go types whose JSON form cannot be described by a
// self-contained schema in the portable set, before the generator sees them
// (it would recurse forever on some).
func (g *schemaGen) check(t reflect.Type, loc string, stack []reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if _, ok := reflect.PointerTo(t).MethodByName("JSONSchemaAlias"); ok {
		g.refuseHook(loc, t, "JSONSchemaAlias")
		return
	}
	switch {
	case t == timeType, t == rawMessageType, describesItself(t):
		return
	case t == urlType:
		g.refuse(loc, "url.URL does not encode as a string; use a string field with jsonschema:\"format=uri\"")
		return
	case implements(t, jsonMarshaler) || implements(t, jsonUnmarsh):
		g.refuse(loc, "%s has its own JSON encoding, so its schema cannot be derived; give it a JSONSchema() *jsonschema.Schema method", t)
		return
	case isText(t, g.output):
		return
	case !g.output && implements(t, textMarshaler):
		g.refuse(loc, "%s implements encoding.TextMarshaler but not encoding.TextUnmarshaler, so it cannot be decoded from its text form", t)
		return
	}
	if hook := invopopHook(t); hook != "" {
		g.refuseHook(loc, t, hook)
		return
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	case reflect.Interface:
		if !g.output && t.NumMethod() > 0 {
			g.refuse(loc, "interface type %s cannot be decoded from JSON; use a concrete type", t)
		}
	case reflect.Slice, reflect.Array:
		g.check(t.Elem(), loc+"[]", stack)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			g.refuse(loc, "map key type %s: only string keys can be described", t.Key())
			return
		}
		g.check(t.Elem(), loc+"[key]", stack)
	case reflect.Struct:
		if slices.Contains(stack, t) {
			g.refuse(loc, "recursive type %s cannot be described without $ref", t)
			return
		}
		fields, problems := structFields(t)
		for _, p := range problems {
			g.refuse(loc, "%s", p)
		}
		if !g.output {
			for _, d := range undecodable(t) {
				g.problem(loc+"."+d.goPath, "%s", d.msg)
			}
		}
		stack = append(stack, t)
		for _, f := range fields {
			floc := loc + "." + f.goPath
			if !f.named {
				g.problem(floc, "exported field has no JSON name, so callers would see the Go name %q: tag it json:\"<name>\" (or json:\"-\" to leave it out)", f.name)
			}
			for _, p := range tagProblems(f.tag, f.typ, g.output) {
				g.problem(floc, "%s", p.msg)
				if g.tagged == nil {
					g.tagged = map[string]bool{}
				}
				g.tagged[floc+"\x00"+p.key] = true
			}
			if f.mcp != nil {
				g.headerTag(f, floc, len(stack) == 1)
			}
			g.check(f.typ, floc, stack)
		}
	default:
		g.refuse(loc, "%s values cannot be represented in JSON", t)
	}
}

// generateSchema returns the published schema of t: self-contained, closed
// objects, field order kept, no $schema, $id or default. For output schemas,
// values Go may encode as null (nil pointers, slices and maps that are not
// omitempty) are declared nullable.
func generateSchema(t reflect.Type, output bool) ([]byte, error) {
	d, err := cachedSchema(schemaKey{t: t, output: output})
	return d.schema, err
}

// generateInputSchema is generateSchema for an input type, with the
// validator compiled from the schema.
func generateInputSchema(t reflect.Type) ([]byte, *jsv.Schema, error) {
	d, err := cachedSchema(schemaKey{t: t})
	return d.schema, d.validator, err
}

// generateFormSchema is generateSchema for an elicitation form: the same
// derivation and checks, except that default values are kept.
func generateFormSchema(t reflect.Type) ([]byte, error) {
	d, err := cachedSchema(schemaKey{t: t, form: true})
	return d.schema, err
}

// schemas caches derived schemas, and the validators of input schemas, by
// Go type and direction: a type's schema never changes within a process,
// and a process has as many types as its code (and reflect.StructOf) made.
// The validators are kept here, by type, rather than only in the bounded
// cache by schema text (schemacheck.CompileShared), so that compiling an
// application of more input types than that cache holds again (a swap, a
// test binary) costs no more per capability than compiling a small one
// (ADR 0054). Failures are not kept.
var schemas sync.Map // schemaKey -> derived

type schemaKey struct {
	t      reflect.Type
	output bool
	form   bool
}

// derived is a derived schema; validator is set for input schemas only.
// Both are shared: the schema is cloned for each caller, and a compiled
// validator is immutable.
type derived struct {
	schema    []byte
	validator *jsv.Schema
}

func cachedSchema(key schemaKey) (derived, error) {
	if d, ok := schemas.Load(key); ok {
		d := d.(derived)
		d.schema = slices.Clone(d.schema)
		return d, nil
	}
	d, err := deriveSchema(key)
	if err != nil {
		return derived{}, err
	}
	schemas.Store(key, derived{schema: slices.Clone(d.schema), validator: d.validator})
	return d, nil
}

func deriveSchema(key schemaKey) (_ derived, err error) {
	t, output := key.t, key.output
	g := &schemaGen{output: output, form: key.form}
	label := typeLabel(t)
	g.check(t, label, nil)
	if g.structural {
		return derived{}, g.err()
	}
	// Tag and name problems do not stop the derivation: what the derived
	// schema breaks is reported with them, in one round.
	defer func() {
		if r := recover(); r != nil {
			err = g.underived(label, fmt.Errorf("%v", r))
		}
	}()
	tree, err := typeSchema(t, output)
	if err != nil {
		return derived{}, g.underived(label, err)
	}
	tree = g.node(tree, t, label)
	if !output {
		publishHeaders(tree, t)
	}
	if output && nilable(t) {
		tree = nullable(tree)
	}
	var buf bytes.Buffer
	if err := writeOrdered(&buf, tree); err != nil {
		return derived{}, g.underived(label, err)
	}
	// What the tags produced must be a schema, and a satisfiable one.
	doc, err := schemacheck.Parse(buf.Bytes())
	if err != nil {
		return derived{}, g.underived(label, err)
	}
	// An input schema is compiled for validation here, which checks it
	// against the meta-schema as it compiles (one validation, not two).
	var (
		problems []schemacheck.Problem
		v        *jsv.Schema
	)
	if !output && !key.form {
		v, problems, err = schemacheck.CompileChecked(buf.Bytes(), doc)
		if err != nil {
			g.problem(label, "schema does not compile: %v", err)
		}
	} else {
		problems = schemacheck.Check(doc)
	}
	for _, p := range problems {
		path, keyword := fieldPath(t, label, p.Pointer)
		if g.tagged[path+"\x00"+keyword] {
			continue // the tag that wrote it is already reported
		}
		g.problem(path, "%s: %s", keyword, p.Message)
	}
	if len(g.problems) > 0 {
		return derived{}, g.err()
	}
	return derived{schema: buf.Bytes(), validator: v}, nil
}

// fieldPath turns the JSON Pointer of a keyword in t's schema, such as
// /properties/name/maxLength, into the Go path of the field it describes
// ("Input.Name") and the keyword ("maxLength").
func fieldPath(t reflect.Type, label, ptr string) (path, keyword string) {
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if ptr == "" {
		return label, "schema"
	}
	keyword = strings.NewReplacer("~1", "/", "~0", "~").Replace(toks[len(toks)-1])
	path = label
	for i := 0; i < len(toks)-1; i++ {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch tok := toks[i]; {
		case tok == "properties" && i+1 < len(toks)-1:
			i++
			name := strings.NewReplacer("~1", "/", "~0", "~").Replace(toks[i])
			var next reflect.Type
			goName := name
			if t != nil && t.Kind() == reflect.Struct {
				fields, _ := structFields(t)
				for _, f := range fields {
					if f.name == name {
						goName, next = f.goPath, f.typ
					}
				}
			}
			path += "." + goName
			t = next
		case tok == "items":
			path += "[]"
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				t = t.Elem()
			} else {
				t = nil
			}
		case tok == "additionalProperties":
			path += "[key]"
			if t != nil && t.Kind() == reflect.Map {
				t = t.Elem()
			} else {
				t = nil
			}
		case tok == "anyOf" || tok == "oneOf":
			i++ // an alternative of the same value (nullable wrappers)
		default:
			path += "/" + tok
		}
	}
	return path, keyword
}

// underived is the error of a derivation that failed with err. When tag
// problems were found first, they are what failed it (a bound the
// generator writes as a number JSON cannot hold, say), and they alone are
// reported: fixing them fixes the derivation.
func (g *schemaGen) underived(label string, err error) error {
	if len(g.problems) > 0 {
		return g.err()
	}
	return fmt.Errorf("%s: cannot derive a schema: %w", label, err)
}

func (g *schemaGen) err() error {
	return schemaProblems(g.problems)
}

// schemaProblems is the error of a schema that cannot be derived: one
// entry per problem, each "<Go path>: <what is wrong>", so that
// compilation reports every one as a mistake of its own.
type schemaProblems []string

func (e schemaProblems) Error() string { return strings.Join(e, "; ") }

func typeLabel(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() != "" {
		return t.Name()
	}
	return t.String()
}

// node post-processes one schema node whose Go type is t (nil when unknown,
// as inside a custom JSONSchema method's output).
func (g *schemaGen) node(n any, t reflect.Type, loc string) any {
	if b, ok := n.(bool); ok && b {
		return &object{vals: map[string]any{}} // "true" reads better as {}
	}
	o, ok := n.(*object)
	if !ok {
		return n
	}
	for _, k := range o.keys {
		switch {
		case k == "default" && g.form:
			// Forms may suggest values; the form check vets them.
		case k == "default":
			g.problem(loc, "a default value (jsonschema \"default\" tag) is not allowed here: agnara publishes no defaults in tool schemas; apply the default in the handler (only elicitation forms carry defaults)")
		case !portableschema.Keyword(k): // the set mcpimport accepts, ADR 0003
			g.problem(loc, "JSON Schema keyword %q is outside the portable set agnara publishes", k)
		}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t == timeType || describesItself(t) || isText(t, g.output)) {
		t = nil // leaves: nothing to pair with Go fields below
	}
	if t != nil && o.vals["type"] == "integer" {
		intBounds(o, t)
	}
	if po, ok := o.vals["properties"].(*object); ok {
		byName := map[string]field{}
		if t != nil && t.Kind() == reflect.Struct {
			fields, _ := structFields(t)
			for _, f := range fields {
				byName[f.name] = f
			}
		}
		for _, k := range po.keys {
			f, known := byName[k]
			childLoc := loc + "." + k
			if known {
				childLoc = loc + "." + f.goPath
			}
			child := g.node(po.vals[k], f.typ, childLoc)
			if known && g.mayBeNull(f.typ, f.omit) {
				child = nullable(child)
			}
			po.vals[k] = child
		}
	}
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
		elem = t.Elem()
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if child, ok := o.vals[k].(*object); ok {
			var ct reflect.Type
			if elem != nil && (k == "items") == (t.Kind() != reflect.Map) {
				ct = elem
			}
			n := g.node(child, ct, loc+"[]")
			if ct != nil && g.mayBeNull(ct, false) {
				n = nullable(n)
			}
			o.vals[k] = n
		}
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if arr, ok := o.vals[k].([]any); ok {
			for i := range arr {
				arr[i] = g.node(arr[i], t, loc)
			}
		}
	}
	slices.SortStableFunc(o.keys, func(a, b string) int { return keywordRank(a) - keywordRank(b) })
	return o
}

// keywordOrder is the order keywords are published in, so that a reader
// sees what a value is before its details.
var keywordOrder = []string{
	"type", "title", "description", "format", "enum", "const",
	"minLength", "maxLength", "pattern", "minimum", "exclusiveMinimum",
	"maximum", "exclusiveMaximum", "multipleOf", "contentEncoding",
	"contentMediaType", "items", "minItems", "maxItems", "uniqueItems",
	"properties", "required", "additionalProperties", "anyOf", "oneOf",
}

func keywordRank(k string) int {
	if i := slices.Index(keywordOrder, k); i >= 0 {
		return i
	}
	return len(keywordOrder)
}

// mayBeNull reports whether a value of type t (in a field tagged omitempty
// when omit is set) may be null: in arguments, whenever t is a pointer (Go
// decodes null as nil); in results, whenever Go encodes it as null.
func (g *schemaGen) mayBeNull(t reflect.Type, omit bool) bool {
	if !g.output {
		return t.Kind() == reflect.Pointer
	}
	return !omit && nilable(t)
}

// intBounds declares the range of fixed-size Go integers, so that a value
// that would overflow the field is a schema violation, not a decode error.
func intBounds(o *object, t reflect.Type) {
	var lo, hi string
	switch t.Kind() {
	case reflect.Int8:
		lo, hi = "-128", "127"
	case reflect.Int16:
		lo, hi = "-32768", "32767"
	case reflect.Int32:
		lo, hi = "-2147483648", "2147483647"
	case reflect.Uint8:
		lo, hi = "0", "255"
	case reflect.Uint16:
		lo, hi = "0", "65535"
	case reflect.Uint32:
		lo, hi = "0", "4294967295"
	case reflect.Uint, reflect.Uint64:
		lo = "0"
	}
	if _, ok := o.vals["minimum"]; !ok && lo != "" {
		o.set("minimum", json.Number(lo))
	}
	if _, ok := o.vals["maximum"]; !ok && hi != "" {
		o.set("maximum", json.Number(hi))
	}
}

// nilable reports whether Go may encode a value of type t as null.
func nilable(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map:
		return true
	}
	return false
}

// nullable widens a schema node to also accept null.
func nullable(n any) any {
	o, ok := n.(*object)
	if !ok || len(o.keys) == 0 {
		return n
	}
	if ty, ok := o.vals["type"].(string); ok {
		o.vals["type"] = []any{ty, "null"}
		if enum, ok := o.vals["enum"].([]any); ok && !slices.Contains(enum, nil) {
			o.vals["enum"] = append(enum, nil)
		}
		return o
	}
	null := &object{vals: map[string]any{}}
	null.set("type", "null")
	w := &object{vals: map[string]any{}}
	w.set("anyOf", []any{o, null})
	return w
}
