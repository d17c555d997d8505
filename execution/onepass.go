package execution

import (
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"sync"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// A onePass reads the arguments of a capability whose input schema was
// derived from its Go input type, and checks them against that schema in
// the same pass as it decodes them (ADR 86): no document is built for the
// validator, and the validator does not walk one. It is compiled once per
// input type, from the input decoder (decode.go) and the compiled schema
// (the same *jsonschema.Schema the general path validates with), so that
// what it checks is what that schema says, keyword by keyword, with the
// validator's own values: its bounds, enum values, compiled patterns and
// format functions.
//
// A value whose schema says more than the one-pass checks model (a
// uniqueItems, an anyOf, a const, a map's additionalProperties...) is read
// by the ordinary decoder of its type, and that value's document alone is
// validated by the validator, with the subschema the validator compiled
// for it: its violations are the validator's, placed under the value's
// JSON Pointer. A plan whose input type has its own decoding methods (ADR
// 38: validated first, decoded in a second pass), or whose schema has
// references resolved at validation time, keeps the general path.
//
// A onePass is immutable and safe for concurrent use.
type onePass struct {
	t    reflect.Type
	root *opNode
}

// opKind is what an opNode decodes.
type opKind uint8

const (
	opOpaque  opKind = iota // the type's decoder, and the validator on its document
	opStruct                // a closed object into a struct
	opSlice                 // an array into a slice
	opPointer               // null, or a value into what a pointer points to
	opString
	opInt
	opUint
	opFloat
	opBool
)

// opNode checks and decodes one value.
type opNode struct {
	kind opKind
	c    checks
	sch  *jsv.Schema // the value's compiled schema (opaque: nil when it admits anything)
	dec  valueDecoder

	// opStruct: sd's fields, their nodes, and the indexes of the required ones.
	sd       *structDecoder
	fields   []*opNode
	required []int
	// opSlice, opPointer: the element's node.
	sl   *sliceDecoder
	pd   *pointerDecoder
	elem *opNode
	bits int // opFloat
}

// jtype is a set of JSON types, as the validator names them.
type jtype uint8

const (
	tNull jtype = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var jtypeNames = []string{"null", "boolean", "number", "integer", "string", "array", "object"}

func (t jtype) String() string {
	for i, n := range jtypeNames {
		if t == 1<<i {
			return n
		}
	}
	return ""
}

// checks are the keywords of one value's schema that the one pass checks,
// with the messages of their violations, worded once (collectViolations'
// words, from the validator's own values).
type checks struct {
	types   jtype
	typeMsg string // "want string or null, got " (the type found follows)

	enum    []any // nil, bool, string, or *big.Rat for numbers
	hasEnum bool
	enumMsg string

	format    *jsv.Format
	formatMsg string

	minLen, maxLen       int // -1 when absent
	minLenMsg, maxLenMsg string
	pattern              jsv.Regexp
	patternMsg           string

	nums []numCheck

	minItems, maxItems       int // -1 when absent
	minItemsMsg, maxItemsMsg string
}

// numCheck is one of minimum, maximum, exclusiveMinimum, exclusiveMaximum
// and multipleOf, in the validator's order.
type numCheck struct {
	kind  byte // '>' minimum, '<' maximum, ')' exclusive minimum, '(' exclusive maximum, '%' multipleOf
	want  *big.Rat
	i     int64 // want, when intOK
	intOK bool
	msg   string
}

// onePasses caches the one-pass readers by input type; a nil entry: the
// type takes the general path.
var onePasses sync.Map // reflect.Type -> *onePass

// onePassFor returns the one-pass reader of input type t, whose decoder is
// d and whose derived schema compiled to v, or nil when t keeps the
// general path.
func onePassFor(t reflect.Type, d *inputDecoder, v *jsv.Schema) *onePass {
	if o, ok := onePasses.Load(t); ok {
		return o.(*onePass)
	}
	var o *onePass
	if d != nil && v != nil && !d.validateFirst && !dynamic(v, map[*jsv.Schema]bool{}) {
		o = &onePass{t: t, root: buildNode(d.root, v)}
	}
	shared, _ := onePasses.LoadOrStore(t, o)
	return shared.(*onePass)
}

// dynamic reports whether s, or a schema under it, resolves a reference by
// the dynamic scope of the validation ($dynamicRef, $recursiveRef), which
// validating a subschema on its own would not reproduce.
func dynamic(s *jsv.Schema, seen map[*jsv.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	seen[s] = true
	if s.DynamicRef != nil || s.RecursiveRef != nil || s.DynamicAnchor != "" || s.RecursiveAnchor {
		return true
	}
	subs := []*jsv.Schema{s.Ref, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties,
		s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema}
	subs = append(subs, s.AllOf...)
	subs = append(subs, s.AnyOf...)
	subs = append(subs, s.OneOf...)
	subs = append(subs, s.PrefixItems...)
	for _, m := range []map[string]*jsv.Schema{s.Properties, s.DependentSchemas} {
		for _, c := range m {
			subs = append(subs, c)
		}
	}
	for _, c := range s.PatternProperties {
		subs = append(subs, c)
	}
	for _, dep := range s.Dependencies {
		if c, ok := dep.(*jsv.Schema); ok {
			subs = append(subs, c)
		}
	}
	for _, x := range []any{s.AdditionalProperties, s.Items, s.AdditionalItems} {
		switch x := x.(type) {
		case *jsv.Schema:
			subs = append(subs, x)
		case []*jsv.Schema:
			subs = append(subs, x...)
		}
	}
	for _, c := range subs {
		if dynamic(c, seen) {
			return true
		}
	}
	return false
}

// opaque is the node of a value read by its type's decoder and validated
// by s on its document.
func opaque(dec valueDecoder, s *jsv.Schema) *opNode {
	if s != nil && s.Bool != nil && *s.Bool {
		s = nil // admits anything
	}
	return &opNode{kind: opOpaque, dec: dec, sch: s}
}

// buildNode compiles the node of a value decoded by dec under schema s.
func buildNode(dec valueDecoder, s *jsv.Schema) *opNode {
	if s == nil || s.Bool != nil || !onlyModelled(s) {
		return opaque(dec, s)
	}
	c, ok := compileChecks(s)
	if !ok {
		return opaque(dec, s)
	}
	n := &opNode{c: c, sch: s, dec: dec}
	// The types each kind of node reads itself; null is read by all of
	// them as their decoder reads it.
	var takes jtype
	switch d := dec.(type) {
	case *structDecoder:
		n.kind, n.sd, takes = opStruct, d, tObject
		if !n.structFields(s) {
			return opaque(dec, s)
		}
	case *sliceDecoder:
		if d.bytes {
			return opaque(dec, s)
		}
		n.kind, n.sl, takes = opSlice, d, tArray
		n.elem = buildNode(d.dec, s.Items2020)
	case *pointerDecoder:
		elem := buildNode(d.dec, s)
		if elem.kind == opOpaque || elem.kind == opPointer {
			return opaque(dec, s)
		}
		n.kind, n.pd, n.elem, takes = opPointer, d, elem, elem.c.types&^tNull
	case stringDecoder:
		if d.number {
			return opaque(dec, s)
		}
		n.kind, takes = opString, tString
	case intDecoder:
		n.kind, takes = opInt, tNumber|tInteger
	case uintDecoder:
		n.kind, takes = opUint, tNumber|tInteger
	case floatDecoder:
		n.kind, n.bits, takes = opFloat, d.bits, tNumber|tInteger
	case boolDecoder:
		n.kind, takes = opBool, tBoolean
	default:
		return opaque(dec, s)
	}
	if c.types == 0 || c.types&^(takes|tNull) != 0 {
		return opaque(dec, s) // a type the node does not read
	}
	// Keywords of another type than the node's are what opaque nodes are for.
	if n.kind != opStruct && (len(s.Properties) > 0 || len(s.Required) > 0 || s.AdditionalProperties != nil) ||
		n.kind != opSlice && n.kind != opPointer && (s.Items2020 != nil || c.minItems >= 0 || c.maxItems >= 0) ||
		takes&tString == 0 && n.kind != opPointer && (c.minLen >= 0 || c.maxLen >= 0 || c.pattern != nil) ||
		takes&tNumber == 0 && n.kind != opPointer && len(c.nums) > 0 ||
		(n.kind == opStruct || n.kind == opSlice) && (c.hasEnum || c.format != nil) {
		return opaque(dec, s)
	}
	return n
}

// structFields pairs the struct's fields with the schema's properties: the
// one pass reads a struct whose schema is a closed object of exactly its
// fields.
func (n *opNode) structFields(s *jsv.Schema) bool {
	if closed, ok := s.AdditionalProperties.(bool); !ok || closed || len(s.Properties) != len(n.sd.fields) {
		return false
	}
	n.fields = make([]*opNode, len(n.sd.fields))
	for i, f := range n.sd.fields {
		ps, ok := s.Properties[f.name]
		if !ok {
			return false
		}
		n.fields[i] = buildNode(f.dec, ps)
	}
	for _, name := range s.Required {
		i, ok := n.sd.byName[name]
		if !ok {
			return false
		}
		n.required = append(n.required, i)
	}
	return true
}

// onlyModelled reports whether s says nothing but what an opNode checks
// (the annotations aside).
func onlyModelled(s *jsv.Schema) bool {
	return s.DraftVersion >= 2020 && s.ID == "" && s.Ref == nil && s.Anchor == "" &&
		s.RecursiveRef == nil && !s.RecursiveAnchor && s.DynamicRef == nil && s.DynamicAnchor == "" &&
		s.Const == nil && s.Not == nil && len(s.AllOf) == 0 && len(s.AnyOf) == 0 && len(s.OneOf) == 0 &&
		s.If == nil && s.Then == nil && s.Else == nil &&
		s.MaxProperties == nil && s.MinProperties == nil && s.PropertyNames == nil &&
		len(s.PatternProperties) == 0 && len(s.Dependencies) == 0 && len(s.DependentRequired) == 0 &&
		len(s.DependentSchemas) == 0 && s.UnevaluatedProperties == nil &&
		!s.UniqueItems && s.Contains == nil && s.MinContains == nil && s.MaxContains == nil &&
		s.Items == nil && s.AdditionalItems == nil && len(s.PrefixItems) == 0 && s.UnevaluatedItems == nil &&
		s.ContentEncoding == nil && s.ContentMediaType == nil && s.ContentSchema == nil &&
		len(s.Extensions) == 0 &&
		(s.AdditionalProperties == nil || s.AdditionalProperties == false)
}

// compileChecks words the checks of s's keywords as collectViolations
// words the validator's errors. ok is false for an enum of objects or
// arrays, which the one pass does not compare.
func compileChecks(s *jsv.Schema) (c checks, ok bool) {
	c.minLen, c.maxLen, c.minItems, c.maxItems = -1, -1, -1, -1
	if s.Types != nil {
		var want []string
		for _, name := range s.Types.ToStrings() {
			for i, n := range jtypeNames {
				if n == name {
					c.types |= 1 << i
				}
			}
			want = append(want, name)
		}
		c.typeMsg = "want " + strings.Join(want, " or ") + ", got "
	}
	if s.Enum != nil {
		c.hasEnum = true
		for _, v := range s.Enum.Values {
			switch v := v.(type) {
			case nil, bool, string:
				c.enum = append(c.enum, v)
			case json.Number:
				r, ok := new(big.Rat).SetString(string(v))
				if !ok {
					return c, false
				}
				c.enum = append(c.enum, r)
			default:
				return c, false
			}
		}
		c.enumMsg = "must be one of " + displayList(s.Enum.Values)
	}
	if s.Format != nil {
		c.format, c.formatMsg = s.Format, "is not a valid "+s.Format.Name
	}
	if s.MinLength != nil {
		c.minLen = *s.MinLength
		c.minLenMsg = fmt.Sprintf("must be at least %d characters long", c.minLen)
		if c.minLen == 1 {
			c.minLenMsg = "must not be empty"
		}
	}
	if s.MaxLength != nil {
		c.maxLen = *s.MaxLength
		c.maxLenMsg = fmt.Sprintf("must be at most %d characters long", c.maxLen)
	}
	if s.Pattern != nil {
		c.pattern, c.patternMsg = s.Pattern, "does not match the pattern "+s.Pattern.String()
	}
	for _, b := range []struct {
		kind byte
		want *big.Rat
		word string
	}{
		{'>', s.Minimum, "must be >= "}, {'<', s.Maximum, "must be <= "},
		{')', s.ExclusiveMinimum, "must be > "}, {'(', s.ExclusiveMaximum, "must be < "},
		{'%', s.MultipleOf, "must be a multiple of "},
	} {
		if b.want == nil {
			continue
		}
		nc := numCheck{kind: b.kind, want: b.want, msg: b.word + b.want.RatString()}
		if b.want.IsInt() && b.want.Num().IsInt64() && b.kind != '%' {
			nc.i, nc.intOK = b.want.Num().Int64(), true
		}
		c.nums = append(c.nums, nc)
	}
	if s.MinItems != nil {
		c.minItems = *s.MinItems
		c.minItemsMsg = fmt.Sprintf("must have at least %d items", c.minItems)
		if c.minItems == 1 {
			c.minItemsMsg = "must not be empty"
		}
	}
	if s.MaxItems != nil {
		c.maxItems = *s.MaxItems
		c.maxItemsMsg = fmt.Sprintf("must have at most %d items", c.maxItems)
	}
	return c, true
}

// path reports which path a plan's arguments take: "one-pass" or
// "general" (for tests, and the ADR's claims).
func (p *Plan) inputPath() string {
	if p.onepass != nil {
		return "one-pass"
	}
	return "general"
}
