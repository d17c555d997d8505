package projection

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// The canonical encoder writes a Go value's canonical JSON (compact, object
// keys sorted at every level, strings as encoding/json writes them without
// HTML escaping, numbers as json.Marshal writes them) straight from the
// value, in one pass: struct fields in the order of their JSON names, map
// keys sorted, each string escaped once. What it writes is exactly what
// json.Marshal followed by canonicalJSON writes (the path it replaced,
// kept in the tests as the oracle). Values it does not encode itself are
// encoded as that path encodes them, in place, and only them: a type with
// its own MarshalJSON or MarshalText (json.RawMessage among them),
// json.Number, a struct with embedded fields or ",string" or ",omitzero"
// options or fields that share a name. And a value it cannot judge at all
// (an unsupported kind, a pointer chain without end) makes the whole
// value take that path (errOldPath).

// errOldPath asks the caller to encode the whole value as json.Marshal
// and canonicalJSON do.
var errOldPath = errors.New("projection: encode through json.Marshal")

// maxPointers bounds the pointers followed without an object or array
// between them (only a recursive pointer type has more); past it the
// value takes the old path, which reports a cycle as encoding/json does.
const maxPointers = 64

// encodeFunc appends v's canonical encoding to e.out; depth is the
// number of objects and arrays v sits in.
type encodeFunc func(e *encoder, v reflect.Value, depth int) error

type encoder struct {
	out      []byte
	pointers int
}

// appendCanonical appends value's canonical encoding to dst, as
// json.Marshal, stringKeys and canonicalJSON together would: the same
// bytes, or an error where they fail.
func appendCanonical(dst []byte, value any) ([]byte, error) {
	e := encoder{out: dst}
	v := reflect.ValueOf(value)
	if !v.IsValid() {
		return append(dst, "null"...), nil
	}
	err := encoderOf(v.Type())(&e, v, 0)
	if errors.Is(err, errOldPath) {
		return oldPath(dst, value, 0)
	}
	if err != nil {
		return nil, err
	}
	return e.out, nil
}

// oldPath appends value's canonical encoding the way the projection
// wrote it before the canonical encoder: json.Marshal, the map keys
// checked, canonicalJSON from depth.
func oldPath(dst []byte, value any, depth int) ([]byte, error) {
	raw, err := json.Marshal(value)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrProjection, err)
	}
	if err := stringKeys(reflect.ValueOf(value)); err != nil {
		return nil, err
	}
	c := canon{src: raw, out: dst}
	if err := c.value(depth); err != nil {
		return nil, err
	}
	return c.out, nil
}

// encoders caches each type's encodeFunc, as encoding/json caches its
// encoders.
var encoders sync.Map // reflect.Type -> encodeFunc

func encoderOf(t reflect.Type) encodeFunc {
	if f, ok := encoders.Load(t); ok {
		return f.(encodeFunc)
	}
	// A recursive type reaches itself while its encoder is built: it
	// finds this indirection, which waits for the built one.
	var (
		wg sync.WaitGroup
		f  encodeFunc
	)
	wg.Add(1)
	fi, loaded := encoders.LoadOrStore(t, encodeFunc(func(e *encoder, v reflect.Value, depth int) error {
		wg.Wait()
		return f(e, v, depth)
	}))
	if loaded {
		return fi.(encodeFunc)
	}
	f = newEncoder(t)
	wg.Done()
	encoders.Store(t, f)
	return f
}

var numberType = reflect.TypeFor[json.Number]()

func newEncoder(t reflect.Type) encodeFunc {
	if t == numberType || t.Implements(jsonMarshaler) || t.Implements(textMarshaler) {
		return marshalled
	}
	if reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return addressedMarshalled
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(e *encoder, v reflect.Value, _ int) error {
			e.out = strconv.AppendBool(e.out, v.Bool())
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(e *encoder, v reflect.Value, _ int) error {
			e.out = strconv.AppendInt(e.out, v.Int(), 10)
			return nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(e *encoder, v reflect.Value, _ int) error {
			e.out = strconv.AppendUint(e.out, v.Uint(), 10)
			return nil
		}
	case reflect.Float32:
		return floatEncoder(32)
	case reflect.Float64:
		return floatEncoder(64)
	case reflect.String:
		return func(e *encoder, v reflect.Value, _ int) error {
			e.out = appendString(e.out, v.String())
			return nil
		}
	case reflect.Interface:
		return encodeInterface
	case reflect.Pointer:
		return pointerEncoder(t)
	case reflect.Map:
		return mapEncoder(t)
	case reflect.Slice:
		return sliceEncoder(t)
	case reflect.Array:
		return arrayEncoder(t)
	case reflect.Struct:
		return structEncoder(t)
	}
	return oldPathOnly // chan, func, complex: encoding/json refuses them
}

func oldPathOnly(*encoder, reflect.Value, int) error { return errOldPath }

// marshalled encodes a value that encodes itself (or json.Number) as the
// old path does.
func marshalled(e *encoder, v reflect.Value, depth int) error {
	out, err := oldPath(e.out, v.Interface(), depth)
	if err != nil {
		return err
	}
	e.out = out
	return nil
}

// addressedMarshalled encodes a value whose pointer encodes itself: by
// that method when v is addressable, as encoding/json calls it, and as
// plain data otherwise.
func addressedMarshalled(e *encoder, v reflect.Value, depth int) error {
	if v.CanAddr() {
		return marshalled(e, v.Addr(), depth)
	}
	return marshalled(e, v, depth)
}

func floatEncoder(bits int) encodeFunc {
	return func(e *encoder, v reflect.Value, _ int) error {
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%w: json: unsupported value: %s", ErrProjection, strconv.FormatFloat(f, 'g', -1, bits))
		}
		// As encoding/json's floatEncoder writes it (ES6's format).
		abs := math.Abs(f)
		format := byte('f')
		if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
			format = 'e'
		}
		b := strconv.AppendFloat(e.out, f, format, -1, bits)
		if format == 'e' {
			// e-09 is e-9
			if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
				b[n-2] = b[n-1]
				b = b[:n-1]
			}
		}
		e.out = b
		return nil
	}
}

func encodeInterface(e *encoder, v reflect.Value, depth int) error {
	if v.IsNil() {
		e.out = append(e.out, "null"...)
		return nil
	}
	el := v.Elem()
	return encoderOf(el.Type())(e, el, depth)
}

func pointerEncoder(t reflect.Type) encodeFunc {
	elem := t.Elem()
	return func(e *encoder, v reflect.Value, depth int) error {
		if v.IsNil() {
			e.out = append(e.out, "null"...)
			return nil
		}
		if e.pointers++; e.pointers > maxPointers {
			return errOldPath
		}
		err := encoderOf(elem)(e, v.Elem(), depth)
		e.pointers--
		return err
	}
}

// open enters one more level of nesting (an object or an array), or
// fails past MaxDepth; it returns the pointers followed so far, which
// count afresh inside the level, for the caller to restore on leaving it.
func (e *encoder) open(depth int) (int, error) {
	if depth+1 > MaxDepth {
		return 0, errTooDeep
	}
	p := e.pointers
	e.pointers = 0
	return p, nil
}

func mapEncoder(t reflect.Type) encodeFunc {
	if t.Key().Kind() != reflect.String {
		// Refused whatever it holds, nil and empty too, as stringKeys
		// refuses it.
		err := fmt.Errorf("%w: a map with %s keys (object keys must be strings)", ErrProjection, t.Key().Kind())
		return func(*encoder, reflect.Value, int) error { return err }
	}
	elem := t.Elem()
	return func(e *encoder, v reflect.Value, depth int) error {
		if v.IsNil() {
			e.out = append(e.out, "null"...)
			return nil
		}
		p, err := e.open(depth)
		if err != nil {
			return err
		}
		entries := make([]mapEntry, 0, v.Len())
		for it := v.MapRange(); it.Next(); {
			k := it.Key().String()
			if !utf8.ValidString(k) {
				// Keys that decode alike: the old path's rule for them.
				return errOldPath
			}
			entries = append(entries, mapEntry{key: k, value: it.Value()})
		}
		slices.SortFunc(entries, func(a, b mapEntry) int { return strings.Compare(a.key, b.key) })
		enc := encoderOf(elem)
		e.out = append(e.out, '{')
		for i, en := range entries {
			if i > 0 {
				e.out = append(e.out, ',')
			}
			e.out = appendString(e.out, en.key)
			e.out = append(e.out, ':')
			if err := enc(e, en.value, depth+1); err != nil {
				return err
			}
		}
		e.out = append(e.out, '}')
		e.pointers = p
		return nil
	}
}

type mapEntry struct {
	key   string
	value reflect.Value
}

func sliceEncoder(t reflect.Type) encodeFunc {
	if t.Elem().Kind() == reflect.Uint8 {
		pe := reflect.PointerTo(t.Elem())
		if pe.Implements(jsonMarshaler) || pe.Implements(textMarshaler) {
			return marshalled
		}
		return func(e *encoder, v reflect.Value, _ int) error {
			if v.IsNil() {
				e.out = append(e.out, "null"...)
				return nil
			}
			e.out = append(e.out, '"')
			e.out = base64.StdEncoding.AppendEncode(e.out, v.Bytes())
			e.out = append(e.out, '"')
			return nil
		}
	}
	arr := arrayEncoder(t)
	return func(e *encoder, v reflect.Value, depth int) error {
		if v.IsNil() {
			e.out = append(e.out, "null"...)
			return nil
		}
		return arr(e, v, depth)
	}
}

func arrayEncoder(t reflect.Type) encodeFunc {
	elem := t.Elem()
	return func(e *encoder, v reflect.Value, depth int) error {
		p, err := e.open(depth)
		if err != nil {
			return err
		}
		enc := encoderOf(elem)
		e.out = append(e.out, '[')
		for i := range v.Len() {
			if i > 0 {
				e.out = append(e.out, ',')
			}
			if err := enc(e, v.Index(i), depth+1); err != nil {
				return err
			}
		}
		e.out = append(e.out, ']')
		e.pointers = p
		return nil
	}
}

// structField is one field a struct's encoding writes: its name, and
// the name written as a key ("name":).
type structField struct {
	index     int
	name, key string
	omitEmpty bool
	typ       reflect.Type
}

// plainFields returns the fields encoding/json writes of a struct of
// type t, sorted by name, or false when t's encoding follows rules of
// encoding/json's own the canonical encoder leaves to it: embedded fields
// (promotion), the ",string" and ",omitzero" options, fields sharing a
// name.
func plainFields(t reflect.Type) ([]structField, bool) {
	var fields []structField
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		tag := sf.Tag.Get("json")
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if !validTag(name) {
			name = sf.Name
		}
		omitEmpty := false
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty":
				omitEmpty = true
			case "string", "omitzero":
				return nil, false
			}
		}
		fields = append(fields, structField{index: i, name: name, omitEmpty: omitEmpty, typ: sf.Type})
	}
	slices.SortFunc(fields, func(a, b structField) int { return strings.Compare(a.name, b.name) })
	for i := range fields {
		if i > 0 && fields[i].name == fields[i-1].name {
			return nil, false
		}
		fields[i].key = string(append(appendString(nil, fields[i].name), ':'))
	}
	return fields, true
}

func structEncoder(t reflect.Type) encodeFunc {
	fields, ok := plainFields(t)
	if !ok {
		return marshalled
	}
	return func(e *encoder, v reflect.Value, depth int) error {
		p, err := e.open(depth)
		if err != nil {
			return err
		}
		e.out = append(e.out, '{')
		first := true
		for _, f := range fields {
			fv := v.Field(f.index)
			if f.omitEmpty && emptyValue(fv) {
				continue
			}
			if !first {
				e.out = append(e.out, ',')
			}
			first = false
			e.out = append(e.out, f.key...)
			if err := encoderOf(f.typ)(e, fv, depth+1); err != nil {
				return err
			}
		}
		e.out = append(e.out, '}')
		e.pointers = p
		return nil
	}
}

// emptyValue is encoding/json's isEmptyValue, which omitempty omits.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// validTag is encoding/json's isValidTag: a tag name it uses as the key.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// appendString appends s as a JSON string the way decoding json.Marshal's
// encoding of s and encoding it again without HTML escaping writes it:
// encoding/json's escapes for '"', '\\' and control characters, U+2028
// and U+2029 escaped, and each byte that is not UTF-8 as U+FFFD, written
// as the character (the decoded string holds it as one).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i++
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"
