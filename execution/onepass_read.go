package execution

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	jsv "github.com/santhosh-tekuri/jsonschema/v6"
)

// pass is the state of one one-pass read: the reader, the JSON Pointer of
// the value being read (tokens, written out only for a violation) and the
// violations found so far.
type pass struct {
	r    *reader
	path []pathTok
	buf  [8]pathTok
	vs   []Violation
	// unworded: the validator refused a value without a violation
	// collectViolations words (validateDocument's last resort); broken: it
	// could not validate one.
	unworded, broken bool
}

// pathTok is a member name, or an array index when key is "" and idx >= 0.
type pathTok struct {
	key string
	idx int
}

// decode reads args into a new value of the input type, checking them
// against the schema on the way. Its outcome is the general path's
// (inputDecoder.decode with the validator), failure for failure: not JSON,
// then every violation, then the first decode failure.
func (o *onePass) decode(args []byte) (reflect.Value, *Failure) {
	st := passes.Get().(*passState)
	defer st.recycle()
	st.r = reader{data: args}
	st.r.stack = st.r.stackBuf[:0]
	st.p = pass{r: &st.r}
	p, r := &st.p, &st.r
	p.path = p.buf[:0]
	ptr := reflect.New(o.t)
	r.space()
	p.value(o.root, ptr.Elem())
	r.end()
	switch {
	case r.bad:
		return reflect.Value{}, notJSON()
	case p.broken:
		return reflect.Value{}, invalidInput([]Violation{{Path: "", Message: "arguments could not be validated"}}, false)
	case len(p.vs) > 0:
		return reflect.Value{}, reportViolations(p.vs)
	case p.unworded:
		return reflect.Value{}, reportViolations([]Violation{{Path: "", Message: "does not match the input schema"}})
	case r.failed != nil:
		return reflect.Value{}, invalidInput([]Violation{*r.failed}, false)
	case r.saved != nil:
		return reflect.Value{}, invalidInput([]Violation{*r.saved}, false)
	}
	return ptr.Elem(), nil
}

// pointer writes out the JSON Pointer of the value being read.
func (p *pass) pointer() string {
	var b strings.Builder
	for _, t := range p.path {
		b.WriteByte('/')
		if t.key == "" && t.idx >= 0 {
			b.WriteString(strconv.Itoa(t.idx))
		} else {
			b.WriteString(pointerEscape(t.key))
		}
	}
	return b.String()
}

func (p *pass) add(msg string) {
	p.vs = append(p.vs, Violation{Path: p.pointer(), Message: msg})
}

// addMember records a violation of the member name of the object being
// read (a missing or unknown field).
func (p *pass) addMember(name, msg string) {
	p.vs = append(p.vs, Violation{Path: p.pointer() + "/" + pointerEscape(name), Message: msg})
}

// forget drops the violations found in the value of member name of the
// object being read: the member is sent again, and its last value is the
// one validated (ADR 38).
func (p *pass) forget(name string) {
	at := p.pointer() + "/" + pointerEscape(name)
	kept := p.vs[:0]
	for _, v := range p.vs {
		if v.Path != at && !strings.HasPrefix(v.Path, at+"/") {
			kept = append(kept, v)
		}
	}
	p.vs = kept
}

// tokenType is the JSON type of the value starting with c (a number for
// anything else: reading it then finds the syntax error, if any).
func tokenType(c byte) jtype {
	switch c {
	case '{':
		return tObject
	case '[':
		return tArray
	case '"':
		return tString
	case 't', 'f':
		return tBoolean
	case 'n':
		return tNull
	}
	return tNumber
}

// gate is the type keyword: whether the value at the cursor is of a type
// n's schema admits (for integer, a number: its value is checked when
// read). It records the violation when not.
func (p *pass) gate(n *opNode) bool {
	t := tokenType(p.r.peek())
	if n.c.types&t != 0 || t == tNumber && n.c.types&tInteger != 0 {
		return true
	}
	p.add(n.c.typeMsg + t.String())
	return false
}

// value checks and decodes the value at the cursor into v.
func (p *pass) value(n *opNode, v reflect.Value) {
	switch n.kind {
	case opStruct:
		p.structValue(n, v)
	case opSlice:
		p.sliceValue(n, v)
	case opPointer:
		p.pointerValue(n, v)
	case opString:
		p.stringValue(n, v)
	case opInt, opUint, opFloat:
		p.numberValue(n, v)
	case opBool:
		p.boolValue(n, v)
	default:
		p.opaqueValue(n, v)
	}
}

// other reads a value the node does not decode itself (null, or one of a
// type its schema refuses, already reported by gate), as its decoder does.
func (p *pass) other(n *opNode, v reflect.Value, admitted bool) {
	if admitted && p.r.peek() == 'n' {
		p.scalar(&n.c, tNull, false, "")
	}
	p.r.mismatch(v)
}

// opaqueValue reads the value with its type's decoder and validates its
// document with its subschema.
func (p *pass) opaqueValue(n *opNode, v reflect.Value) {
	doc := n.dec.decode(p.r, v)
	if p.r.bad || n.sch == nil {
		return
	}
	p.validate(n.sch, doc)
}

// validate validates doc, the document of the value being read, with s,
// and records its violations under the value's pointer.
func (p *pass) validate(s *jsv.Schema, doc any) {
	err := s.Validate(doc)
	if err == nil {
		return
	}
	var ve *jsv.ValidationError
	if !errors.As(err, &ve) {
		p.broken = true
		return
	}
	before := len(p.vs)
	collectViolations(ve, p.pointer(), &p.vs)
	if len(p.vs) == before {
		p.unworded = true
	}
}

func (p *pass) structValue(n *opNode, v reflect.Value) {
	r := p.r
	if ok := p.gate(n); !ok || r.peek() != '{' {
		p.other(n, v, ok)
		return
	}
	if !r.enter() {
		return
	}
	d := n.sd
	var seen uint64 // fields read so far, for the first 64
	var seenMore map[int]bool
	if !r.empty('}') {
		for {
			kb, ok := r.key()
			if !ok {
				return
			}
			i, known := d.byName[string(kb)]
			if !known {
				k := string(kb)
				r.saveUnknown(k)
				r.generic(false)
				if r.bad {
					return
				}
				p.addMember(k, msgUnknown)
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
				if repeated {
					p.forget(f.name)
				}
				p.path = append(p.path, pathTok{key: f.name, idx: -1})
				if settable {
					if repeated {
						fv.SetZero() // the last one wins, as in the document
					}
					r.stack = append(r.stack, f.dotted)
					p.value(n.fields[i], fv)
					r.stack = r.stack[:len(r.stack)-1]
				} else {
					r.saveCannot()
					doc, _ := r.generic(false)
					if !r.bad && n.fields[i].sch != nil {
						p.validate(n.fields[i].sch, doc)
					}
				}
				p.path = p.path[:len(p.path)-1]
				if r.bad {
					return
				}
			}
			if !r.next('}') {
				break
			}
		}
	}
	if r.bad {
		return
	}
	for _, i := range n.required {
		if i < 64 && seen&(1<<i) == 0 || i >= 64 && !seenMore[i] {
			p.addMember(d.fields[i].name, "required field is missing")
		}
	}
}

func (p *pass) sliceValue(n *opNode, v reflect.Value) {
	r := p.r
	if ok := p.gate(n); !ok || r.peek() != '[' {
		p.other(n, v, ok)
		return
	}
	if !r.enter() {
		return
	}
	i := 0
	if !r.empty(']') {
		for {
			if i >= v.Cap() {
				v.Grow(max(1, 4-v.Cap())) // room for 4 at first, as encoding/json makes
			}
			if i >= v.Len() {
				v.SetLen(i + 1)
			}
			p.path = append(p.path, pathTok{idx: i})
			p.value(n.elem, v.Index(i))
			p.path = p.path[:len(p.path)-1]
			if r.bad {
				return
			}
			i++
			if !r.next(']') {
				break
			}
		}
	}
	if r.bad {
		return
	}
	if i < v.Len() {
		v.SetLen(i)
	}
	if i == 0 {
		v.Set(reflect.MakeSlice(n.sl.t, 0, 0))
	}
	if n.c.minItems >= 0 && i < n.c.minItems {
		p.add(n.c.minItemsMsg)
	}
	if n.c.maxItems >= 0 && i > n.c.maxItems {
		p.add(n.c.maxItemsMsg)
	}
}

func (p *pass) pointerValue(n *opNode, v reflect.Value) {
	r := p.r
	if r.peek() == 'n' {
		if p.gate(n) {
			p.scalar(&n.c, tNull, false, "")
		}
		r.null()
		if !r.bad {
			v.SetZero()
		}
		return
	}
	if v.IsNil() {
		v.Set(reflect.New(n.pd.elem))
	}
	p.value(n.elem, v.Elem())
}

func (p *pass) stringValue(n *opNode, v reflect.Value) {
	r := p.r
	if ok := p.gate(n); !ok || r.peek() != '"' {
		p.other(n, v, ok)
		return
	}
	b, ok := r.str()
	if !ok {
		return
	}
	s := string(b)
	if p.scalar(&n.c, tString, false, s) {
		c := &n.c
		if c.minLen >= 0 || c.maxLen >= 0 {
			l := utf8.RuneCountInString(s)
			if c.minLen >= 0 && l < c.minLen {
				p.add(c.minLenMsg)
			}
			if c.maxLen >= 0 && l > c.maxLen {
				p.add(c.maxLenMsg)
			}
		}
		if c.pattern != nil && !c.pattern.MatchString(s) {
			p.add(c.patternMsg)
		}
	}
	v.SetString(s)
}

func (p *pass) boolValue(n *opNode, v reflect.Value) {
	r := p.r
	c := r.peek()
	if ok := p.gate(n); !ok || c != 't' && c != 'f' {
		p.other(n, v, ok)
		return
	}
	word := "false"
	if c == 't' {
		word = "true"
	}
	r.literal(word, nil)
	if r.bad {
		return
	}
	p.scalar(&n.c, tBoolean, c == 't', "")
	v.SetBool(c == 't')
}

// scalar checks the enum and format keywords of a value that is null, a
// boolean (b) or a string (s), of type t, and reports whether the validator
// would go on to the keywords of its type: it stops at the first of these
// that fails.
func (p *pass) scalar(c *checks, t jtype, b bool, s string) bool {
	if c.hasEnum {
		found := false
		for _, e := range c.enum {
			switch e := e.(type) {
			case nil:
				found = t == tNull
			case bool:
				found = t == tBoolean && e == b
			case string:
				found = t == tString && e == s
			}
			if found {
				break
			}
		}
		if !found {
			p.add(c.enumMsg)
			return false
		}
	}
	if c.format != nil {
		var doc any
		switch t {
		case tBoolean:
			doc = b
		case tString:
			doc = s
		}
		if err := c.format.Validate(doc); err != nil {
			p.add(c.formatMsg)
			return false
		}
	}
	return true
}

// numberValue reads a number into an integer or floating-point field.
func (p *pass) numberValue(n *opNode, v reflect.Value) {
	r := p.r
	if ok := p.gate(n); !ok || !isNumberStart(r.peek()) {
		p.other(n, v, ok)
		return
	}
	b, ok := r.number()
	if !ok {
		return
	}
	small, neg, isSmall := smallInt(b)
	p.numberChecks(&n.c, b, small, isSmall)
	switch n.kind {
	case opInt:
		if !isSmall {
			intDecoder{}.set(r, v, string(b))
		} else if v.OverflowInt(small) {
			r.saveType()
		} else {
			v.SetInt(small)
		}
	case opUint:
		switch {
		case !isSmall:
			uintDecoder{}.set(r, v, string(b))
		case neg || v.OverflowUint(uint64(small)):
			r.saveType() // strconv.ParseUint refuses a sign, even on -0
		default:
			v.SetUint(uint64(small))
		}
	default:
		floatDecoder{bits: n.bits}.set(r, v, string(b))
	}
}

// smallInt reads a number written as an integer of at most 18 digits,
// which an int64 holds whatever they are. neg: it has a minus sign.
func smallInt(b []byte) (n int64, neg, ok bool) {
	i := 0
	if len(b) > 0 && b[0] == '-' {
		neg, i = true, 1
	}
	if len(b)-i == 0 || len(b)-i > 18 {
		return 0, neg, false
	}
	for _, c := range b[i:] {
		if c < '0' || c > '9' {
			return 0, neg, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, neg, true
}

// numberChecks checks a number's keywords as the validator does: the
// integer type, the enum, the format, then every bound, on the number's
// exact value (big.Rat, as the validator reads it, unless it is a small
// integer compared to an integer bound).
func (p *pass) numberChecks(c *checks, b []byte, small int64, isSmall bool) {
	var exact *big.Rat
	rat := func() *big.Rat {
		if exact == nil {
			exact, _ = new(big.Rat).SetString(string(b))
		}
		return exact
	}
	if c.types&tNumber == 0 && !isSmall && !integral(b, rat) {
		p.add(c.typeMsg + "number")
		return
	}
	if c.hasEnum {
		found := false
		for _, e := range c.enum {
			if e, num := e.(*big.Rat); num && rat() != nil && rat().Cmp(e) == 0 {
				found = true
				break
			}
		}
		if !found {
			p.add(c.enumMsg)
			return
		}
	}
	if c.format != nil {
		if err := c.format.Validate(json.Number(b)); err != nil {
			p.add(c.formatMsg)
			return
		}
	}
	for i := range c.nums {
		nc := &c.nums[i]
		if nc.kind == '%' {
			if !new(big.Rat).Quo(rat(), nc.want).IsInt() {
				p.add(nc.msg)
			}
			continue
		}
		var cmp int
		if isSmall && nc.intOK {
			cmp = compareInt(small, nc.i)
		} else {
			cmp = rat().Cmp(nc.want)
		}
		if nc.kind == '>' && cmp < 0 || nc.kind == '<' && cmp > 0 || nc.kind == ')' && cmp <= 0 || nc.kind == '(' && cmp >= 0 {
			p.add(nc.msg)
		}
	}
}

// integral is the validator's integer test: the number's exact value is a
// whole number (1.0 and 1e2 are integers).
func integral(b []byte, rat func() *big.Rat) bool {
	for _, c := range b {
		if c == '.' || c == 'e' || c == 'E' {
			r := rat()
			return r != nil && r.IsInt()
		}
	}
	return true
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// set decodes the text of a number into an integer field, as decode does.
func (intDecoder) set(r *reader, v reflect.Value, s string) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v.OverflowInt(n) {
		r.saveType()
		return
	}
	v.SetInt(n)
}

// set decodes the text of a number into an unsigned field, as decode does.
func (uintDecoder) set(r *reader, v reflect.Value, s string) {
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v.OverflowUint(n) {
		r.saveType()
		return
	}
	v.SetUint(n)
}

// set decodes the text of a number into a floating-point field, as decode
// does.
func (d floatDecoder) set(r *reader, v reflect.Value, s string) {
	n, err := strconv.ParseFloat(s, d.bits)
	if err != nil || v.OverflowFloat(n) {
		r.saveType()
		return
	}
	v.SetFloat(n)
}
