package execution_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
)

// The realistic workload of issue 42 (bench/internal/realistic, whose
// package the execution tests cannot import): the input of its quote tool.
type (
	rqRequest struct {
		OrderID  string     `json:"orderId" jsonschema:"pattern=^ord-[0-9]{6}$"`
		Currency string     `json:"currency" jsonschema:"enum=EUR,enum=USD,enum=GBP"`
		Channel  string     `json:"channel" jsonschema:"enum=web,enum=phone,enum=partner"`
		Customer rqCustomer `json:"customer"`
		Items    []rqItem   `json:"items" jsonschema:"minItems=1,maxItems=50"`
	}
	rqCustomer struct {
		ID       string    `json:"id" jsonschema:"pattern=^cus-[0-9a-f]{8}$"`
		Name     string    `json:"name" jsonschema:"minLength=1,maxLength=120"`
		Email    string    `json:"email" jsonschema:"minLength=3,maxLength=254"`
		Tier     string    `json:"tier" jsonschema:"enum=standard,enum=silver,enum=gold"`
		Billing  rqAddress `json:"billing"`
		Shipping rqAddress `json:"shipping"`
	}
	rqAddress struct {
		Line1    string `json:"line1" jsonschema:"minLength=1,maxLength=200"`
		Line2    string `json:"line2" jsonschema:"maxLength=200"`
		City     string `json:"city" jsonschema:"minLength=1,maxLength=100"`
		Region   string `json:"region" jsonschema:"maxLength=100"`
		Postcode string `json:"postcode" jsonschema:"minLength=2,maxLength=12"`
		Country  string `json:"country" jsonschema:"enum=DE,enum=FR,enum=GB,enum=NL,enum=US"`
	}
	rqItem struct {
		SKU         string   `json:"sku" jsonschema:"pattern=^[A-Z]{3}-[0-9]{4}$"`
		Name        string   `json:"name" jsonschema:"minLength=1,maxLength=200"`
		Category    string   `json:"category" jsonschema:"enum=hardware,enum=software,enum=service,enum=books"`
		Quantity    int      `json:"quantity" jsonschema:"minimum=1,maximum=1000"`
		UnitCents   int      `json:"unitPriceCents" jsonschema:"minimum=0,maximum=10000000"`
		WeightGrams int      `json:"weightGrams" jsonschema:"minimum=0,maximum=100000"`
		Gift        bool     `json:"gift"`
		Tags        []string `json:"tags" jsonschema:"minItems=1,maxItems=8"`
	}
)

// realisticArguments is the realistic workload's arguments (realistic.Sample,
// 12 items), about 2.4 KB.
func realisticArguments() []byte {
	addr := func(line1, city, post, country string) rqAddress {
		return rqAddress{Line1: line1, Line2: "Aufgang B", City: city, Region: "Region", Postcode: post, Country: country}
	}
	r := rqRequest{
		OrderID: "ord-004217", Currency: "EUR", Channel: "partner",
		Customer: rqCustomer{
			ID: "cus-7f3a9c21", Name: "Grete Oberländer", Email: "m.oberlaender@example.org", Tier: "silver",
			Billing: addr("Kurfürstendamm 195", "Berlin", "10707", "DE"), Shipping: addr("Rue de Rivoli 12", "Paris", "75001", "FR"),
		},
	}
	cats := []string{"hardware", "software", "service", "books"}
	for i := range 12 {
		r.Items = append(r.Items, rqItem{
			SKU: fmt.Sprintf("ABC-%04d", 1000+i*7), Name: fmt.Sprintf("Article number %d, boxed", i+1),
			Category: cats[i%4], Quantity: 1 + i%5, UnitCents: 1999 + 250*i, WeightGrams: 120 * (i + 1),
			Gift: i%3 == 0, Tags: []string{"new", "promo-" + strconv.Itoa(i)},
		})
	}
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	return b
}

// Mixed has what the one pass checks itself (pointers, bounded and
// unsigned integers, floats with exclusive bounds and multipleOf, enums of
// numbers and of nullable strings, formats, embedded structs) and what it
// leaves to the validator, value by value (times, bytes, maps, any, raw
// JSON, unique items, nullable and oneOf tags).
type Mixed struct {
	mixedBase
	*mixedExtra
	*MixedMore
	Small  int8            `json:"small"`
	Port   uint16          `json:"port" jsonschema:"minimum=1"`
	Big    uint64          `json:"big"`
	Ratio  float32         `json:"ratio" jsonschema:"exclusiveMinimum=0,exclusiveMaximum=1"`
	Step   float64         `json:"step,omitempty" jsonschema:"multipleOf=0.25"`
	Even   int             `json:"even,omitempty" jsonschema:"multipleOf=2,maximum=100"`
	Prio   int             `json:"prio" jsonschema:"enum=1,enum=2,enum=3"`
	Mode   *string         `json:"mode" jsonschema:"enum=fast,enum=safe"`
	Mail   string          `json:"mail,omitempty" jsonschema:"format=email"`
	Host   *string         `json:"host,omitempty" jsonschema:"format=hostname"`
	Count  *int            `json:"count,omitempty" jsonschema:"minimum=0"`
	Flag   *bool           `json:"flag,omitempty"`
	Home   *rqAddress      `json:"home,omitempty"`
	Homes  []*rqAddress    `json:"homes,omitempty" jsonschema:"maxItems=3"`
	Grid   [][]int8        `json:"grid,omitempty"`
	Pair   [2]string       `json:"pair,omitempty"`
	When   time.Time       `json:"when,omitempty"`
	Blob   []byte          `json:"blob,omitempty"`
	Labels map[string]int  `json:"labels,omitempty"`
	Any    any             `json:"any,omitempty"`
	Raw    json.RawMessage `json:"raw,omitempty"`
	Set    []string        `json:"set,omitempty" jsonschema:"uniqueItems=true"`
	Maybe  string          `json:"maybe,omitempty" jsonschema:"nullable"`
	Num    json.Number     `json:"num,omitempty"`
}

type mixedBase struct {
	Owner string `json:"owner" jsonschema:"minLength=2"`
}

// MixedMore is embedded through a pointer the decoder allocates.
type MixedMore struct {
	Level uint8 `json:"level,omitempty" jsonschema:"maximum=9"`
}

type mixedExtra struct {
	Note string `json:"note,omitempty" jsonschema:"maxLength=5"`
}

const mixedSeed = `{"owner":"ann","level":3,"small":-5,"port":8080,"big":18446744073709551615,"ratio":0.5,
"step":1.25,"even":42,"prio":2,"mode":"fast","mail":"a@example.org","host":"example.org","count":3,"flag":true,
"home":{"line1":"x","line2":"","city":"c","region":"","postcode":"12","country":"NL"},
"homes":[null,{"line1":"y","line2":"","city":"d","region":"","postcode":"99","country":"US"}],
"grid":[[1,2],[-128,127]],"pair":["a","b"],"when":"2026-12-06T14:00:00Z","blob":"aGk=","labels":{"a":1},
"any":{"x":[1,"y",null]},"raw":[1, 2 ,3],"set":["a","b"],"maybe":null,"num":"12.5e3"}`

// differentialPlans compiles the capabilities the differential tests read
// arguments for, by name.
func differentialPlans(t testing.TB) map[string]*execution.Plan {
	app := agnara.New("diff", nil)
	caps := map[string]*agnara.Capability{
		"realistic":  app.Capability(func(in rqRequest) error { return nil }, &agnara.CapabilityOptions{Name: "quote"}),
		"mixed":      app.Capability(func(in Mixed) error { return nil }, &agnara.CapabilityOptions{Name: "mixed"}),
		"everything": app.Capability(func(in Everything) error { return nil }, &agnara.CapabilityOptions{Name: "everything"}),
	}
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*execution.Plan{}
	for name, c := range caps {
		out[name], _ = plans.Plan(c)
	}
	return out
}

// agree fails t unless the one pass and the general path read args the
// same way: both accept with equal values, or both refuse with the same
// failure, byte for byte once encoded.
func agree(t testing.TB, p *execution.Plan, args []byte) (refused bool) {
	t.Helper()
	one, oneF, general, generalF := execution.ReadInputBothWays(p, args)
	if execution.InputPath(p) != "one-pass" {
		return generalF != nil
	}
	if (oneF == nil) != (generalF == nil) {
		t.Fatalf("%s: one pass %v, general %v\nargs: %s", p, oneF, generalF, args)
	}
	if oneF != nil {
		a, errA := json.Marshal(oneF)
		b, errB := json.Marshal(generalF)
		if errA != nil || errB != nil || !bytes.Equal(a, b) || oneF.Message != generalF.Message {
			t.Fatalf("%s: failures differ\none pass: %s\ngeneral:  %s\nargs: %s", p, a, b, args)
		}
		return true
	}
	if !reflect.DeepEqual(one, general) {
		t.Fatalf("%s: decoded values differ\none pass: %#v\ngeneral:  %#v\nargs: %s", p, one, general, args)
	}
	return false
}

func TestOnePassPaths(t *testing.T) {
	plans := differentialPlans(t)
	for name, want := range map[string]string{"realistic": "one-pass", "mixed": "one-pass", "everything": "general"} {
		if got := execution.InputPath(plans[name]); got != want {
			t.Errorf("%s takes the %s path, want %s", name, got, want)
		}
	}
}

// TestOnePassAgreesWithValidator: hand-made arguments, each read by the one
// pass and by the general path (decoder, then santhosh-tekuri's
// validator): the same outcome, and for a refusal the same failure.
func TestOnePassAgreesWithValidator(t *testing.T) {
	plans := differentialPlans(t)
	sample := string(realisticArguments())
	with := func(old, new string) string {
		if !strings.Contains(sample, old) {
			t.Fatalf("sample lacks %s", old)
		}
		return strings.Replace(sample, old, new, 1)
	}
	manyItems := `[` + strings.TrimSuffix(strings.Repeat(`{"sku":"x"},`, 60), ",") + `]`
	tests := []struct {
		plan, args string
		refused    bool
	}{
		{"realistic", sample, false},
		{"realistic", with(`"ord-004217"`, `"ord-42"`), true},
		{"realistic", with(`"EUR"`, `"eur"`), true},
		{"realistic", with(`"EUR"`, `null`), true},
		{"realistic", with(`"quantity":1`, `"quantity":0`), true},
		{"realistic", with(`"quantity":1`, `"quantity":1.0`), true}, // valid, but not an int to decode
		{"realistic", with(`"quantity":1`, `"quantity":1e1`), true},
		{"realistic", with(`"quantity":1`, `"quantity":1.5`), true},
		{"realistic", with(`"quantity":1`, `"quantity":-0`), true},
		{"realistic", with(`"quantity":1`, `"quantity":1e400`), true},
		{"realistic", with(`"quantity":1`, `"quantity":99999999999999999999`), true},
		{"realistic", with(`"quantity":1`, `"quantity":1e99999999999999999999`), true},
		{"realistic", with(`"quantity":1`, `"quantity":-1.0e-99999999999999999999`), true},
		{"realistic", with(`"quantity":1`, `"quantity":"1"`), true},
		{"realistic", with(`"gift":true`, `"gift":1`), true},
		{"realistic", with(`"tags":["new","promo-0"]`, `"tags":[]`), true},
		{"realistic", with(`"tags":["new","promo-0"]`, `"tags":null`), true},
		{"realistic", with(`"tags":["new","promo-0"]`, `"tags":["a","b","c","d","e","f","g","h","i"]`), true},
		{"realistic", with(`"customer":{`, `"customer":{"vip":true,`), true},
		{"realistic", with(`"customer":{`, `"customer":null,"x":{`), true},
		{"realistic", with(`"orderId":"ord-004217",`, ``), true},
		{"realistic", with(`"orderId":"ord-004217"`, `"orderId":"bad","orderId":"ord-004217"`), false},
		{"realistic", with(`"orderId":"ord-004217"`, `"orderId":"ord-004217","orderId":"bad"`), true},
		{"realistic", with(`"customer":{`, `"customer":{"name":"","billing":{"country":"XX"},`), false},
		{"realistic", with(`"name":"Grete Oberländer"`, `"name":"\ud800"`), false},
		{"realistic", with(`"name":"Grete Oberländer"`, `"name":"`+strings.Repeat("é", 120)+`"`), false},
		{"realistic", with(`"name":"Grete Oberländer"`, `"name":"`+strings.Repeat("é", 121)+`"`), true},
		{"realistic", with(`"sku":"ABC-1000"`, `"sku":"ABC-1000\u0000"`), true},
		{"realistic", with(`"items":[`, `"items":`+manyItems+`,"old":[`), true},
		{"realistic", `{}`, true},
		{"realistic", `[]`, true},
		{"realistic", `null`, true},
		{"realistic", `{"orderId":1,"currency":2,"channel":3,"customer":4,"items":5}`, true},
		{"realistic", sample + ` x`, true},
		{"realistic", strings.TrimSuffix(sample, "}"), true},
		{"realistic", `{"items":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, true},
		{"mixed", mixedSeed, false},
		{"mixed", strings.Replace(mixedSeed, `"level":3`, `"level":10`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"level":3`, `"level":256`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"level":3`, `"level":null`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"small":-5`, `"small":-129`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"port":8080`, `"port":0`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"port":8080`, `"port":-1`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"big":18446744073709551615`, `"big":18446744073709551616`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"ratio":0.5`, `"ratio":1`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"ratio":0.5`, `"ratio":1e-50`, 1), false},
		{"mixed", strings.Replace(mixedSeed, `"step":1.25`, `"step":1.3`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"even":42`, `"even":43`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"prio":2`, `"prio":2.0`, 1), true}, // valid, but not an int to decode
		{"mixed", strings.Replace(mixedSeed, `"prio":2`, `"prio":4`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"mode":"fast"`, `"mode":null`, 1), false},
		{"mixed", strings.Replace(mixedSeed, `"mode":"fast"`, `"mode":"slow"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"mail":"a@example.org"`, `"mail":"not mail"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"host":"example.org"`, `"host":"-bad-"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"count":3`, `"count":-3`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"home":{`, `"home":{"zip":1,`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"homes":[null,`, `"homes":[null,null,null,5,`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"grid":[[1,2]`, `"grid":[[1,200]`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"pair":["a","b"]`, `"pair":["a"]`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"when":"2026-12-06T14:00:00Z"`, `"when":"yesterday"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"blob":"aGk="`, `"blob":"***"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"labels":{"a":1}`, `"labels":{"a":"1"}`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"set":["a","b"]`, `"set":["a","a"]`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"maybe":null`, `"maybe":7`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"num":"12.5e3"`, `"num":"12x"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"owner":"ann"`, `"owner":"ann","note":"hi"`, 1), true}, // an embedded pointer to an unexported struct
		{"mixed", strings.Replace(mixedSeed, `"owner":"ann"`, `"owner":"ann","note":"too long"`, 1), true},
		{"mixed", strings.Replace(mixedSeed, `"owner":"ann"`, `"owner":"a","owner":"b"`, 1), true},
		{"mixed", `{"owner":"ann","small":1,"port":1,"big":1,"ratio":0.1,"prio":1,"mode":null,"when":"x"}`, true},
		{"mixed", `{"owner":"ann","small":1,"port":1,"big":1,"ratio":0.1,"prio":1,"mode":null}`, false},
	}
	for i, tc := range tests {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			if refused := agree(t, plans[tc.plan], []byte(tc.args)); refused != tc.refused {
				one, oneF, _, _ := execution.ReadInputBothWays(plans[tc.plan], []byte(tc.args))
				t.Errorf("refused = %v, want %v (%v %+v)", refused, tc.refused, oneF, one)
			}
		})
	}
}

// TestOnePassAgreesOnGeneratedArguments: arguments generated from valid
// ones by random mutations (values replaced by ones of other types, out of
// bounds or off the enum, members dropped, added and repeated, elements
// dropped and repeated), several at once so that violations accumulate.
func TestOnePassAgreesOnGeneratedArguments(t *testing.T) {
	plans := differentialPlans(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	for _, seed := range []struct{ plan, args string }{
		{"realistic", string(realisticArguments())},
		{"mixed", mixedSeed},
	} {
		doc := parseTree(t, []byte(seed.args))
		rng := rand.New(rand.NewPCG(42, uint64(len(seed.plan))))
		refused := 0
		for range n {
			d := doc.clone()
			for range 1 + rng.IntN(4) {
				d.mutate(rng)
			}
			if rng.IntN(8) == 0 {
				d = doc.clone() // valid ones too, reordered at most
				for range 3 {
					d.reorder(rng)
				}
			}
			if agree(t, plans[seed.plan], d.render(nil)) {
				refused++
			}
		}
		// Both outcomes must be exercised, or the test proves little.
		if refused == 0 || refused == n {
			t.Errorf("%s: %d of %d generated arguments refused", seed.plan, refused, n)
		}
		t.Logf("%s: %d of %d generated arguments refused", seed.plan, refused, n)
	}
}

// jnode is a JSON value that keeps its members' order and repeats.
type jnode struct {
	raw     string // a scalar's text
	keys    []string
	members []*jnode // an object's, when keys != nil or obj
	obj     bool
	arr     bool
}

func parseTree(t testing.TB, b []byte) *jnode {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var read func() *jnode
	read = func() *jnode {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case json.Delim:
			n := &jnode{obj: tok == '{', arr: tok == '['}
			for dec.More() {
				if n.obj {
					k, _ := dec.Token()
					n.keys = append(n.keys, k.(string))
				}
				n.members = append(n.members, read())
			}
			_, _ = dec.Token()
			return n
		case string:
			q, _ := json.Marshal(tok)
			return &jnode{raw: string(q)}
		case nil:
			return &jnode{raw: "null"}
		default:
			return &jnode{raw: fmt.Sprint(tok)}
		}
	}
	return read()
}

func (n *jnode) clone() *jnode {
	c := *n
	c.keys = slices.Clone(n.keys)
	c.members = make([]*jnode, len(n.members))
	for i, m := range n.members {
		c.members[i] = m.clone()
	}
	return &c
}

func (n *jnode) render(b []byte) []byte {
	switch {
	case n.obj:
		b = append(b, '{')
		for i, m := range n.members {
			if i > 0 {
				b = append(b, ',')
			}
			k, _ := json.Marshal(n.keys[i])
			b = append(append(b, k...), ':')
			b = m.render(b)
		}
		return append(b, '}')
	case n.arr:
		b = append(b, '[')
		for i, m := range n.members {
			if i > 0 {
				b = append(b, ',')
			}
			b = m.render(b)
		}
		return append(b, ']')
	}
	return append(b, n.raw...)
}

// values are what mutations put in place of a value.
var values = []string{
	`null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `1.0`, `1.5`, `1e2`, `1E+2`, `2.5e-1`, `1e400`, `-1e-400`,
	`127`, `128`, `-128`, `-129`, `255`, `256`, `65535`, `65536`, `1000`, `1001`, `10000000`, `10000001`,
	`100000`, `100001`, `4294967296`, `9223372036854775807`, `9223372036854775808`, `-9223372036854775809`,
	`18446744073709551615`, `18446744073709551616`, `123456789012345678901234567890`, `0.25`, `0.3`, `42`, `43`,
	`""`, `"a"`, `"ab"`, `"x y"`, `"é"`, `"\u00e9\u00e9"`, `"\ud800"`, `"\ud83d\ude00"`, `"a\"b\\c"`, `"\u0000"`,
	`"EUR"`, `"USD"`, `"eur"`, `"DE"`, `"XX"`, `"gold"`, `"web"`, `"books"`, `"fast"`, `"safe"`, `"slow"`,
	`"ord-123456"`, `"ord-12345"`, `"cus-0123abcd"`, `"cus-0123ABCD"`, `"ABC-1234"`, `"abc-1234"`,
	`"a@example.org"`, `"example.org"`, `"2026-12-06T14:00:00Z"`, `"2026-13-06T14:00:00Z"`, `"aGk="`, `"a*"`,
	`"` + strings.Repeat("x", 201) + `"`, `"` + strings.Repeat("é", 121) + `"`, `"` + strings.Repeat("x", 200) + `"`,
	`"` + strings.Repeat("é", 120) + `"`, `"` + strings.Repeat("y", 100) + `"`, `"` + strings.Repeat("z", 12) + `"`,
	`"` + strings.Repeat("z", 13) + `"`, `"12345"`, `"123456"`, `"\u00e9\u00e9\u00e9"`,
	`{}`, `[]`, `{"a":1}`, `[1]`, `["a"]`, `["a","a"]`, `[null]`, `[{}]`, `{"line1":"x"}`,
}

var extraKeys = []string{"x", "orderId", "name", "tags", "a/b", "m~n", "", "owner", "note", "quantity"}

// mutate changes one value somewhere in n.
func (n *jnode) mutate(rng *rand.Rand) {
	// Walk down to a random container.
	at := n
	for depth := 0; depth < 6 && len(at.members) > 0 && rng.IntN(3) > 0; depth++ {
		next := at.members[rng.IntN(len(at.members))]
		if !next.obj && !next.arr {
			break
		}
		at = next
	}
	if !at.obj && !at.arr {
		at.raw = values[rng.IntN(len(values))]
		return
	}
	i := 0
	if len(at.members) > 0 {
		i = rng.IntN(len(at.members))
	}
	switch op := rng.IntN(11); {
	case op < 5 && len(at.members) > 0: // replace a value
		at.members[i] = &jnode{raw: values[rng.IntN(len(values))]}
		if v := at.members[i].raw; strings.HasPrefix(v, "{") || strings.HasPrefix(v, "[") {
			at.members[i] = parseTree(testingTB{}, []byte(v))
		}
	case op == 5 && len(at.members) > 0: // drop a member or an element
		at.members = slices.Delete(at.members, i, i+1)
		if at.obj {
			at.keys = slices.Delete(at.keys, i, i+1)
		}
	case op == 6 && len(at.members) > 0: // repeat one, mutated or not, before or after
		c := at.members[i].clone()
		if rng.IntN(2) == 0 {
			c.mutate(rng)
		}
		j := i + rng.IntN(2)
		at.members = slices.Insert(at.members, j, c)
		if at.obj {
			at.keys = slices.Insert(at.keys, j, at.keys[i])
		}
	case op == 7 && at.obj: // add a member
		at.keys = append(at.keys, extraKeys[rng.IntN(len(extraKeys))])
		at.members = append(at.members, &jnode{raw: values[rng.IntN(len(values))]})
	case op == 8 && at.arr && len(at.members) > 0 && len(at.members) < 100: // many elements
		for range rng.IntN(60) {
			at.members = append(at.members, at.members[i].clone())
		}
	case op == 9 && at.obj: // reorder members, which changes nothing
		at.reorder(rng)
	default: // replace the container itself
		*at = jnode{raw: values[rng.IntN(len(values))]}
	}
}

// reorder shuffles the members of a random object in n.
func (n *jnode) reorder(rng *rand.Rand) {
	at := n
	for depth := 0; depth < 6 && len(at.members) > 0 && rng.IntN(3) > 0; depth++ {
		next := at.members[rng.IntN(len(at.members))]
		if !next.obj && !next.arr {
			break
		}
		at = next
	}
	if at.obj {
		rng.Shuffle(len(at.members), func(i, j int) {
			at.members[i], at.members[j] = at.members[j], at.members[i]
			at.keys[i], at.keys[j] = at.keys[j], at.keys[i]
		})
	}
}

// testingTB lets parseTree run on the mutation values, which are JSON.
type testingTB struct{ testing.TB }

func (testingTB) Fatal(args ...any) { panic(fmt.Sprint(args...)) }

// FuzzOnePassAgreesWithValidator: for any bytes as arguments, and for
// arguments generated from a valid one by the mutations seed draws, the
// one pass and the general path agree (TestOnePassAgreesWithValidator's
// property).
func FuzzOnePassAgreesWithValidator(f *testing.F) {
	plans := differentialPlans(f)
	names := []string{"realistic", "mixed"}
	seeds := []*jnode{parseTree(f, realisticArguments()), parseTree(f, []byte(mixedSeed))}
	f.Add(uint8(0), uint64(1), realisticArguments())
	f.Add(uint8(1), uint64(2), []byte(mixedSeed))
	f.Add(uint8(0), uint64(3), []byte(`{"orderId":"bad","orderId":"ord-000001","items":[{"quantity":1.5}]}`))
	f.Add(uint8(1), uint64(4), []byte(`{"owner":"ann","small":1,"port":1,"big":1,"ratio":0.1,"prio":1,"mode":null}`))
	f.Fuzz(func(t *testing.T, which uint8, seed uint64, args []byte) {
		i := int(which) % len(names)
		agree(t, plans[names[i]], args)
		rng := rand.New(rand.NewPCG(seed, uint64(which)))
		d := seeds[i].clone()
		for range 1 + rng.IntN(6) {
			d.mutate(rng)
		}
		agree(t, plans[names[i]], d.render(nil))
	})
}

// BenchmarkReadInput reads the realistic workload's arguments (issue 42)
// by the one pass and by the general path (the decoder building the
// validator's document, then santhosh-tekuri's validator), side by side;
// and a refused variant with a violation in each of its 12 items.
func BenchmarkReadInput(b *testing.B) {
	p := differentialPlans(b)["realistic"]
	valid := realisticArguments()
	invalid := bytes.ReplaceAll(valid, []byte(`"sku":"ABC-`), []byte(`"sku":"abc-`))
	for _, bc := range []struct {
		name string
		args []byte
	}{{"valid", valid}, {"refused", invalid}} {
		for _, path := range []string{"one-pass", "general"} {
			b.Run(bc.name+"/"+path, func(b *testing.B) {
				_, f := execution.ReadInput(p, bc.args, path == "general")
				if (f != nil) != (bc.name == "refused") {
					b.Fatalf("outcome %v", f)
				}
				b.SetBytes(int64(len(bc.args)))
				b.ReportAllocs()
				for b.Loop() {
					execution.ReadInput(p, bc.args, path == "general")
				}
			})
		}
	}
}
