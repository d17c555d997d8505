package execution

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// typeSchema derives the raw JSON Schema of t, which schemaGen.node then
// post-processes: a tree of *object, []any and JSON scalars, nested and
// embedded structs inlined, the fields as structFields lists them. It
// reads the jsonschema, jsonschema_description and jsonschema_extras tags
// as github.com/invopop/jsonschema v0.14 read them when agnara-go derived
// schemas with it, and writes the keywords in the order it wrote them, so
// that published schemas stay what they were, byte for byte (ADR 71).
//
// t has passed schemaGen.check: no recursion, no channels, functions or
// non-string map keys, no custom JSON encoding without a JSONSchema method.
func typeSchema(t reflect.Type, output bool) (any, error) {
	r := &typeReflector{output: output, custom: map[*object]bool{}}
	s := r.schema(t)
	if r.err != nil {
		return nil, r.err
	}
	return r.anything(s), nil
}

// typeReflector derives one schema.
type typeReflector struct {
	output bool
	// custom are the schemas JSONSchema methods returned: written as they
	// are, not generated.
	custom map[*object]bool
	err    error // the first reason the schema cannot be derived
}

func (r *typeReflector) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// schema returns the schema of a value of type t. The schema that admits
// anything (of an interface or a json.RawMessage) is an empty object,
// which tags may still add keywords to; anything turns the ones that are
// left empty into true where the generator wrote true.
func (r *typeReflector) schema(t reflect.Type) any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if isText(t, r.output) {
		return newObject("type", "string")
	}
	if describesItself(t) {
		return r.describe(t)
	}
	o := newObject()
	switch t.Kind() {
	case reflect.Struct:
		if t == timeType {
			return newObject("type", "string", "format", "date-time")
		}
		return r.structSchema(t)
	case reflect.Slice, reflect.Array:
		if t == rawMessageType {
			return o
		}
		if t.Kind() == reflect.Array {
			n := json.Number(strconv.Itoa(t.Len()))
			o.set("minItems", n)
			o.set("maxItems", n)
		}
		if t.Kind() == reflect.Slice && t.Elem() == byteType {
			o.set("type", "string")
			o.set("contentEncoding", "base64")
		} else {
			o.set("type", "array")
			o.set("items", r.schema(t.Elem()))
		}
	case reflect.Map:
		o.set("type", "object")
		if t.Elem().Kind() != reflect.Interface {
			o.set("additionalProperties", r.schema(t.Elem()))
		}
	case reflect.Interface:
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		o.set("type", "integer")
	case reflect.Float32, reflect.Float64:
		o.set("type", "number")
	case reflect.Bool:
		o.set("type", "boolean")
	case reflect.String:
		o.set("type", "string")
	default:
		r.fail(fmt.Errorf("%s values cannot be represented in JSON", t))
	}
	sortKeywords(o)
	return o
}

var byteType = reflect.TypeFor[byte]()

// describesItself reports whether t, or a pointer to it, has a method
// JSONSchema with no argument and one result, which encoding/json encodes
// as t's JSON Schema.
func describesItself(t reflect.Type) bool {
	m, ok := reflect.PointerTo(t).MethodByName("JSONSchema")
	return ok && m.Type.NumIn() == 1 && m.Type.NumOut() == 1
}

// describe is the schema t's JSONSchema method returns, called on a new
// zero value: an object, or a boolean schema.
func (r *typeReflector) describe(t reflect.Type) any {
	res := reflect.New(t).MethodByName("JSONSchema").Call(nil)[0]
	b, err := json.Marshal(res.Interface())
	if err != nil {
		r.fail(fmt.Errorf("%s.JSONSchema(): %w", t, err))
		return true
	}
	v, err := parseOrdered(b)
	if err != nil {
		r.fail(fmt.Errorf("%s.JSONSchema(): %w", t, err))
		return true
	}
	switch v := v.(type) {
	case *object:
		r.custom[v] = true
		return v
	case bool:
		return v
	}
	r.fail(fmt.Errorf("%s.JSONSchema() returned %.40s, which is not a JSON Schema: return a schema object, such as a *jsonschema.Schema", t, b))
	return true
}

// structSchema is the schema of a struct that does not describe itself: a
// closed object of its JSON members, each required unless omitempty or
// omitzero (or tagged jsonschema:"required").
func (r *typeReflector) structSchema(t reflect.Type) *object {
	props := newObject()
	o := newObject("properties", props, "additionalProperties", false, "type", "object")
	fields, _ := structFields(t)
	var required []any
	for _, f := range fields {
		prop := r.fieldTags(r.schema(f.typ), f, o)
		flags := strings.Split(f.tag, ",")
		if slices.Contains(flags, "nullable") {
			prop = newObject("oneOf", []any{prop, newObject("type", "null")})
		}
		props.set(f.name, prop)
		if !f.omit || slices.Contains(flags, "required") {
			required = append(required, f.name)
		}
	}
	if len(required) > 0 {
		o.set("required", required)
	}
	sortKeywords(o)
	return o
}

// fieldTags applies a field's tags to prop, the schema of its type, and
// returns it; parent is the schema of the struct, which oneof_required and
// anyof_required add alternatives to. A boolean schema a JSONSchema method
// returned takes no keywords.
func (r *typeReflector) fieldTags(prop any, f field, parent *object) any {
	o, ok := prop.(*object)
	if !ok {
		return prop
	}
	setOrDel(o, "description", f.desc)
	var rest []string // the keywords of o's type
	for _, item := range splitOnUnescapedCommas(f.tag) {
		key, val, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		switch key {
		case "title", "description", "type":
			setOrDel(o, key, val)
		case "anchor":
			setOrDel(o, "$anchor", val)
		case "oneof_required", "anyof_required":
			alternative(parent, ofKey(key), val, f.name)
		case "oneof_ref", "anyof_ref":
			sub := o
			if _, ok := o.vals["items"]; ok {
				sub = itemsObject(o)
			}
			sub.del("$ref")
			for _, ref := range strings.Split(val, ";") {
				appendTo(sub, ofKey(key), newObject("$ref", ref))
			}
			sortKeywords(sub)
		case "oneof_type", "anyof_type":
			o.del("type")
			for _, ty := range strings.Split(val, ";") {
				appendTo(o, ofKey(key), newObject("type", ty))
			}
		default:
			rest = append(rest, item)
		}
	}
	switch o.vals["type"] {
	case "string":
		stringKeywords(o, rest)
	case "number", "integer":
		numberKeywords(o, rest)
	case "array":
		r.arrayKeywords(o, rest, f)
	case "boolean":
		booleanKeywords(o, rest)
	}
	sortKeywords(o)
	if f.extras != "" {
		extraKeywords(o, splitOnUnescapedCommas(f.extras))
	}
	return o
}

// ofKey is "oneOf" for the oneof_ tags, "anyOf" for the anyof_ ones.
func ofKey(tag string) string {
	if strings.HasPrefix(tag, "oneof") {
		return "oneOf"
	}
	return "anyOf"
}

// alternative adds name to the required list of the alternative titled
// title in parent's key (oneOf or anyOf), which it creates if need be.
func alternative(parent *object, key, title, name string) {
	list, _ := parent.vals[key].([]any)
	for _, a := range list {
		if a, ok := a.(*object); ok && a.vals["title"] == title {
			req, _ := a.vals["required"].([]any)
			a.set("required", append(req, name))
			return
		}
	}
	alt := newObject("required", []any{name}, "title", title)
	parent.set(key, append(list, alt))
	sortKeywords(parent)
}

// itemsObject returns o's items schema as an object to add keywords to.
func itemsObject(o *object) *object {
	it, ok := o.vals["items"].(*object)
	if !ok {
		it = newObject() // a boolean schema a JSONSchema method returned
		o.set("items", it)
	}
	return it
}

func appendTo(o *object, key string, v any) {
	list, _ := o.vals[key].([]any)
	o.set(key, append(list, v))
}

func stringKeywords(o *object, tags []string) {
	for _, tag := range tags {
		key, val, _ := strings.Cut(tag, "=")
		switch key {
		case "minLength", "maxLength":
			setUint(o, key, val)
		case "pattern", "format":
			setOrDel(o, key, val)
		case "readOnly", "writeOnly":
			b, _ := strconv.ParseBool(val)
			setOrDel(o, key, b)
		case "default":
			o.set("default", val)
		case "example":
			appendTo(o, "examples", val)
		case "enum":
			appendTo(o, "enum", val)
		}
	}
}

func numberKeywords(o *object, tags []string) {
	for _, tag := range tags {
		parts := strings.Split(tag, "=")
		if len(parts) != 2 {
			continue
		}
		key, val := parts[0], parts[1]
		n, ok := number(val)
		switch key {
		case "multipleOf", "minimum", "maximum", "exclusiveMaximum", "exclusiveMinimum":
			setOrDel(o, key, n)
		case "default":
			if ok {
				o.set("default", n)
			}
		case "example":
			if ok {
				appendTo(o, "examples", n)
			}
		case "enum":
			if ok {
				appendTo(o, "enum", n)
			}
		}
	}
}

func booleanKeywords(o *object, tags []string) {
	for _, tag := range tags {
		parts := strings.Split(tag, "=")
		if len(parts) == 2 && parts[0] == "default" && (parts[1] == "true" || parts[1] == "false") {
			o.set("default", parts[1] == "true")
		}
	}
}

// arrayKeywords applies the array keywords to o, and the keywords of its
// items' type to its items.
func (r *typeReflector) arrayKeywords(o *object, tags []string, f field) {
	var defaults []any
	var rest []string
	items := func() *object {
		if _, ok := o.vals["items"]; !ok {
			r.fail(fmt.Errorf("%s: jsonschema tag type=array on a field that is not a slice or an array", f.goPath))
			return newObject()
		}
		return itemsObject(o)
	}
	for _, tag := range tags {
		parts := strings.Split(tag, "=")
		if len(parts) != 2 {
			continue
		}
		key, val := parts[0], parts[1]
		switch key {
		case "minItems", "maxItems":
			setUint(o, key, val)
		case "uniqueItems":
			o.set("uniqueItems", true)
		case "default":
			defaults = append(defaults, val)
		case "format", "pattern":
			it := items()
			setOrDel(it, key, val)
			sortKeywords(it)
		default:
			rest = append(rest, tag)
		}
	}
	if len(defaults) > 0 {
		o.set("default", defaults)
	}
	if len(rest) == 0 {
		return
	}
	it := items()
	switch it.vals["type"] {
	case "string":
		stringKeywords(it, rest)
	case "number", "integer":
		numberKeywords(it, rest)
	case "boolean":
		booleanKeywords(it, rest)
	}
	sortKeywords(it)
}

// extraKeywords adds the keywords of a jsonschema_extras tag to o, after
// its own in the order of their names; one o has already is replaced in
// its place. A value true or false is a boolean, a minimum an integer,
// anything else a string; a key given again makes a list of the strings.
func extraKeywords(o *object, tags []string) {
	// Keywords outside generatedOrder came from a JSONSchema method, as
	// the extras of its schema: the tag adds to them.
	extras := map[string]any{}
	for _, k := range slices.Clone(o.keys) {
		if !slices.Contains(generatedOrder, k) {
			v := o.vals[k]
			if n, ok := v.(json.Number); ok {
				if i, err := strconv.Atoi(string(n)); err == nil {
					v = i
				}
			}
			extras[k] = v
			o.del(k)
		}
	}
	for _, tag := range tags {
		key, val, ok := strings.Cut(tag, "=")
		if !ok {
			continue
		}
		switch prev := extras[key].(type) {
		case nil:
			switch {
			case key == "minimum":
				n, _ := strconv.Atoi(val)
				extras[key] = n
			case val == "true" || val == "false":
				extras[key] = val == "true"
			default:
				extras[key] = val
			}
		case string:
			extras[key] = []any{prev, val}
		case []any:
			extras[key] = append(prev, val)
		case int:
			extras[key], _ = strconv.Atoi(val)
		case bool:
			extras[key] = val == "true" || val == "t"
		}
	}
	keys := make([]string, 0, len(extras))
	for k := range extras {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v := extras[k]
		if n, ok := v.(int); ok {
			v = json.Number(strconv.Itoa(n))
		}
		o.set(k, v)
	}
}

// number is val as a JSON number, if Go reads it as an integer or a float.
func number(val string) (json.Number, bool) {
	n := json.Number(val)
	if _, err := n.Int64(); err == nil {
		return n, true
	}
	if _, err := n.Float64(); err == nil {
		return n, true
	}
	return "", false
}

func setUint(o *object, key, val string) {
	if n, err := strconv.ParseUint(val, 10, 64); err == nil {
		o.set(key, json.Number(strconv.FormatUint(n, 10)))
	} else {
		o.del(key)
	}
}

// setOrDel sets key to v, or removes it when v is the zero value, which
// the generator leaves out.
func setOrDel[V string | bool | json.Number](o *object, key string, v V) {
	var zero V
	if v == zero {
		o.del(key)
		return
	}
	o.set(key, v)
}

func newObject(kv ...any) *object {
	o := &object{vals: map[string]any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		o.set(kv[i].(string), kv[i+1])
	}
	return o
}

// splitOnUnescapedCommas splits a tag at the commas not escaped with a
// backslash.
func splitOnUnescapedCommas(tag string) []string {
	parts := strings.Split(tag, ",")
	out := []string{parts[0]}
	for _, next := range parts[1:] {
		if last := out[len(out)-1]; strings.HasSuffix(last, `\`) {
			out[len(out)-1] = last[:len(last)-1] + "," + next
			continue
		}
		out = append(out, next)
	}
	return out
}

// anything turns the schemas left empty into true, as the generator wrote
// them, below the root: the schema of an interface or a json.RawMessage
// without tags. (schemaGen.node turns a true back into {} everywhere but
// as items and additionalProperties.) It does not look into the schemas
// JSONSchema methods returned, which are as they encoded.
func (r *typeReflector) anything(v any) any {
	o, ok := v.(*object)
	if !ok || r.custom[o] {
		return v
	}
	for _, k := range o.keys {
		switch c := o.vals[k].(type) {
		case *object:
			switch k {
			case "items", "additionalProperties":
				o.vals[k] = r.subschema(c)
			case "properties":
				for _, name := range c.keys {
					c.vals[name] = r.subschema(c.vals[name])
				}
			}
		case []any:
			if k == "anyOf" || k == "oneOf" {
				for i := range c {
					c[i] = r.subschema(c[i])
				}
			}
		}
	}
	return o
}

func (r *typeReflector) subschema(v any) any {
	v = r.anything(v)
	if o, ok := v.(*object); ok && len(o.keys) == 0 {
		return true
	}
	return v
}

// generatedOrder is the order of the keywords in the generated schemas:
// schemaGen.node then puts those a reader looks for first in keywordOrder,
// and leaves the others (examples, readOnly, ...) in this order, the
// order of the fields of invopop/jsonschema's Schema; other keywords come
// last, as they are, jsonschema_extras keywords in the order of their
// names.
var generatedOrder = []string{
	"$schema", "$id", "$anchor", "$ref", "$dynamicRef", "$defs", "$comment",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"dependentSchemas", "prefixItems", "items", "contains", "properties",
	"patternProperties", "additionalProperties", "propertyNames", "type",
	"enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum",
	"exclusiveMinimum", "maxLength", "minLength", "pattern", "maxItems",
	"minItems", "uniqueItems", "maxContains", "minContains", "maxProperties",
	"minProperties", "required", "dependentRequired", "format",
	"contentEncoding", "contentMediaType", "contentSchema", "title",
	"description", "default", "deprecated", "readOnly", "writeOnly",
	"examples",
}

// sortKeywords puts o's keywords in generatedOrder.
func sortKeywords(o *object) {
	rank := func(k string) int {
		if i := slices.Index(generatedOrder, k); i >= 0 {
			return i
		}
		return len(generatedOrder)
	}
	slices.SortStableFunc(o.keys, func(a, b string) int { return rank(a) - rank(b) })
}
