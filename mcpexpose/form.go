package mcpexpose

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

// elicitSchema is a form's requested schema as the revision version
// expresses it. execution.NewForm derives forms in the 2025-11-25 dialect,
// where titled single selects are oneOf of const and title and a field
// tagged enumnames keeps the legacy enum with enumNames; each revision is
// told the same form in its own words:
//
//   - 2026-07-28 and later: every titled single select as oneOf. The legacy
//     form is deprecated there and every client of that revision reads
//     oneOf (SEP-1330 predates it).
//   - 2025-11-25: the form as derived (both title forms are in its schema).
//   - 2025-06-18: titles only as enumNames, the one form that revision has,
//     and a default only on a boolean, the one field that revision lets
//     carry one (SEP-1034 came later).
//
// The form's meaning does not change: the same answers are valid in every
// dialect, and answers are validated against the derived form. A schema
// that cannot be read is returned as is.
func elicitSchema(schema json.RawMessage, version string) json.RawMessage {
	var rewrite func(prop []member) []member
	switch {
	case mcpversion.IsModern(version):
		if !bytes.Contains(schema, []byte(`"enumNames"`)) {
			return schema
		}
		rewrite = titlesAsOneOf
	case version < mcpversion.Handshake20251125:
		if !bytes.Contains(schema, []byte(`"oneOf"`)) && !bytes.Contains(schema, []byte(`"default"`)) {
			return schema
		}
		rewrite = handshake20250618
	default:
		return schema
	}
	root, err := members(schema)
	if err != nil {
		return schema
	}
	for i, m := range root {
		if m.key != "properties" {
			continue
		}
		props, err := members(m.val)
		if err != nil {
			return schema
		}
		for j, p := range props {
			prop, err := members(p.val)
			if err != nil {
				return schema
			}
			props[j].val = encodeMembers(rewrite(prop))
		}
		root[i].val = encodeMembers(props)
	}
	return encodeMembers(root)
}

// titledOption is one option of a titled single select.
type titledOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// titlesAsOneOf turns a legacy enum with enumNames into oneOf.
func titlesAsOneOf(prop []member) []member {
	enum, names := find(prop, "enum"), find(prop, "enumNames")
	if enum < 0 || names < 0 {
		return prop
	}
	var values, titles []string
	if json.Unmarshal(prop[enum].val, &values) != nil || json.Unmarshal(prop[names].val, &titles) != nil || len(values) != len(titles) {
		return prop
	}
	options := make([]titledOption, len(values))
	for i := range values {
		options[i] = titledOption{Const: values[i], Title: titles[i]}
	}
	b, _ := json.Marshal(options)
	prop[enum] = member{key: "oneOf", val: b}
	return slices.Delete(prop, names, names+1)
}

// handshake20250618 expresses a property in the 2025-06-18 dialect:
// oneOf titles as enum with enumNames, defaults only on booleans.
func handshake20250618(prop []member) []member {
	if i := find(prop, "oneOf"); i >= 0 {
		var options []titledOption
		if json.Unmarshal(prop[i].val, &options) == nil {
			values, titles := make([]string, len(options)), make([]string, len(options))
			for j, o := range options {
				values[j], titles[j] = o.Const, o.Title
			}
			ev, _ := json.Marshal(values)
			tv, _ := json.Marshal(titles)
			prop[i] = member{key: "enum", val: ev}
			prop = append(prop, member{key: "enumNames", val: tv})
		}
	}
	if i := find(prop, "default"); i >= 0 {
		if t := find(prop, "type"); t < 0 || string(prop[t].val) != `"boolean"` {
			prop = slices.Delete(prop, i, i+1)
		}
	}
	return prop
}

// member is one member of a JSON object, in the order it was written:
// forms list their fields in the order the user should see them.
type member struct {
	key string
	val json.RawMessage
}

// members reads a JSON object's members in order.
func members(raw json.RawMessage) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, val: val})
	}
	return out, nil
}

// encodeMembers writes members as a JSON object, in order.
func encodeMembers(ms []member) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(m.val)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func find(ms []member, key string) int {
	for i, m := range ms {
		if m.key == key {
			return i
		}
	}
	return -1
}
