package execution

import (
	"encoding"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// The value decoders, one per kind of Go value; decoderBuilder picks them.

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
