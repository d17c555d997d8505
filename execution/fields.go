package execution

import (
	"encoding"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
)

// The types whose JSON form is not their Go shape: special cases of the
// schema generator and the types that bring their own encoding.
var (
	timeType       = reflect.TypeFor[time.Time]()
	urlType        = reflect.TypeFor[url.URL]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	jsonMarshaler  = reflect.TypeFor[json.Marshaler]()
	jsonUnmarsh    = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarsh    = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

func isText(t reflect.Type, output bool) bool {
	if t == timeType || describesItself(t) {
		return false
	}
	if output {
		return !implements(t, jsonMarshaler) && implements(t, textMarshaler)
	}
	return !implements(t, jsonUnmarsh) && implements(t, textUnmarsh)
}

// field is one JSON member of a struct type, as encoding/json sees it.
type field struct {
	name   string       // JSON name
	goPath string       // Go selector, such as "Base.ID" for promoted fields
	index  []int        // index path, as for reflect.Value.FieldByIndex
	typ    reflect.Type // field type
	omit   bool         // omitempty or omitzero
	named  bool         // the json tag names the member
	tag    string       // the jsonschema tag
	desc   string       // the jsonschema_description tag
	extras string       // the jsonschema_extras tag
	mcp    *string      // the mcp tag, nil when absent
}

// structFields lists t's JSON members the way encoding/json sees them and
// the schema describes them (typeSchema): tagged names, promoted fields of
// embedded structs, no unexported fields, nothing tagged jsonschema:"-".
// It reports what the schema could not describe as encoding/json reads
// it.
func structFields(t reflect.Type) ([]field, []string) {
	return jsonFields(t, true)
}

// jsonFields is structFields. Without schema it lists the fields the way
// the argument decoder reads them: it keeps the fields tagged
// jsonschema:"-", which encoding/json decodes all the same, and reports
// only what changes decoding (",inline" does not).
func jsonFields(t reflect.Type, schema bool) ([]field, []string) {
	var (
		fields   []field
		problems []string
		seen     = map[string]string{}
	)
	var walk func(t reflect.Type, prefix string, index []int, depth int)
	walk = func(t reflect.Type, prefix string, index []int, depth int) {
		if depth > 16 {
			problems = append(problems, fmt.Sprintf("%s: embedded structs nest too deeply", prefix))
			return
		}
		for i := range t.NumField() {
			f := t.Field(i)
			jtag := f.Tag.Get("json")
			if jtag == "-" || schema && strings.Split(f.Tag.Get("jsonschema"), ",")[0] == "-" {
				continue
			}
			name, opts, _ := strings.Cut(jtag, ",")
			goPath := prefix + f.Name
			at := append(slices.Clip(index), i)
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, goPath+".", at, depth+1)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			optList := strings.Split(opts, ",")
			if slices.Contains(optList, "string") {
				problems = append(problems, fmt.Sprintf("%s: the json \",string\" option is not supported", goPath))
			}
			if schema && slices.Contains(optList, "inline") {
				problems = append(problems, fmt.Sprintf("%s: the json \",inline\" option is not supported by encoding/json; embed the struct instead", goPath))
			}
			named := name != ""
			if !named {
				name = f.Name
			}
			if prev, dup := seen[name]; dup {
				problems = append(problems, fmt.Sprintf("%s and %s both have the JSON name %q", prev, goPath, name))
				continue
			}
			seen[name] = goPath
			var mcpTag *string
			if v, ok := f.Tag.Lookup(mcpTagKey); ok {
				mcpTag = &v
			}
			fields = append(fields, field{
				name:   name,
				goPath: goPath,
				index:  at,
				typ:    f.Type,
				omit:   slices.Contains(optList, "omitempty") || slices.Contains(optList, "omitzero"),
				named:  named,
				tag:    f.Tag.Get("jsonschema"),
				desc:   f.Tag.Get("jsonschema_description"),
				extras: f.Tag.Get("jsonschema_extras"),
				mcp:    mcpTag,
			})
		}
	}
	walk(t, "", nil, 0)
	return fields, problems
}
