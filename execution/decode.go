package execution

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// An inputDecoder reads a capability's arguments into its input struct and,
// in the same pass, into the document its input schema is validated against
// (ADR 38). It is compiled once per input type, with every reflect.Type
// question answered at compile time; what it does per call is encoding/json's
// decoding into that type, word for word in its outcome, except in two
// things, both of which make the handler get exactly what was validated:
//
//   - a key repeated in an object replaces the field's value, as it does in
//     the validated document, where encoding/json merges a repeated object
//     into the first;
//   - keys match field names exactly, never by case folding (the closed
//     schemas refuse other spellings before the decoder matters; this holds
//     for structs under a type with its own JSONSchema method too).
//
// An inputDecoder is immutable and safe for concurrent use.
type inputDecoder struct {
	t    reflect.Type
	root valueDecoder
	// validateFirst: the type holds values decoded by methods of the
	// application's own types (json.Unmarshaler, encoding.TextUnmarshaler,
	// other than time.Time and json.RawMessage). Their methods run only on
	// arguments that passed validation, so such arguments are parsed for
	// validation first and decoded in a second pass over them.
	validateFirst bool
}

// decoders caches input decoders by input type.
var decoders sync.Map // reflect.Type -> *inputDecoder

// newInputDecoder returns the decoder of input type t. It fails for the
// struct types, under a type with its own JSONSchema method, that
// encoding/json would decode by rules agnara does not follow (fields with
// the same JSON name, the ",string" option): the same structs without a
// JSONSchema method are refused by the schema derivation.
func newInputDecoder(t reflect.Type) (*inputDecoder, error) {
	if d, ok := decoders.Load(t); ok {
		return d.(*inputDecoder), nil
	}
	b := &decoderBuilder{memo: map[reflect.Type]valueDecoder{}}
	d := &inputDecoder{t: t, root: b.pointee(reflect.PointerTo(t))}
	if len(b.problems) > 0 {
		return nil, fmt.Errorf("%s cannot be decoded the way encoding/json decodes it: %s", typeLabel(t), strings.Join(b.problems, "; "))
	}
	d.validateFirst = b.userMethods
	shared, _ := decoders.LoadOrStore(t, d)
	return shared.(*inputDecoder), nil
}

// decode validates args against the input schema v and decodes them into a
// new value of the input type, in one pass over them (two, the first only
// parsing, when the type validates first). The failure is InvalidInput:
// arguments that are not one JSON value, every violation of the schema, or
// else the first reason the arguments do not decode, as encoding/json gives
// it.
func (d *inputDecoder) decode(args []byte, v *jsonschema.Schema) (reflect.Value, *Failure) {
	if d.validateFirst {
		if f := validateArguments(v, args); f != nil {
			return reflect.Value{}, f
		}
	}
	doc, val, failure, ok := d.pass(args)
	if !ok {
		return reflect.Value{}, notJSON()
	}
	if !d.validateFirst {
		if f := validateDocument(v, doc); f != nil {
			return reflect.Value{}, f
		}
	}
	if failure != nil {
		return reflect.Value{}, invalidInput([]Violation{*failure}, false)
	}
	return val, nil
}

// pass reads args once. ok is false when they are not one JSON value. doc is
// the document to validate; val is the decoded input, unless failure says
// why the arguments do not decode into it.
func (d *inputDecoder) pass(args []byte) (doc any, val reflect.Value, failure *Violation, ok bool) {
	r := newReader(args)
	ptr := reflect.New(d.t)
	r.space()
	doc = d.root.decode(r, ptr.Elem())
	r.end()
	if r.bad {
		return nil, reflect.Value{}, nil, false
	}
	if r.failed != nil {
		return doc, reflect.Value{}, r.failed, true
	}
	if r.saved != nil {
		return doc, reflect.Value{}, r.saved, true
	}
	return doc, ptr.Elem(), nil, true
}

// The messages of decode failures, which decodeViolation also words.
const (
	msgDoesNotFit  = "value does not fit this field"
	msgUnknown     = "unknown field"
	msgCannotParse = "arguments cannot be decoded"
)

// saveType records that the value at the cursor does not fit its field, as
// an *json.UnmarshalTypeError would say, unless a failure came first.
func (r *reader) saveType() {
	if r.saved == nil {
		r.saved = &Violation{Path: r.fieldPath(""), Message: msgDoesNotFit}
	}
}

// saveCannot records a failure encoding/json words in an error of its own
// (bad base64, an embedded pointer to an unexported struct).
func (r *reader) saveCannot() {
	if r.saved == nil {
		r.saved = &Violation{Path: "", Message: msgCannotParse}
	}
}

// saveUnknown records a key that names no field.
func (r *reader) saveUnknown(key string) {
	if r.saved == nil {
		v := decodeViolation(fmt.Errorf("json: unknown field %q", key))
		r.saved = &v
	}
}

// fail records the error of a decoding method (or of a json.Number that is
// not a number), which ends decoding in encoding/json: it is the failure
// answered, whatever was saved before.
func (r *reader) fail(err error) {
	if r.failed != nil {
		return
	}
	var v Violation
	// encoding/json places a type error returned as is (not wrapped) at
	// the field being decoded.
	if te, ok := err.(*json.UnmarshalTypeError); ok && len(r.stack) > 0 { //nolint:errorlint // encoding/json's own test
		v = Violation{Path: r.fieldPath(te.Field), Message: msgDoesNotFit}
	} else {
		v = decodeViolation(err)
	}
	r.failed = &v
}

// fieldPath is the path encoding/json's error context gives the field being
// decoded, extended by sub (an error's own Field): struct fields only,
// dotted, each dot a slash.
func (r *reader) fieldPath(sub string) string {
	if len(r.stack) == 0 {
		return ""
	}
	dotted := strings.Join(r.stack, ".")
	if sub != "" {
		dotted += "." + sub
	}
	return "/" + strings.ReplaceAll(dotted, ".", "/")
}

// mismatch reads a value of a kind v's type does not take: null leaves v
// as it is (nil, for the kinds that have one); anything else does not fit.
func (r *reader) mismatch(v reflect.Value) any {
	if r.peek() == 'n' {
		doc, _ := r.literal("null", nil)
		if !r.bad {
			nullInto(v)
		}
		return doc
	}
	doc, _ := r.generic(false)
	if !r.bad {
		r.saveType()
	}
	return doc
}

func nullInto(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer, reflect.Map, reflect.Slice:
		v.SetZero()
	}
}

// null reads a null literal.
func (r *reader) null() any {
	doc, _ := r.literal("null", nil)
	return doc
}

// A valueDecoder decodes the JSON value at the reader's cursor (after any
// whitespace) into v, a settable value of its type, and returns the value in
// the validator's document form.
type valueDecoder interface {
	decode(r *reader, v reflect.Value) any
}

var (
	numberType    = reflect.TypeFor[json.Number]()
	unmarshalType = reflect.TypeFor[json.Unmarshaler]()
	textType      = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decoderBuilder compiles decoders, following encoding/json's walk of a
// type (its indirect function): a named value's pointer methods count, a
// pointer is allocated before its target's methods are looked up.
type decoderBuilder struct {
	memo        map[reflect.Type]valueDecoder // composite types, for recursive ones
	problems    []string
	userMethods bool
}

// value is the decoder of an addressable value of type t: a field, an
// element, a map value.
func (b *decoderBuilder) value(t reflect.Type) valueDecoder {
	if t.Kind() != reflect.Pointer && t.Name() != "" {
		if d := b.methods(reflect.PointerTo(t)); d != nil {
			return d
		}
	}
	return b.base(t)
}

// pointee is the decoder of the value a pointer of type pt points to.
func (b *decoderBuilder) pointee(pt reflect.Type) valueDecoder {
	if d := b.methods(pt); d != nil {
		return d
	}
	return b.base(pt.Elem())
}

// methods returns the decoder of a value whose pointer, of type pt, decodes
// it by a method, or nil.
func (b *decoderBuilder) methods(pt reflect.Type) valueDecoder {
	switch {
	case pt.Implements(unmarshalType):
		if e := pt.Elem(); e != timeType && e != rawMessageType {
			b.userMethods = true
		}
		return unmarshalerDecoder{}
	case pt.Implements(textType):
		b.userMethods = true
		return textDecoder{}
	}
	return nil
}

func (b *decoderBuilder) base(t reflect.Type) valueDecoder {
	if d, ok := b.memo[t]; ok {
		return d
	}
	switch t.Kind() {
	case reflect.Pointer:
		d := &pointerDecoder{elem: t.Elem()}
		b.memo[t] = d
		d.dec = b.pointee(t)
		return d
	case reflect.Struct:
		d := &structDecoder{byName: map[string]int{}}
		b.memo[t] = d
		b.structFields(d, t)
		return d
	case reflect.Map:
		d := &mapDecoder{t: t, elem: t.Elem(), key: keyKindOf(t.Key())}
		b.memo[t] = d
		d.dec = b.value(t.Elem())
		if d.key == textKey || d.key == jsonTextKey {
			b.userMethods = true
		}
		return d
	case reflect.Slice:
		d := &sliceDecoder{t: t, bytes: t.Elem().Kind() == reflect.Uint8}
		b.memo[t] = d
		d.dec = b.value(t.Elem())
		return d
	case reflect.Array:
		d := &arrayDecoder{n: t.Len()}
		b.memo[t] = d
		d.dec = b.value(t.Elem())
		return d
	case reflect.Interface:
		if t.NumMethod() == 0 {
			return anyDecoder{}
		}
		return mismatchDecoder{}
	case reflect.String:
		return stringDecoder{number: t == numberType}
	case reflect.Bool:
		return boolDecoder{}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intDecoder{}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintDecoder{}
	case reflect.Float32, reflect.Float64:
		return floatDecoder{bits: t.Bits()}
	}
	return mismatchDecoder{} // complex numbers, channels, functions
}

func (b *decoderBuilder) structFields(d *structDecoder, t reflect.Type) {
	fields, problems := jsonFields(t, false)
	for _, p := range problems {
		b.problems = append(b.problems, "in "+typeLabel(t)+", "+p)
	}
	for _, f := range fields {
		fd := fieldDecoder{name: f.name, dotted: f.name}
		if i := strings.LastIndexByte(f.goPath, '.'); i >= 0 {
			// encoding/json names the embedded structs a promoted field
			// is reached through by their Go names.
			fd.dotted = f.goPath[:i+1] + f.name
		}
		at := t
		for _, i := range f.index[:len(f.index)-1] {
			h := hop{field: i}
			if at.Kind() == reflect.Pointer {
				h.alloc, at = at.Elem(), at.Elem()
			}
			fd.hops = append(fd.hops, h)
			at = at.Field(i).Type
		}
		last := hop{field: f.index[len(f.index)-1]}
		if at.Kind() == reflect.Pointer {
			last.alloc = at.Elem()
		}
		fd.hops = append(fd.hops, last)
		fd.dec = b.value(f.typ)
		d.byName[f.name] = len(d.fields)
		d.fields = append(d.fields, fd)
	}
}
