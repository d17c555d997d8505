package mcpexpose

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// argument is one field of a capability's input as resources and prompts
// see it: a string on the wire (a template variable, a prompt argument),
// converted to the field's JSON type before the plan validates it.
type argument struct {
	name        string
	description string
	required    bool
	kind        string // the property's JSON type: "string", "integer", "number" or "boolean"
}

// inputArguments reads a plan's input schema into its arguments, in field
// order. A property whose values cannot be written as one string (an
// object, an array) is an error naming it: resources and prompts pass
// arguments as strings.
func inputArguments(schema json.RawMessage) ([]argument, error) {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %v", err)
	}
	names, err := objectKeys(top.Properties)
	if err != nil {
		return nil, err
	}
	var props map[string]struct {
		Type        any    `json:"type"`
		Description string `json:"description"`
	}
	if len(top.Properties) > 0 {
		if err := json.Unmarshal(top.Properties, &props); err != nil {
			return nil, fmt.Errorf("input schema properties: %v", err)
		}
	}
	args := make([]argument, 0, len(names))
	for _, name := range names {
		p := props[name]
		kind, ok := scalarKind(p.Type)
		if !ok {
			return nil, fmt.Errorf("input field %q is not a string, number, integer or boolean: resources and prompts pass arguments as strings", name)
		}
		args = append(args, argument{name: name, description: p.Description, required: slices.Contains(top.Required, name), kind: kind})
	}
	return args, nil
}

// scalarKind returns the one scalar JSON type a property's "type" names,
// ignoring "null".
func scalarKind(t any) (string, bool) {
	var kinds []string
	switch t := t.(type) {
	case string:
		kinds = []string{t}
	case []any:
		for _, k := range t {
			if s, ok := k.(string); ok && s != "null" {
				kinds = append(kinds, s)
			}
		}
	}
	if len(kinds) != 1 {
		return "", false
	}
	switch kinds[0] {
	case "string", "integer", "number", "boolean":
		return kinds[0], true
	}
	return "", false
}

// objectKeys returns the keys of a JSON object in document order.
func objectKeys(obj json.RawMessage) ([]string, error) {
	if len(bytes.TrimSpace(obj)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("input schema properties are not an object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// argumentsJSON builds the plan's arguments from string values: each
// converted to its field's type when it reads as one, else left a string
// (for the plan's validation to refuse with invalid_input, naming the
// field). Values for names that are not fields are passed on too, for the
// plan to refuse as unknown.
func argumentsJSON(args []argument, values map[string]string) json.RawMessage {
	obj := make(map[string]json.RawMessage, len(values))
	for name, v := range values {
		obj[name] = argumentValue(args, name, v)
	}
	b, _ := json.Marshal(obj) // strings and checked literals only
	return b
}

func argumentValue(args []argument, name, v string) json.RawMessage {
	i := slices.IndexFunc(args, func(a argument) bool { return a.name == name })
	if i >= 0 {
		switch args[i].kind {
		case "integer":
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return json.RawMessage(v)
			}
		case "number":
			if f, err := strconv.ParseFloat(v, 64); err == nil && json.Valid([]byte(v)) && !isInfOrNaN(f) {
				return json.RawMessage(v)
			}
		case "boolean":
			if v == "true" || v == "false" {
				return json.RawMessage(v)
			}
		}
	}
	b, _ := json.Marshal(v)
	return b
}

func isInfOrNaN(f float64) bool {
	return f != f || f > 1.7976931348623157e308 || f < -1.7976931348623157e308
}
