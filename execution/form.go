package execution

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FormSeal makes a Form an [agnara.Form], so that it can be declared in
// agnara.CapabilityOptions.Forms. It does nothing.
func (*Form[T]) FormSeal(registry.Sealed) {}

var _ agnara.Form = (*Form[struct{}])(nil)

// formSchema is a compiled form.
type formSchema struct {
	schema    []byte
	validator *jsonschema.Schema
}

// Form is a form whose fields come from the struct T, for [Ask]. T must fit
// the elicitation form subset: a flat struct of strings (with minLength,
// maxLength, and format email, uri, date or date-time), numbers and integers
// (with minimum, maximum), booleans, string enums (jsonschema:"enum=...")
// and slices of string enums (multi-select). Anything else makes the form
// invalid; declare the form in CapabilityOptions.Forms so that Compile
// reports it with the registration's file:line.
//
// Three more tags shape what the user sees; none changes which answers are
// valid:
//
//   - jsonschema:"default=..." suggests a value the client fills in
//     (SEP-1034): default=Ada on a string, default=30 on a number,
//     default=true on a boolean, one default=... per selected option on a
//     multi-select. The default must itself be a valid value of the field.
//     agnara never applies it: an answer is what arrives, validated as
//     always (on handshake-era MCP sessions the Go SDK fills in defaults of
//     optional fields left out, on the way in; see docs/capabilities.md).
//     (Tool schemas refuse the same tag: agnara publishes no defaults.)
//   - enumtitles:"One,Two" gives the enum values titles, one per value, in
//     order (a comma inside a title is written \,). A single select is sent
//     as oneOf of const and title, a multi-select as items.anyOf (SEP-1330).
//   - enumnames:"One,Two" gives a single select titles in the legacy form,
//     enum with enumNames, for handshake-era clients that read only that
//     form. Clients at 2026-07-28 all read oneOf, and get it instead.
//
// A Form is immutable and safe for concurrent use.
type Form[T any] struct {
	message string
	f       *formSchema
	err     error
}

// NewForm derives the form for T, with message as its question.
func NewForm[T any](message string) *Form[T] {
	f := &Form[T]{message: message}
	schema, err := formSchemaOf(reflect.TypeFor[T]())
	if err != nil {
		f.err = fmt.Errorf("form %s: %w", typeLabel(reflect.TypeFor[T]()), err)
		return f
	}
	v, err := schemacheck.Compile(schema)
	if err != nil {
		f.err = fmt.Errorf("form %s: %w", typeLabel(reflect.TypeFor[T]()), err)
		return f
	}
	f.f = &formSchema{schema: schema, validator: v}
	return f
}

// Err reports why T does not fit the elicitation form subset, or nil.
func (f *Form[T]) Err() error { return f.err }

// Schema returns the form's JSON Schema.
func (f *Form[T]) Schema() json.RawMessage {
	if f.f == nil {
		return nil
	}
	return bytes.Clone(f.f.schema)
}

// Ask asks the caller to fill in form under key, and returns the submitted
// values once given and valid. An accepted submission that does not match
// the form ends the invocation with an InvalidInput failure naming every
// violation (the caller is told once, not asked again); a declined or
// cancelled one ends it with a Forbidden failure.
func Ask[T any](c *Context, key string, form *Form[T]) (T, error) {
	var v T
	if form.err != nil {
		return v, form.err
	}
	if err := c.askForm(key, form.message, form.f, false, &v); err != nil {
		return v, err
	}
	return v, nil
}

var formFormats = []string{"email", "uri", "date", "date-time"}

var formKeywords = map[string]bool{
	"type": true, "title": true, "description": true, "minLength": true, "maxLength": true,
	"format": true, "minimum": true, "maximum": true, "enum": true, "items": true,
	"default": true,
}

// formSchemaOf derives a form schema and checks it against the subset.
func formSchemaOf(t reflect.Type) ([]byte, error) {
	if t.Kind() != reflect.Struct {
		return nil, errors.New("a form is a struct")
	}
	b, err := generateFormSchema(t)
	if err != nil {
		return nil, err
	}
	root, _ := parseOrdered(b)
	o := root.(*object)
	props, _ := o.vals["properties"].(*object)
	if props == nil {
		return nil, errors.New("a form needs fields")
	}
	var problems []string
	for _, name := range props.keys {
		p, _ := props.vals[name].(*object)
		if p == nil {
			problems = append(problems, name+": not a simple value")
			continue
		}
		for _, k := range p.keys {
			if !formKeywords[k] {
				problems = append(problems, fmt.Sprintf("%s: %q is not allowed in a form", name, k))
			}
		}
		switch p.vals["type"] {
		case "string":
			if f, ok := p.vals["format"].(string); ok && !slices.Contains(formFormats, f) {
				problems = append(problems, fmt.Sprintf("%s: format %q is not allowed in a form (email, uri, date, date-time)", name, f))
			}
		case "number", "integer", "boolean":
		case "array":
			items, _ := p.vals["items"].(*object)
			if items == nil || items.vals["type"] != "string" || items.vals["enum"] == nil {
				problems = append(problems, name+": a list in a form must be a multi-select of string enum values")
			}
		default:
			problems = append(problems, fmt.Sprintf("%s: %v is not a form field type (string, number, integer, boolean, enum)", name, p.vals["type"]))
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(joinProblems(problems))
	}
	if err := titleEnums(t, props); err != nil {
		return nil, err
	}
	if err := checkDefaults(t, props); err != nil {
		return nil, err
	}
	// Forms are open to clients: drop additionalProperties, which the
	// elicitation schema subset does not have.
	o.del("additionalProperties")
	var buf bytes.Buffer
	if err := writeOrdered(&buf, o); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// titleEnums turns the enums of fields tagged enumtitles:"A,B" into titled
// options — oneOf of const and title for a single select, items.anyOf for a
// multi-select, as elicitation forms express titles since 2025-11-25 — and
// gives fields tagged enumnames:"A,B" the legacy enumNames beside their enum.
func titleEnums(t reflect.Type, props *object) error {
	fields, _ := structFields(t)
	var problems []string
	for _, f := range fields {
		sf, ok := t.FieldByName(f.goPath[strings.LastIndexByte(f.goPath, '.')+1:])
		if !ok {
			continue
		}
		titled, hasTitles := sf.Tag.Lookup("enumtitles")
		named, hasNames := sf.Tag.Lookup("enumnames")
		if !hasTitles && !hasNames {
			continue
		}
		p, _ := props.vals[f.name].(*object)
		tagName, tag := "enumtitles", titled
		switch {
		case hasTitles && hasNames:
			problems = append(problems, fmt.Sprintf("field %s: enumtitles and enumnames say the same thing twice: keep one", f.goPath))
			continue
		case hasNames:
			tagName, tag = "enumnames", named
			if p != nil && p.vals["type"] == "array" {
				problems = append(problems, fmt.Sprintf("field %s: enumnames titles a single select; a multi-select takes enumtitles", f.goPath))
				continue
			}
		}
		titles := splitTag(tag)
		for i := range titles {
			titles[i] = strings.TrimSpace(titles[i])
		}
		target := p
		if p != nil && p.vals["type"] == "array" {
			target, _ = p.vals["items"].(*object)
		}
		var enum []any
		if target != nil {
			enum, _ = target.vals["enum"].([]any)
		}
		if len(enum) == 0 || len(enum) != len(titles) {
			problems = append(problems, fmt.Sprintf("field %s: %s needs one title per enum value (%d values, %d titles)", f.goPath, tagName, len(enum), len(titles)))
			continue
		}
		if hasNames {
			names := make([]any, len(titles))
			for i, title := range titles {
				names[i] = title
			}
			p.set("enumNames", names)
			continue
		}
		options := make([]any, len(enum))
		for i, v := range enum {
			o := &object{vals: map[string]any{}}
			o.set("const", v)
			o.set("title", titles[i])
			options[i] = o
		}
		target.del("enum")
		if target == p {
			p.set("oneOf", options)
		} else {
			target.del("type")
			target.set("anyOf", options)
		}
	}
	if len(problems) > 0 {
		return errors.New(joinProblems(problems))
	}
	return nil
}

// checkDefaults refuses a default that is not itself a valid value of its
// field: a client would offer the user an answer the form then refuses.
func checkDefaults(t reflect.Type, props *object) error {
	fields, _ := structFields(t)
	goPath := map[string]string{}
	for _, f := range fields {
		goPath[f.name] = f.goPath
	}
	var problems []string
	for _, name := range props.keys {
		p, _ := props.vals[name].(*object)
		if p == nil {
			continue
		}
		def, ok := p.vals["default"]
		if !ok {
			continue
		}
		var sb, db bytes.Buffer
		if writeOrdered(&sb, p) != nil || writeOrdered(&db, def) != nil {
			return errors.New("cannot encode a default")
		}
		v, err := schemacheck.Compile(sb.Bytes())
		if err != nil {
			return err
		}
		inst, err := schemacheck.Parse(db.Bytes())
		if err != nil {
			return err
		}
		if v.Validate(inst) != nil {
			field := goPath[name]
			if field == "" {
				field = name
			}
			problems = append(problems, fmt.Sprintf("field %s: the default %s is not a valid value of the field", field, db.String()))
		}
	}
	if len(problems) > 0 {
		return errors.New(joinProblems(problems))
	}
	return nil
}

func joinProblems(ps []string) string {
	var b bytes.Buffer
	for i, p := range ps {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p)
	}
	return b.String()
}
