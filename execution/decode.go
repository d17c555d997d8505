package execution

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// An inputDecoder reads a capability's arguments into its input struct and,
// in the same pass, into the document its input schema is validated against
// (ADR 35). It is compiled once per input type, with every reflect.Type
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

// structDecoder decodes an object into a struct.
type structDecoder struct {
	fields []fieldDecoder
	byName map[string]int
}

type fieldDecoder struct {
	name   string // the JSON name, the key in the document
	dotted string // its entry in the decode error context
	hops   []hop
	dec    valueDecoder
}

// hop is one step of a field's index path: through an embedded struct
// pointer, allocated when nil (alloc is its element type), to a field.
type hop struct {
	alloc reflect.Type
	field int
}

// target returns the field of struct v, allocating embedded pointers on the
// way, or false when one is nil and cannot be set (an embedded pointer to
// an unexported struct type).
func (f *fieldDecoder) target(v reflect.Value) (reflect.Value, bool) {
	for _, h := range f.hops {
		if h.alloc != nil {
			if v.IsNil() {
				if !v.CanSet() {
					return reflect.Value{}, false
				}
				v.Set(reflect.New(h.alloc))
			}
			v = v.Elem()
		}
		v = v.Field(h.field)
	}
	return v, true
}

func (d *structDecoder) decode(r *reader, v reflect.Value) any {
	if r.peek() != '{' {
		return r.mismatch(v)
	}
	if !r.enter() {
		return nil
	}
	m := make(map[string]any)
	var seen uint64 // fields decoded so far, for the first 64
	var seenMore map[int]bool
	if !r.empty('}') {
		for {
			kb, ok := r.key()
			if !ok {
				return nil
			}
			i, known := d.byName[string(kb)]
			if !known {
				k := string(kb)
				r.saveUnknown(k)
				doc, _ := r.generic(false)
				if r.bad {
					return nil
				}
				m[k] = doc
			} else {
				f := &d.fields[i]
				fv, settable := f.target(v)
				repeated := false
				if i < 64 {
					repeated = seen&(1<<i) != 0
					seen |= 1 << i
				} else {
					if seenMore == nil {
						seenMore = map[int]bool{}
					}
					repeated = seenMore[i]
					seenMore[i] = true
				}
				var doc any
				if settable {
					if repeated {
						fv.SetZero() // the last one wins, as in the document
					}
					r.stack = append(r.stack, f.dotted)
					doc = f.dec.decode(r, fv)
					r.stack = r.stack[:len(r.stack)-1]
				} else {
					r.saveCannot()
					doc, _ = r.generic(false)
				}
				if r.bad {
					return nil
				}
				m[f.name] = doc
			}
			if !r.next('}') {
				break
			}
		}
	}
	if r.bad {
		return nil
	}
	return m
}

// pointerDecoder decodes null as nil and anything else into a value it
// allocates.
type pointerDecoder struct {
	elem reflect.Type
	dec  valueDecoder
}

func (d *pointerDecoder) decode(r *reader, v reflect.Value) any {
	if r.peek() == 'n' {
		doc := r.null()
		if !r.bad {
			v.SetZero()
		}
		return doc
	}
	if v.IsNil() {
		v.Set(reflect.New(d.elem))
	}
	return d.dec.decode(r, v.Elem())
}

// unmarshalerDecoder hands the value's bytes to its UnmarshalJSON.
type unmarshalerDecoder struct{}

func (unmarshalerDecoder) decode(r *reader, v reflect.Value) any {
	start := r.off
	doc, _ := r.generic(false)
	if r.bad || r.failed != nil {
		return doc
	}
	u, _ := reflect.TypeAssert[json.Unmarshaler](v.Addr())
	if err := u.UnmarshalJSON(r.data[start:r.off]); err != nil {
		r.fail(err)
	}
	return doc
}

// textDecoder hands a string's contents to its UnmarshalText.
type textDecoder struct{}

func (textDecoder) decode(r *reader, v reflect.Value) any {
	if r.peek() != '"' {
		return r.mismatch(v)
	}
	s, ok := r.str()
	if !ok {
		return nil
	}
	doc := any(string(s))
	if r.failed == nil {
		u, _ := reflect.TypeAssert[encoding.TextUnmarshaler](v.Addr())
		if err := u.UnmarshalText(s); err != nil {
			r.fail(err)
		}
	}
	return doc
}

// anyDecoder decodes into an empty interface what encoding/json would:
// map[string]any, []any, float64, string, bool or nil.
type anyDecoder struct{}

func (anyDecoder) decode(r *reader, v reflect.Value) any {
	if r.peek() == 'n' {
		doc := r.null()
		if !r.bad {
			v.SetZero()
		}
		return doc
	}
	doc, gov := r.generic(true)
	if !r.bad && gov != nil {
		v.Set(reflect.ValueOf(gov))
	}
	return doc
}

// mismatchDecoder is the decoder of types no JSON value but null decodes
// into: interfaces with methods, complex numbers, channels, functions.
type mismatchDecoder struct{}

func (mismatchDecoder) decode(r *reader, v reflect.Value) any { return r.mismatch(v) }

// keyKind is how a map's keys are decoded.
type keyKind uint8

const (
	stringKey   keyKind = iota
	textKey             // UnmarshalText of the key
	jsonTextKey         // UnmarshalJSON of the quoted key (it has both methods)
	intKey
	uintKey
	badKey // no key type encoding/json decodes
)

func keyKindOf(k reflect.Type) keyKind {
	pk := reflect.PointerTo(k)
	switch {
	case pk.Implements(textType) && pk.Implements(unmarshalType):
		return jsonTextKey
	case pk.Implements(textType):
		return textKey
	}
	switch k.Kind() {
	case reflect.String:
		return stringKey
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return intKey
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return uintKey
	}
	return badKey
}

// mapDecoder decodes an object into a map; a repeated key's last value
// wins, as in the document.
type mapDecoder struct {
	t    reflect.Type
	elem reflect.Type
	key  keyKind
	dec  valueDecoder
}

func (d *mapDecoder) decode(r *reader, v reflect.Value) any {
	if r.peek() != '{' || d.key == badKey {
		return r.mismatch(v)
	}
	if !r.enter() {
		return nil
	}
	if v.IsNil() {
		v.Set(reflect.MakeMap(d.t))
	}
	m := make(map[string]any)
	if r.empty('}') {
		return m
	}
	elem := reflect.New(d.elem).Elem()
	var kv reflect.Value
	if d.key == stringKey {
		kv = reflect.New(d.t.Key()).Elem()
	}
	for {
		if r.peek() != '"' {
			r.bad = true
			return nil
		}
		start := r.off
		kb, ok := r.str()
		if !ok {
			return nil
		}
		quoted := r.data[start:r.off]
		if !r.colon() {
			return nil
		}
		k := string(kb)
		elem.SetZero()
		doc := d.dec.decode(r, elem)
		if r.bad {
			return nil
		}
		m[k] = doc
		if key, ok := d.mapKey(r, kv, k, quoted); ok {
			v.SetMapIndex(key, elem)
		}
		if !r.next('}') {
			break
		}
	}
	if r.bad {
		return nil
	}
	return m
}

// mapKey converts a key as encoding/json does, or reports false.
func (d *mapDecoder) mapKey(r *reader, kv reflect.Value, k string, quoted []byte) (reflect.Value, bool) {
	kt := d.t.Key()
	switch d.key {
	case stringKey:
		kv.SetString(k)
		return kv, true
	case textKey, jsonTextKey:
		if r.failed != nil {
			return reflect.Value{}, false
		}
		p := reflect.New(kt)
		var err error
		if d.key == jsonTextKey {
			u, _ := reflect.TypeAssert[json.Unmarshaler](p)
			err = u.UnmarshalJSON(quoted)
		} else {
			u, _ := reflect.TypeAssert[encoding.TextUnmarshaler](p)
			err = u.UnmarshalText([]byte(k))
		}
		if err != nil {
			r.fail(err)
			return reflect.Value{}, false
		}
		return p.Elem(), true
	case intKey:
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil || kt.OverflowInt(n) {
			r.saveType()
			return reflect.Value{}, false
		}
		key := reflect.New(kt).Elem()
		key.SetInt(n)
		return key, true
	default: // uintKey
		n, err := strconv.ParseUint(k, 10, 64)
		if err != nil || kt.OverflowUint(n) {
			r.saveType()
			return reflect.Value{}, false
		}
		key := reflect.New(kt).Elem()
		key.SetUint(n)
		return key, true
	}
}

// sliceDecoder decodes an array into a slice, and a string into a byte
// slice (base64).
type sliceDecoder struct {
	t     reflect.Type
	bytes bool
	dec   valueDecoder
}

func (d *sliceDecoder) decode(r *reader, v reflect.Value) any {
	switch c := r.peek(); {
	case c == '"' && d.bytes:
		s, ok := r.str()
		if !ok {
			return nil
		}
		b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
		n, err := base64.StdEncoding.Decode(b, s)
		if err != nil {
			r.saveCannot()
		} else {
			v.SetBytes(b[:n])
		}
		return string(s)
	case c != '[':
		return r.mismatch(v)
	}
	if !r.enter() {
		return nil
	}
	docs := make([]any, 0)
	i := 0
	if !r.empty(']') {
		for {
			if i >= v.Cap() {
				v.Grow(1)
			}
			if i >= v.Len() {
				v.SetLen(i + 1)
			}
			doc := d.dec.decode(r, v.Index(i))
			if r.bad {
				return nil
			}
			docs = append(docs, doc)
			i++
			if !r.next(']') {
				break
			}
		}
	}
	if r.bad {
		return nil
	}
	if i < v.Len() {
		v.SetLen(i)
	}
	if i == 0 {
		v.Set(reflect.MakeSlice(d.t, 0, 0))
	}
	return docs
}

// arrayDecoder decodes an array into a Go array: elements beyond its length
// are dropped, missing ones are zero.
type arrayDecoder struct {
	n   int
	dec valueDecoder
}

func (d *arrayDecoder) decode(r *reader, v reflect.Value) any {
	if r.peek() != '[' {
		return r.mismatch(v)
	}
	if !r.enter() {
		return nil
	}
	docs := make([]any, 0)
	i := 0
	if !r.empty(']') {
		for {
			var doc any
			if i < d.n {
				doc = d.dec.decode(r, v.Index(i))
			} else {
				doc, _ = r.generic(false)
			}
			if r.bad {
				return nil
			}
			docs = append(docs, doc)
			i++
			if !r.next(']') {
				break
			}
		}
	}
	if r.bad {
		return nil
	}
	for ; i < d.n; i++ {
		v.Index(i).SetZero()
	}
	return docs
}

type stringDecoder struct{ number bool }

func (d stringDecoder) decode(r *reader, v reflect.Value) any {
	switch c := r.peek(); {
	case c == '"':
		b, ok := r.str()
		if !ok {
			return nil
		}
		s := string(b)
		if d.number && !validNumber(s) {
			r.fail(fmt.Errorf("json: invalid number literal, trying to unmarshal %q into Number", s))
			return s
		}
		v.SetString(s)
		return s
	case d.number && isNumberStart(c):
		b, ok := r.number()
		if !ok {
			return nil
		}
		s := string(b)
		v.SetString(s)
		return json.Number(s)
	}
	return r.mismatch(v)
}

type boolDecoder struct{}

func (boolDecoder) decode(r *reader, v reflect.Value) any {
	switch r.peek() {
	case 't':
		doc, _ := r.literal("true", true)
		if !r.bad {
			v.SetBool(true)
		}
		return doc
	case 'f':
		doc, _ := r.literal("false", false)
		if !r.bad {
			v.SetBool(false)
		}
		return doc
	}
	return r.mismatch(v)
}

func isNumberStart(c byte) bool { return c == '-' || c >= '0' && c <= '9' }

// numberDoc reads a number for a numeric field: its text, and its document
// form.
func (r *reader) numberDoc() (string, any, bool) {
	b, ok := r.number()
	if !ok {
		return "", nil, false
	}
	s := string(b)
	return s, json.Number(s), true
}

type intDecoder struct{}

func (intDecoder) decode(r *reader, v reflect.Value) any {
	if !isNumberStart(r.peek()) {
		return r.mismatch(v)
	}
	s, doc, ok := r.numberDoc()
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v.OverflowInt(n) {
		r.saveType()
		return doc
	}
	v.SetInt(n)
	return doc
}

type uintDecoder struct{}

func (uintDecoder) decode(r *reader, v reflect.Value) any {
	if !isNumberStart(r.peek()) {
		return r.mismatch(v)
	}
	s, doc, ok := r.numberDoc()
	if !ok {
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v.OverflowUint(n) {
		r.saveType()
		return doc
	}
	v.SetUint(n)
	return doc
}

type floatDecoder struct{ bits int }

func (d floatDecoder) decode(r *reader, v reflect.Value) any {
	if !isNumberStart(r.peek()) {
		return r.mismatch(v)
	}
	s, doc, ok := r.numberDoc()
	if !ok {
		return nil
	}
	n, err := strconv.ParseFloat(s, d.bits)
	if err != nil || v.OverflowFloat(n) {
		r.saveType()
		return doc
	}
	v.SetFloat(n)
	return doc
}

var (
	_ valueDecoder = (*structDecoder)(nil)
	_ valueDecoder = (*pointerDecoder)(nil)
	_ valueDecoder = (*mapDecoder)(nil)
	_ valueDecoder = (*sliceDecoder)(nil)
	_ valueDecoder = (*arrayDecoder)(nil)
	_ valueDecoder = unmarshalerDecoder{}
	_ valueDecoder = textDecoder{}
	_ valueDecoder = anyDecoder{}
	_ valueDecoder = mismatchDecoder{}
	_ valueDecoder = stringDecoder{}
	_ valueDecoder = boolDecoder{}
	_ valueDecoder = intDecoder{}
	_ valueDecoder = uintDecoder{}
	_ valueDecoder = floatDecoder{}
)
