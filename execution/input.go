package execution

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Violation is one way in which arguments fail their input schema. A failure
// with code InvalidInput lists every violation in its details, under the key
// "violations", so a caller can fix all of them in one retry.
type Violation struct {
	// Path is the JSON Pointer (RFC 6901) of the offending value in the
	// arguments, such as "/address/zip"; "" is the arguments object itself.
	// For a missing field it is where the field should be.
	Path string `json:"path"`
	// Message says what is wrong, without repeating the value sent.
	Message string `json:"message"`
}

// maxViolations bounds the violations reported for one invocation; details
// say "truncated": true when there were more.
const maxViolations = 64

// compileValidator compiles a published schema for validation. Identical
// schemas (capabilities sharing an input type, capabilities without input)
// share one validator.
func compileValidator(schema []byte) (*jsonschema.Schema, error) {
	return schemacheck.CompileShared(schema)
}

// notJSON is the failure of arguments that are not one JSON value.
func notJSON() *Failure {
	return invalidInput([]Violation{{Path: "", Message: "arguments are not valid JSON"}}, false)
}

// validateArguments parses and validates raw arguments (or an answer's
// content). It returns nil when they are valid, and otherwise the
// invalid_input failure to answer with.
func validateArguments(v *jsonschema.Schema, args []byte) *Failure {
	doc, ok := parseDocument(args)
	if !ok {
		return notJSON()
	}
	return validateDocument(v, doc)
}

// validateDocument validates parsed arguments (see parseDocument). It
// returns nil when they are valid, and otherwise the invalid_input failure
// to answer with.
func validateDocument(v *jsonschema.Schema, doc any) *Failure {
	err := v.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return invalidInput([]Violation{{Path: "", Message: "arguments could not be validated"}}, false)
	}
	var vs []Violation
	collectViolations(ve, "", &vs)
	if len(vs) == 0 {
		vs = append(vs, Violation{Path: pointer(ve.InstanceLocation), Message: "does not match the input schema"})
	}
	return reportViolations(vs)
}

// reportViolations is the invalid_input failure of violations vs, in any
// order: sorted by path then message, each reported once, at most
// maxViolations of them. Both readers of arguments answer with it: the
// general validator's (validateDocument) and the one pass (onepass.go).
func reportViolations(vs []Violation) *Failure {
	slices.SortStableFunc(vs, func(a, b Violation) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	vs = slices.Compact(vs)
	truncated := len(vs) > maxViolations
	if truncated {
		vs = vs[:maxViolations]
	}
	return invalidInput(vs, truncated)
}

func invalidInput(vs []Violation, truncated bool) *Failure {
	details := map[string]any{"violations": vs}
	if truncated {
		details["truncated"] = true
	}
	msg := "the arguments do not match the input schema"
	if len(vs) == 1 {
		msg += ": " + describe(vs[0])
	} else {
		msg += fmt.Sprintf(" (%d violations)", len(vs))
	}
	return &Failure{Code: InvalidInput, Message: msg, Details: details}
}

func describe(v Violation) string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + ": " + v.Message
}

func pointer(loc []string) string {
	if len(loc) == 0 {
		return ""
	}
	var b strings.Builder
	for _, tok := range loc {
		b.WriteByte('/')
		b.WriteString(pointerEscape(tok))
	}
	return b.String()
}

// collectViolations flattens a validation error tree into caller-safe
// violations, their paths under prefix (the pointer of the value e is
// about). Messages are written here rather than taken from the validator,
// whose messages quote the offending values.
func collectViolations(e *jsonschema.ValidationError, prefix string, out *[]Violation) {
	at := prefix + pointer(e.InstanceLocation)
	add := func(path, format string, args ...any) {
		*out = append(*out, Violation{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Group, *kind.Schema, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			collectViolations(c, prefix, out)
		}
	case *kind.AnyOf:
		add(at, "matches none of the allowed alternatives")
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			add(at, "matches more than one of the exclusive alternatives")
		} else {
			add(at, "matches none of the allowed alternatives")
		}
	case *kind.Required:
		for _, m := range k.Missing {
			add(at+"/"+pointerEscape(m), "required field is missing")
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			add(at+"/"+pointerEscape(p), "unknown field")
		}
	case *kind.FalseSchema:
		add(at, "no value is allowed here")
	case *kind.Type:
		add(at, "want %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		add(at, "must be one of %s", displayList(k.Want))
	case *kind.Const:
		add(at, "must be %s", display(k.Want))
	case *kind.Format:
		add(at, "is not a valid %s", k.Want)
	case *kind.MinLength:
		if k.Want == 1 {
			add(at, "must not be empty")
		} else {
			add(at, "must be at least %d characters long", k.Want)
		}
	case *kind.MaxLength:
		add(at, "must be at most %d characters long", k.Want)
	case *kind.Pattern:
		add(at, "does not match the pattern %s", k.Want)
	case *kind.Minimum:
		add(at, "must be >= %s", k.Want.RatString())
	case *kind.Maximum:
		add(at, "must be <= %s", k.Want.RatString())
	case *kind.ExclusiveMinimum:
		add(at, "must be > %s", k.Want.RatString())
	case *kind.ExclusiveMaximum:
		add(at, "must be < %s", k.Want.RatString())
	case *kind.MultipleOf:
		add(at, "must be a multiple of %s", k.Want.RatString())
	case *kind.MinItems:
		if k.Want == 1 {
			add(at, "must not be empty")
		} else {
			add(at, "must have at least %d items", k.Want)
		}
	case *kind.MaxItems:
		add(at, "must have at most %d items", k.Want)
	case *kind.UniqueItems:
		add(at, "items must be unique")
	case *kind.MinProperties:
		add(at, "must have at least %d fields", k.Want)
	case *kind.MaxProperties:
		add(at, "must have at most %d fields", k.Want)
	case *kind.ContentEncoding:
		add(at, "is not %s encoded", k.Want)
	case *kind.ContentMediaType:
		add(at, "is not of media type %s", k.Want)
	default:
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				collectViolations(c, prefix, out)
			}
			return
		}
		add(at, "does not match the schema (%s)", strings.Join(e.ErrorKind.KeywordPath(), "/"))
	}
}

func display(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "the allowed value"
	}
	return string(b)
}

func displayList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = display(v)
	}
	return strings.Join(parts, ", ")
}

// decodeViolation words an error of encoding/json's decoding, or of a
// type's own UnmarshalJSON or UnmarshalText, as the violation answered.
func decodeViolation(err error) Violation {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := ""
		if te.Field != "" {
			path = "/" + strings.Join(strings.Split(te.Field, "."), "/")
		}
		return Violation{Path: path, Message: msgDoesNotFit}
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return Violation{Path: "/" + pointerEscape(strings.Trim(f, `"`)), Message: msgUnknown}
	}
	return Violation{Path: "", Message: msgCannotParse}
}

// argumentTags are the struct tags that describe a field as an argument.
var argumentTags = []string{"jsonschema", "jsonschema_description", "jsonschema_extras", mcpTagKey, "enumtitles", "enumnames"}

// dropped is a field of an input (or form) struct that no argument can
// ever set, and why.
type dropped struct {
	goPath, msg string
}

// undecodable lists the fields of input struct t, embedded ones included,
// that encoding/json or the closed schema leave out although the struct
// declares them, so that the handler would always see their zero value
// without a word (issue 38): unexported fields, fields tagged json:"-"
// that another tag describes as an argument, and fields tagged
// jsonschema:"-", which the closed schema refuses every argument for.
// Blank fields (_) are nobody's argument, and a bare json:"-" is how a
// field is left out on purpose.
func undecodable(t reflect.Type) []dropped {
	var out []dropped
	var walk func(t reflect.Type, prefix string, depth int)
	walk = func(t reflect.Type, prefix string, depth int) {
		if depth > 16 {
			return // structFields reports it
		}
		for i := range t.NumField() {
			f := t.Field(i)
			jtag, hasJSON := f.Tag.Lookup("json")
			name, _, _ := strings.Cut(jtag, ",")
			goPath := prefix + f.Name
			if jtag == "-" {
				var marks []string
				for _, k := range argumentTags {
					if v, ok := f.Tag.Lookup(k); ok && !(k == "jsonschema" && v == "-") {
						marks = append(marks, k)
					}
				}
				if len(marks) > 0 {
					out = append(out, dropped{goPath, fmt.Sprintf(`json:"-" leaves the field out of the arguments, but its %s tag describes it as one: remove json:"-" to accept it, or the %s tag to leave it out`, strings.Join(marks, " and "), strings.Join(marks, " and "))})
				}
				continue
			}
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, goPath+".", depth+1)
					continue
				}
			}
			if f.Name == "_" {
				continue
			}
			if !f.IsExported() {
				jsonName := f.Name
				if hasJSON && name != "" {
					jsonName = name
				}
				r, size := utf8.DecodeRuneInString(f.Name)
				exported := string(unicode.ToUpper(r)) + f.Name[size:]
				if !unicode.IsUpper(unicode.ToUpper(r)) {
					exported = "X" + f.Name // _name, or a letter without case
				}
				out = append(out, dropped{goPath, fmt.Sprintf("unexported field: no argument can set it, so the handler always sees its zero value: export it (%s, tagged json:%q), or move it out of the input struct", exported, jsonName)})
				continue
			}
			if strings.Split(f.Tag.Get("jsonschema"), ",")[0] == "-" {
				out = append(out, dropped{goPath, `jsonschema:"-" leaves the field out of the input schema, which admits no other member, so no call can set it: remove jsonschema:"-" to accept it, or tag it json:"-" to leave it out of the arguments`})
			}
		}
	}
	walk(t, "", 0)
	return out
}
