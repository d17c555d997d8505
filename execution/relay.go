package execution

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// A capability that stands between its caller and another party that asks
// questions — a tool imported from another MCP server, whose elicitation,
// sampling and roots requests reach it while it runs — relays them: it
// asks its own caller with [Context.Relay] and hands the answers back.
// Work between rounds that must survive them (the other party's pending
// state) is kept with [Context.SetRoundState], which the adapter carries,
// sealed, to the next round of the same call.

// maxRoundState bounds the state one round keeps for the next
// ([Context.SetRoundState]): small enough that, with the questions and
// answers, it fits in the sealed state an MCP round carries.
const maxRoundState = 16 << 10

// maxRelayedFields bounds the fields of a relayed form.
const maxRelayedFields = 64

// ErrRoundStateTooLarge is returned by [Context.SetRoundState] for state
// over 16 KiB.
var ErrRoundStateTooLarge = errors.New("execution: round state over 16 KiB")

// SetRoundState keeps state for the next round of this call. When the
// invocation ends asking ([ErrInputRequired]), the adapter carries state
// with the questions and hands it back with the answers (for MCP, sealed
// inside the requestState on 2026-07-28 and inside the session's rounds on
// earlier revisions), where [Context.RoundState] returns it. An invocation
// that ends otherwise drops it. The caller never sees it and cannot change
// it: adapters seal it, and a resumed round is bound to the same caller,
// tool and arguments. State is copied; the latest call wins. State over 16
// KiB is refused with [ErrRoundStateTooLarge].
func (c *Context) SetRoundState(state []byte) error {
	if len(state) > maxRoundState {
		return ErrRoundStateTooLarge
	}
	c.inter.mu.Lock()
	defer c.inter.mu.Unlock()
	c.inter.roundOut = bytes.Clone(state)
	return nil
}

// RoundState returns the state the previous round of this call kept
// ([Context.SetRoundState]), or nil in a call's first round.
func (c *Context) RoundState() []byte { return bytes.Clone(c.inter.roundIn) }

// Relay asks the caller q under key — a question another party put, as it
// put it — and returns the caller's answer as given, once there is one. It
// is for capabilities that relay such questions (see above); a capability
// asking its own questions uses [Ask], [Context.Confirm], [Context.Sample]
// or [Context.Roots].
//
// q is checked first, and a question that does not pass is an error to
// return as is (the invocation ends with an internal failure, its cause
// logged): a sampling request needs q.Sampling with at least one message
// of role "user" or "assistant" and a positive MaxTokens; roots need
// nothing; a URL elicitation needs a message and a URL that passes the
// checks of [Context.AskURL]; an elicitation needs a message and a form (q.Schema) within the
// elicitation form subset of MCP (the requestedSchema of
// elicitation/create), what a client can render as a flat form:
//
//   - the root: "type": "object", "properties" (at most 64), "required"
//     (names of those properties), and an optional "$schema" string;
//     nothing else;
//   - a string field: "title", "description", "minLength", "maxLength",
//     "format" (email, uri, date or date-time), "default"; or a single
//     select: "enum" of strings (with "enumNames" of as many titles, the
//     legacy form) or "oneOf" of {"const", "title"} options;
//   - a number or integer field: "title", "description", "minimum",
//     "maximum", "default";
//   - a boolean field: "title", "description", "default";
//   - a multi-select: "type": "array", "title", "description",
//     "minItems", "maxItems", "default", and "items" that is either
//     {"type": "string", "enum": [...]} or {"anyOf": [{"const", "title"}, ...]}.
//
// A default must itself be a valid value of its field. The form must
// compile as JSON Schema 2020-12 without fetching anything.
//
// Only an answer to the question as asked counts, as for [Context.Confirm]:
// an answer the caller sent before being asked does not, since the other
// party's question was meant for the person it is shown to. Unlike [Ask],
// a declined or cancelled elicitation is returned as the answer, not as a
// failure: the party that asked decides what it means. An accepted
// elicitation's content is validated against the form; one that does not
// match ends the invocation with an InvalidInput failure naming every
// violation. A sampling answer must carry the model's result, a roots
// answer the roots. An accepted URL elicitation can be reported done with
// [Context.URLDone] under the same key.
func (c *Context) Relay(key string, q InputRequest) (Answer, error) {
	if key == ConfirmKey {
		return Answer{}, errReservedKey
	}
	if err := c.mayAsk(); err != nil {
		return Answer{}, err
	}
	var form *formSchema
	switch q.Kind {
	case Elicitation:
		if q.Message == "" {
			return Answer{}, errors.New("execution: a relayed elicitation needs a message")
		}
		f, err := relayedForm(q.Schema)
		if err != nil {
			return Answer{}, err
		}
		form = f
	case Sampling:
		if err := checkRelayedSampling(q.Sampling); err != nil {
			return Answer{}, err
		}
	case Roots:
	case URLElicitation:
		if err := checkURLQuestion(q.Message, q.URL); err != nil {
			return Answer{}, err
		}
	default:
		return Answer{}, fmt.Errorf("execution: cannot relay a question of kind %s", q.Kind)
	}
	if a, ok := c.inter.answer(key, q.Kind, true); ok {
		switch q.Kind {
		case URLElicitation:
			switch a.Action {
			case "accept", "decline", "cancel":
				return Answer{Kind: URLElicitation, Action: a.Action}, nil
			}
			return Answer{}, invalidInput([]Violation{{Path: "/action", Message: fmt.Sprintf("%q is not an answer: want accept, decline or cancel", a.Action)}}, false)
		case Elicitation:
			switch a.Action {
			case "decline", "cancel":
				return Answer{Kind: Elicitation, Action: a.Action}, nil
			case "accept":
				if f := invalidAnswer(key, form.validator, a.Content); f != nil {
					return Answer{}, f
				}
				return Answer{Kind: Elicitation, Action: "accept", Content: bytes.Clone(a.Content)}, nil
			}
			return Answer{}, invalidInput([]Violation{{Path: "/action", Message: fmt.Sprintf("%q is not an answer: want accept, decline or cancel", a.Action)}}, false)
		case Sampling:
			if a.Sampling != nil {
				s := *a.Sampling
				return Answer{Kind: Sampling, Sampling: &s}, nil
			}
		case Roots:
			if a.Roots != nil {
				return Answer{Kind: Roots, Roots: slices.Clone(a.Roots)}, nil
			}
		}
	}
	r := InputRequest{Kind: q.Kind, Message: q.Message, URL: q.URL}
	if form != nil {
		r.Schema = bytes.Clone(form.schema)
	}
	if q.Sampling != nil {
		s := *q.Sampling
		s.Messages = slices.Clone(s.Messages)
		r.Sampling = &s
	}
	return Answer{}, c.inter.ask(key, r)
}

// checkRelayedSampling checks a relayed sampling request.
func checkRelayedSampling(s *SamplingRequest) error {
	switch {
	case s == nil || len(s.Messages) == 0:
		return errors.New("execution: a relayed sampling request needs messages")
	case s.MaxTokens <= 0:
		return errors.New("execution: a relayed sampling request needs a positive MaxTokens")
	}
	for i, m := range s.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("execution: relayed sampling message %d has role %q: want user or assistant", i, m.Role)
		}
	}
	return nil
}

// relayedForm checks that schema, another party's elicitation form, fits
// the elicitation form subset [Context.Relay] documents, and compiles it;
// its error says why not.
func relayedForm(schema []byte) (*formSchema, error) {
	wrap := func(err error) error {
		return fmt.Errorf("execution: the relayed form is outside the elicitation subset: %w", err)
	}
	root, err := parseOrdered(schema)
	if err != nil {
		return nil, wrap(errors.New("not JSON"))
	}
	o, ok := root.(*object)
	if !ok || o.vals["type"] != "object" {
		return nil, wrap(errors.New(`the root must be an object schema ("type": "object")`))
	}
	var problems []string
	props, _ := o.vals["properties"].(*object)
	for _, k := range o.keys {
		switch k {
		case "type", "properties":
		case "$schema":
			if _, ok := o.vals[k].(string); !ok {
				problems = append(problems, `"$schema" must be a string`)
			}
		case "required":
			names, ok := o.vals[k].([]any)
			if !ok {
				problems = append(problems, `"required" must be an array of field names`)
				break
			}
			for _, n := range names {
				s, ok := n.(string)
				if !ok || props == nil || props.vals[s] == nil {
					problems = append(problems, fmt.Sprintf("required names %v, which is not a field", n))
				}
			}
		default:
			problems = append(problems, fmt.Sprintf("%q is not allowed at the root of a form", k))
		}
	}
	if _, present := o.vals["properties"]; present && props == nil {
		problems = append(problems, `"properties" must be an object`)
	}
	if props != nil {
		if len(props.keys) > maxRelayedFields {
			problems = append(problems, fmt.Sprintf("%d fields: at most %d", len(props.keys), maxRelayedFields))
		}
		for _, name := range props.keys {
			p, ok := props.vals[name].(*object)
			if !ok {
				problems = append(problems, name+": not a field schema")
				continue
			}
			problems = append(problems, relayedField(name, p)...)
		}
	}
	if len(problems) > 0 {
		return nil, wrap(errors.New(joinProblems(problems)))
	}
	v, err := schemacheck.Compile(schema)
	if err != nil {
		return nil, wrap(errors.New("the form does not compile"))
	}
	if props != nil {
		if err := relayedDefaults(props); err != nil {
			return nil, wrap(err)
		}
	}
	return &formSchema{schema: bytes.Clone(schema), validator: v}, nil
}

// relayedField checks one field of a relayed form.
func relayedField(name string, p *object) []string {
	var problems []string
	allowed := map[string]bool{"type": true, "title": true, "description": true, "default": true}
	add := func(keys ...string) {
		for _, k := range keys {
			allowed[k] = true
		}
	}
	strs := func(k string) bool {
		if _, ok := p.vals[k].(string); !ok && p.vals[k] != nil {
			problems = append(problems, fmt.Sprintf("%s: %q must be a string", name, k))
			return false
		}
		return true
	}
	nonNegative := func(k string) {
		if v, ok := p.vals[k]; ok {
			n, isNum := v.(json.Number)
			i, err := strconv.ParseInt(string(n), 10, 64)
			if !isNum || err != nil || i < 0 {
				problems = append(problems, fmt.Sprintf("%s: %q must be a non-negative integer", name, k))
			}
		}
	}
	number := func(k string) {
		if v, ok := p.vals[k]; ok {
			if _, isNum := v.(json.Number); !isNum {
				problems = append(problems, fmt.Sprintf("%s: %q must be a number", name, k))
			}
		}
	}
	strs("title")
	strs("description")
	switch p.vals["type"] {
	case "string":
		add("minLength", "maxLength", "format", "enum", "enumNames", "oneOf")
		nonNegative("minLength")
		nonNegative("maxLength")
		if f, ok := p.vals["format"]; ok {
			if s, _ := f.(string); !slices.Contains(formFormats, s) {
				problems = append(problems, fmt.Sprintf("%s: format %v is not allowed in a form (email, uri, date, date-time)", name, f))
			}
		}
		enum, hasEnum := p.vals["enum"]
		_, hasOneOf := p.vals["oneOf"]
		switch {
		case hasEnum && hasOneOf:
			problems = append(problems, name+": a select has enum or oneOf, not both")
		case hasEnum:
			n := stringList(enum)
			if n <= 0 {
				problems = append(problems, name+`: "enum" must be a non-empty array of strings`)
			}
			if names, ok := p.vals["enumNames"]; ok && stringList(names) != n {
				problems = append(problems, name+`: "enumNames" must give one title per enum value`)
			}
		case hasOneOf:
			if !titledOptions(p.vals["oneOf"]) {
				problems = append(problems, name+`: "oneOf" must be a non-empty array of {"const", "title"} string options`)
			}
		}
		if _, ok := p.vals["enumNames"]; ok && !hasEnum {
			problems = append(problems, name+`: "enumNames" needs "enum"`)
		}
	case "number", "integer":
		add("minimum", "maximum")
		number("minimum")
		number("maximum")
	case "boolean":
	case "array":
		add("minItems", "maxItems", "items")
		nonNegative("minItems")
		nonNegative("maxItems")
		items, _ := p.vals["items"].(*object)
		switch {
		case items == nil:
			problems = append(problems, name+`: a multi-select needs "items"`)
		case len(items.keys) == 2 && items.vals["type"] == "string" && stringList(items.vals["enum"]) > 0:
		case len(items.keys) == 1 && titledOptions(items.vals["anyOf"]):
		default:
			problems = append(problems, name+`: a multi-select's "items" must be {"type": "string", "enum": [...]} or {"anyOf": [{"const", "title"}, ...]}`)
		}
	default:
		problems = append(problems, fmt.Sprintf("%s: %v is not a form field type (string, number, integer, boolean, array)", name, p.vals["type"]))
	}
	for _, k := range p.keys {
		if !allowed[k] {
			problems = append(problems, fmt.Sprintf("%s: %q is not allowed in a form field", name, k))
		}
	}
	return problems
}

// stringList returns the length of v when it is an array of strings, or -1.
func stringList(v any) int {
	a, ok := v.([]any)
	if !ok {
		return -1
	}
	for _, e := range a {
		if _, ok := e.(string); !ok {
			return -1
		}
	}
	return len(a)
}

// titledOptions reports whether v is a non-empty array of {"const": string,
// "title": string} options.
func titledOptions(v any) bool {
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return false
	}
	for _, e := range a {
		o, ok := e.(*object)
		if !ok || len(o.keys) != 2 {
			return false
		}
		_, c := o.vals["const"].(string)
		_, t := o.vals["title"].(string)
		if !c || !t {
			return false
		}
	}
	return true
}

// relayedDefaults refuses a default that is not a valid value of its
// field: a client would offer the user an answer the form then refuses.
func relayedDefaults(props *object) error {
	var problems []string
	for _, name := range props.keys {
		p := props.vals[name].(*object)
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
		if err != nil || v.Validate(inst) != nil {
			problems = append(problems, fmt.Sprintf("%s: the default %s is not a valid value of the field", name, db.String()))
		}
	}
	if len(problems) > 0 {
		return errors.New(joinProblems(problems))
	}
	return nil
}
