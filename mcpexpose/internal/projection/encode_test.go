package projection

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// Types of every shape encoding/json treats in its own way, for the
// canonical encoder's differential test.

type encLeaf struct {
	Z    string  `json:"z"`
	A    []int   `json:"a"`
	Opt  *string `json:"opt,omitempty"`
	Skip string  `json:"-"`
	//lint:ignore SA5008 the key "-", as encoding/json reads this tag
	Dash   string            `json:"-,"`
	Bad    int               `json:"a§b"` // not a valid tag name: the field's name is the key
	NoName bool              `json:",omitempty"`
	hidden string            // unexported: never written
	Tags   map[string]string `json:"tags,omitempty"`
}

type encTree struct {
	Name     string          `json:"name"`
	Kids     []*encTree      `json:"kids"`
	Leaf     *encLeaf        `json:"leaf,omitempty"`
	Raw      json.RawMessage `json:"raw"`
	Num      json.Number     `json:"num,omitempty"`
	Any      any             `json:"any"`
	Bytes    []byte          `json:"bytes"`
	Fixed    [3]byte         `json:"fixed"`
	F32      float32         `json:"f32"`
	F64      float64         `json:"f64"`
	U64      uint64          `json:"u64"`
	I64      int64           `json:"i64"`
	When     time.Time       `json:"when"`
	Big      *big.Int        `json:"big"`
	Text     encText         `json:"text"`
	PtrText  encPtrText      `json:"ptrText"`
	Self     encSelf         `json:"self"`
	Embedded encEmbedding    `json:"embedded"`
	Quoted   encQuoted       `json:"quoted"`
	Zero     encOmitZero     `json:"zero"`
	Twins    encTwins        `json:"twins"`
	Keys     map[encKey]bool `json:"keys"`
}

// encText encodes itself as text (a value method).
type encText struct{ s string }

func (t encText) MarshalText() ([]byte, error) { return []byte("<" + t.s + ">"), nil }

// encPtrText encodes itself only through its pointer: when addressable.
type encPtrText struct{ n int }

func (t *encPtrText) MarshalJSON() ([]byte, error) {
	return []byte(`{"z":1,  "n":` + string(rune('0'+t.n%10)) + `,"a":"\u003c"}`), nil
}

// encSelf writes JSON with unsorted, repeated keys and HTML escapes.
type encSelf struct{}

func (encSelf) MarshalJSON() ([]byte, error) {
	return []byte(`{"b":[3,1],"a":{"y":"\u0026","x":null},"b":"last"}`), nil
}

type encBase struct {
	B string `json:"b"`
	A string `json:"a"`
}

type encEmbedding struct {
	encBase
	C string `json:"c"`
	A int    `json:"a"` // shadows encBase.A
}

type encQuoted struct {
	N int  `json:"n,string"`
	B bool `json:"b,string"`
}

type encOmitZero struct {
	T time.Time `json:"t,omitzero"`
	N int       `json:"n,omitzero"`
}

// encTwins has two fields named B: the tagged one wins.
type encTwins struct {
	A string `json:"B"`
	B string
	C string `json:"c"`
}

// encKey is a string key type with its own text encoding, which
// encoding/json ignores for a key of a string kind.
type encKey string

func (k encKey) MarshalText() ([]byte, error) { return []byte("key-" + string(k)), nil }

// encStrings are strings that take each of encoding/json's escapes.
var encStrings = []string{
	"", "plain", "<script>&</script>", "quote \" backslash \\ slash /",
	"\b\f\n\r\t\x00\x01\x1f\x7f", "é ü 日本 😀", "\u2028\u2029", "\ufffd",
	"\xff\xfe invalid", "a\xc3", "\xed\xa0\x80", strings.Repeat("x", 300),
}

// encNumbers are numbers at encoding/json's format boundaries.
var encNumbers = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 1e-7, 9.999999e-7, 1e20, 1e21, 1.5e300,
	math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125, float64(math.MaxInt64),
}

// genValue returns a random value of any shape a handler may return,
// depth levels deep at most.
func genValue(r *rand.Rand, depth int) any {
	pick := r.IntN(24)
	if depth <= 0 {
		pick %= 9
	}
	switch pick {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return encStrings[r.IntN(len(encStrings))]
	case 3:
		return encNumbers[r.IntN(len(encNumbers))]
	case 4:
		return r.Int64() - math.MaxInt64/2
	case 5:
		return uint64(math.MaxUint64) - r.Uint64N(3)
	case 6:
		return float32(encNumbers[r.IntN(len(encNumbers))])
	case 7:
		return json.Number([]string{"1", "-0", "1e400", "12345678901234567890123", "0.10"}[r.IntN(5)])
	case 8:
		return json.RawMessage([]string{`{"b":1, "a":[true,null]}`, `"\u003c\u2028"`, ` 1e2 `, `{"a":1,"a":2}`, `null`}[r.IntN(5)])
	case 9, 10:
		m := map[string]any{}
		for range r.IntN(5) {
			m[encStrings[r.IntN(len(encStrings)-3)]+string(rune('a'+r.IntN(26)))] = genValue(r, depth-1)
		}
		return m
	case 11:
		if r.IntN(3) == 0 {
			return map[string]int(nil)
		}
		return map[string]int{"z": 1, "a": 2, "m": 3}
	case 12, 13:
		s := make([]any, r.IntN(4))
		for i := range s {
			s[i] = genValue(r, depth-1)
		}
		return s
	case 14:
		return []string(nil)
	case 15:
		return []byte(encStrings[r.IntN(len(encStrings))])
	case 16:
		return genTree(r, depth-1)
	case 17:
		t := genTree(r, depth-1)
		return &t
	case 18:
		return []encTree{genTree(r, depth-1), genTree(r, depth-1)}
	case 19:
		return map[string]encPtrText{"b": {n: 1}, "a": {n: 2}}
	case 20:
		return []encPtrText{{n: 3}}
	case 21:
		return map[encKey]string{"b": "x", "a": "y"}
	case 22:
		return [2]any{genValue(r, depth-1), encText{s: "t"}}
	default:
		return struct {
			Value any `json:"value"`
			Empty any `json:"empty,omitempty"`
		}{Value: genValue(r, depth-1)}
	}
}

func genTree(r *rand.Rand, depth int) encTree {
	s := encStrings[r.IntN(len(encStrings))]
	t := encTree{
		Name:     s,
		Raw:      json.RawMessage(`{"z":"\u003e","a":[ 1 , 2 ]}`),
		Any:      nil,
		F32:      float32(encNumbers[r.IntN(len(encNumbers))]),
		F64:      encNumbers[r.IntN(len(encNumbers))],
		U64:      math.MaxUint64,
		I64:      math.MinInt64,
		When:     time.Date(2026, 12, 6, 13, 0, 0, 5, time.UTC),
		Big:      new(big.Int).Lsh(big.NewInt(1), 80),
		Text:     encText{s: s},
		PtrText:  encPtrText{n: r.IntN(10)},
		Embedded: encEmbedding{encBase: encBase{B: "b", A: "shadowed"}, C: "c", A: 7},
		Quoted:   encQuoted{N: 5, B: true},
		Twins:    encTwins{A: "a", B: "b", C: "c"},
		Keys:     map[encKey]bool{"z": true, "a": false},
	}
	if r.IntN(2) == 0 {
		t.Leaf = &encLeaf{Z: s, A: []int{3, 1}, Opt: &s, Bad: 1, Dash: "dash", hidden: s, Tags: map[string]string{"y": s, "x": ""}}
		t.Bytes = []byte(s)
		t.Num = "42"
	}
	if depth > 0 {
		t.Any = genValue(r, depth)
		t.Kids = []*encTree{nil}
		if r.IntN(2) == 0 {
			k := genTree(r, depth-1)
			t.Kids = append(t.Kids, &k)
		}
	}
	return t
}

// TestEncodeOnceDifferential holds the canonical encoder to the two paths
// it replaced (json.Marshal then canonicalJSON; decode and encode again),
// byte for byte, for generated values of every shape, and for the values
// all three refuse.
func TestEncodeOnceDifferential(t *testing.T) {
	r := rand.New(rand.NewPCG(42, 87))
	values := []any{
		nil, true, 0, -1, "<&>", encStrings, encNumbers, map[string]any{},
		[]any{}, []string(nil), map[string]any(nil), json.RawMessage(nil), json.RawMessage(`{"b":{"d":1,"c":2},"a":[]}`),
		map[string]any{"\u2028": 1, "b": map[string]any{"z": nil, "y": []any{}}, "a": "\xff"},
		genTree(r, 3),
	}
	for range 3000 {
		values = append(values, genValue(r, 4))
	}
	for i, v := range values {
		got, gerr := Envelope(v)
		want, werr := oldEnvelope(v)
		doc, _, derr := oldEnvelopeDoc(v)
		if (gerr != nil) != (werr != nil) || (gerr != nil) != (derr != nil) {
			t.Fatalf("value %d %#v: errors differ: once %v, old %v, doc %v", i, v, gerr, werr, derr)
		}
		if gerr != nil {
			if !errors.Is(gerr, ErrProjection) {
				t.Errorf("value %d: %v is not ErrProjection", i, gerr)
			}
			continue
		}
		if string(got) != string(want) || string(got) != string(doc) {
			t.Fatalf("value %d %#v:\nonce %s\nold  %s\ndoc  %s", i, v, got, want, doc)
		}
	}
}

// TestEncodeOnceRefuses: what the old paths refused, the encoder refuses
// with ErrProjection.
func TestEncodeOnceRefuses(t *testing.T) {
	deep := func(n int) any {
		v := any(1)
		for range n {
			v = []any{v}
		}
		return v
	}
	type cycle struct {
		Next *cycle `json:"next"`
	}
	c := &cycle{}
	c.Next = c
	type recursive *recursive
	var rp recursive
	rp = &rp
	for name, v := range map[string]any{
		"129 levels":         deep(129),
		"int keys":           map[int]string{1: "a"},
		"nil int keys":       struct{ M map[int]string }{},
		"NaN":                math.NaN(),
		"infinite float32":   float32(math.Inf(1)),
		"channel":            struct{ C chan int }{C: make(chan int)},
		"cycle":              c,
		"pointer cycle":      rp,
		"invalid RawMessage": json.RawMessage(`{`),
		"invalid Number":     json.Number("1x"),
	} {
		once, err := Envelope(v)
		if _, werr := oldEnvelope(v); werr == nil {
			t.Errorf("%s: the old path accepts it", name)
		}
		if !errors.Is(err, ErrProjection) {
			t.Errorf("%s: %s, %v", name, once, err)
		}
	}
	if got, err := Envelope(deep(128)); err != nil || !strings.HasPrefix(string(got), `{"result":[[[`) {
		t.Errorf("128 levels: %.20s, %v", got, err)
	}
}

// FuzzEncodeOnce holds the canonical encoder to the old path for values
// built from fuzzed strings and numbers, and for any JSON document decoded
// into Go's generic values.
func FuzzEncodeOnce(f *testing.F) {
	for i, s := range encStrings {
		f.Add(s, encNumbers[i%len(encNumbers)], int64(i), []byte(canonSeeds[i%len(canonSeeds)]))
	}
	f.Fuzz(func(t *testing.T, s string, x float64, n int64, doc []byte) {
		var generic any
		_ = json.Unmarshal(doc, &generic)
		tr := encTree{Name: s, F64: x, F32: float32(x), I64: n, Any: generic, Bytes: []byte(s),
			Keys: map[encKey]bool{encKey(s): true}, Text: encText{s: s}}
		for _, v := range []any{s, x, generic, tr, map[string]any{s: generic, "k": s}, json.RawMessage(doc)} {
			got, gerr := Envelope(v)
			want, werr := oldEnvelope(v)
			if (gerr != nil) != (werr != nil) || string(got) != string(want) {
				t.Fatalf("%#v:\nonce %s (%v)\nold  %s (%v)", v, got, gerr, want, werr)
			}
		}
	})
}
