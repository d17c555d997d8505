package execution_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
)

// here returns "compile_test.go:<line of the caller>".
func here() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file[strings.LastIndexByte(file, '/')+1:], line)
}

// lineAfter turns "file.go:N" into "file.go:N+1".
func lineAfter(site string) string {
	i := strings.LastIndexByte(site, ':')
	var n int
	fmt.Sscan(site[i+1:], &n)
	return fmt.Sprintf("%s:%d:", site[:i], n+1)
}

type Unprovided struct{}

func TestCompileReportsEveryMistakeWithItsSite(t *testing.T) {
	app := agnara.New("app", nil)
	first := lineAfter(here())
	app.Capability(func(ctx context.Context, in GetUserInput, u *Unprovided) error { return nil }, &agnara.CapabilityOptions{Name: "first"})
	second := lineAfter(here())
	app.Capability(func(in GetUserInput) (int, string) { return 0, "" }, &agnara.CapabilityOptions{Name: "second"})
	_, err := execution.Compile(app)
	if err == nil {
		t.Fatal("Compile succeeded, want two mistakes")
	}
	for _, want := range []string{
		first + " app.first: parameter 3 (*execution_test.Unprovided): no provider for *execution_test.Unprovided",
		second + " app.second: second result string: want error",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not contain %q:\n%v", want, err)
		}
	}
	if n := len(strings.Split(err.Error(), "\n")); n != 2 {
		t.Errorf("got %d mistakes, want 2:\n%v", n, err)
	}
}

type (
	withDefault struct {
		Name string `json:"name" jsonschema:"default=bob"`
	}
	recursive struct {
		Children []recursive `json:"children"`
	}
	withChan struct {
		C chan int `json:"c"`
	}
	withIntKeys struct {
		M map[int]string `json:"m"`
	}
	withURL struct {
		U url.URL `json:"u"`
	}
	marshals      struct{ V int }
	withMarshaler struct {
		M marshals `json:"m"`
	}
	withStringOpt struct {
		N int `json:"n,string"`
	}
	dupInner struct {
		A string `json:"x"`
	}
	withDuplicate struct {
		dupInner
		B string `json:"x"`
	}
	withFunc struct {
		F func() `json:"f"`
	}
	withComplex struct {
		C complex128 `json:"c"`
	}
	writeOnlyText     struct{ V int }
	withWriteOnlyText struct {
		W writeOnlyText `json:"w"`
	}
	withIface struct {
		E error `json:"e"`
	}
)

// Struct tags the schema generator would ignore, or turn into a looser or
// impossible schema than the one written.
type (
	tagMinLengthNaN struct {
		S string `json:"s" jsonschema:"minLength=abc"`
	}
	tagMaxLengthNegative struct {
		S string `json:"s" jsonschema:"maxLength=-3"`
	}
	tagTypo struct {
		S string `json:"s" jsonschema:"minLenght=3"`
	}
	tagMinAboveMax struct {
		N int `json:"n" jsonschema:"minimum=10,maximum=1"`
	}
	tagLengthsCross struct {
		S string `json:"s" jsonschema:"minLength=5,maxLength=2"`
	}
	tagExclusiveEqual struct {
		F float64 `json:"f" jsonschema:"exclusiveMinimum=1,exclusiveMaximum=1"`
	}
	tagItemsCross struct {
		L []string `json:"l" jsonschema:"minItems=3,maxItems=1"`
	}
	tagNoJSONName struct {
		UserID string
	}
	tagNoJSONNameOmitempty struct {
		UserID string `json:",omitempty"`
	}
	tagWrongType struct {
		N int `json:"n" jsonschema:"minLength=1"`
	}
	tagNoValue struct {
		S string `json:"s" jsonschema:"maxLength"`
	}
	tagBadNumber struct {
		N int `json:"n" jsonschema:"maximum=ten"`
	}
	tagInfinity struct {
		N float64 `json:"n" jsonschema:"maximum=inf"`
	}
	tagZeroMultiple struct {
		N int `json:"n" jsonschema:"multipleOf=0"`
	}
	tagBadEnumNumber struct {
		N int `json:"n" jsonschema:"enum=1,enum=two"`
	}
	tagBadType struct {
		S string `json:"s" jsonschema:"type=strin"`
	}
	tagBadPattern struct {
		S string `json:"s" jsonschema:"pattern=("`
	}
	tagUniqueFalse struct {
		L []string `json:"l" jsonschema:"uniqueItems=false"`
	}
	tagNested struct {
		Inner struct {
			Name string `json:"name" jsonschema:"maxLength=-1"`
		} `json:"inner"`
	}
	tagInSlice struct {
		Items []struct {
			Code string `json:"code" jsonschema:"minLength=4,maxLength=2"`
		} `json:"items"`
	}
	tagsThatAreFine struct {
		S  string   `json:"s" jsonschema:"minLength=1,maxLength=5,pattern=^[a-z]+$,format=email,title=S,description=An\\, escaped comma,enum=a,enum=b,example=a"`
		N  *int     `json:"n,omitempty" jsonschema:"minimum=-5,maximum=5,multipleOf=0.5,exclusiveMinimum=-6"`
		L  []string `json:"l" jsonschema:"minItems=0,maxItems=2,uniqueItems=true,minLength=1"`
		B  bool     `json:"b" jsonschema:"required"`
		Eq int      `json:"eq" jsonschema:"minimum=3,maximum=3"`
	}
)

func (writeOnlyText) MarshalText() ([]byte, error) { return nil, nil }

func (marshals) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }

func TestCompileMistakes(t *testing.T) {
	type Cycle1 struct{}
	type Cycle2 struct{}
	tests := []struct {
		name string
		fn   any
		opts agnara.CapabilityOptions
		want string
	}{
		{"not a function", 42, agnara.CapabilityOptions{Name: "x"}, "want a function, got int"},
		{"nil function", (func())(nil), agnara.CapabilityOptions{Name: "x"}, "want a function"},
		{"closure without a name", func() error { return nil }, agnara.CapabilityOptions{}, "set CapabilityOptions.Name"},
		{"no results", func() {}, agnara.CapabilityOptions{Name: "x"}, "0 results: want (Out, error) or error"},
		{"three results", func() (int, int, error) { return 0, 0, nil }, agnara.CapabilityOptions{Name: "x"}, "3 results"},
		{"single non-error result", func() int { return 0 }, agnara.CapabilityOptions{Name: "x"}, "result int: want (Out, error) or error"},
		{"variadic", func(...int) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "variadic functions cannot be capabilities"},
		{"context not first", func(GetUserInput, context.Context) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "parameter 2: a context must be the first parameter"},
		{"second struct", func(GetUserInput, User) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "parameter 2 (execution_test.User): no provider for execution_test.User (only the first parameter after the context can be the input struct)"},
		{"int input", func(context.Context, int) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "parameter 2 (int): the input must be a struct, whose fields are the arguments; got int"},
		{"string input without context", func(string) (int, error) { return 0, nil }, agnara.CapabilityOptions{Name: "x"}, "parameter 1 (string): the input must be a struct"},
		{"slice input", func([]GetUserInput) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "parameter 1 ([]execution_test.GetUserInput): the input must be a struct"},
		{"map input", func(context.Context, map[string]any) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "parameter 2 (map[string]interface {}): the input must be a struct"},
		{"pointer input", func(context.Context, *GetUserInput) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "(an input struct is passed by value, not by pointer)"},
		{"cycle", func(*Cycle1) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "dependency cycle: *execution_test.Cycle1 -> *execution_test.Cycle2 -> *execution_test.Cycle1"},
		{"schema on struct input", func(GetUserInput) error { return nil }, agnara.CapabilityOptions{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}, "InputSchema is only for capabilities whose input is json.RawMessage"},
		{"schema without raw input", func() error { return nil }, agnara.CapabilityOptions{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`)}, "InputSchema is set but the function takes no json.RawMessage input"},
		{"raw input without schema", func(json.RawMessage) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "must declare CapabilityOptions.InputSchema"},
		{"raw schema not an object", func(json.RawMessage) error { return nil }, agnara.CapabilityOptions{Name: "x", InputSchema: json.RawMessage(`{"type":"string"}`)}, `InputSchema must describe an object`},
		{"raw schema not JSON", func(json.RawMessage) error { return nil }, agnara.CapabilityOptions{Name: "x", InputSchema: json.RawMessage(`{`)}, "InputSchema is not valid JSON"},
		{"output schema on struct output", func() (User, error) { return User{}, nil }, agnara.CapabilityOptions{Name: "x", OutputSchema: json.RawMessage(`{"type":"object"}`)}, "OutputSchema is only for capabilities whose output is json.RawMessage or execution.Result"},
		{"output schema on content", func() ([]execution.Content, error) { return nil, nil }, agnara.CapabilityOptions{Name: "x", OutputSchema: json.RawMessage(`{"type":"object"}`)}, "OutputSchema is only for capabilities whose output is json.RawMessage or execution.Result"},
		{"result schema not JSON", func() (execution.Result, error) { return execution.Result{}, nil }, agnara.CapabilityOptions{Name: "x", OutputSchema: json.RawMessage(`{"type":`)}, "OutputSchema is not valid JSON"},
		{"output schema not JSON", func() (json.RawMessage, error) { return nil, nil }, agnara.CapabilityOptions{Name: "x", OutputSchema: json.RawMessage(`{"type":`)}, "OutputSchema is not valid JSON"},
		{"output schema with remote ref", func() (json.RawMessage, error) { return nil, nil }, agnara.CapabilityOptions{Name: "x", OutputSchema: json.RawMessage(`{"$ref":"https://example.com/s.json"}`)}, "OutputSchema does not compile"},
		{"raw schema with remote ref", func(json.RawMessage) error { return nil }, agnara.CapabilityOptions{Name: "x", InputSchema: json.RawMessage(`{"type":"object","$ref":"https://example.com/s.json"}`)}, "input schema does not compile"},
		{"default tag", func(withDefault) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `input withDefault.Name: a default value (jsonschema "default" tag) is not allowed`},
		{"recursive type", func(recursive) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "recursive type execution_test.recursive cannot be described without $ref"},
		{"channel", func(withChan) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "withChan.C: chan int values cannot be represented in JSON"},
		{"func field", func(withFunc) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "func() values cannot be represented in JSON"},
		{"complex field", func(withComplex) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "complex128 values cannot be represented in JSON"},
		{"int map keys", func(withIntKeys) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "map key type int: only string keys can be described"},
		{"url.URL", func(withURL) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "url.URL does not encode as a string"},
		{"json.Marshaler", func(withMarshaler) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "give it a JSONSchema() *jsonschema.Schema method"},
		{"string option", func(withStringOpt) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `the json ",string" option is not supported`},
		{"duplicate JSON names", func(withDuplicate) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `dupInner.A and B both have the JSON name "x"`},
		{"text type that cannot be decoded", func(withWriteOnlyText) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "implements encoding.TextMarshaler but not encoding.TextUnmarshaler"},
		{"interface input field", func(withIface) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "interface type error cannot be decoded from JSON"},
		{"nil form", func() error { return nil }, agnara.CapabilityOptions{Name: "x", Forms: []agnara.Form{(*execution.Form[GetUserInput])(nil)}}, "form 0 is nil"},
		{"tag: minLength not a number", func(tagMinLengthNaN) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagMinLengthNaN.S: jsonschema tag minLength=abc: want a non-negative integer"},
		{"tag: negative maxLength", func(tagMaxLengthNegative) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagMaxLengthNegative.S: jsonschema tag maxLength=-3: want a non-negative integer"},
		{"tag: unknown key", func(tagTypo) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `input tagTypo.S: unknown jsonschema tag key "minLenght" (did you mean "minLength"?)`},
		{"tag: minimum above maximum", func(tagMinAboveMax) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagMinAboveMax.N: minimum: minimum 10 is greater than maximum 1: no value satisfies both"},
		{"tag: minLength above maxLength", func(tagLengthsCross) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagLengthsCross.S: minLength: minLength 5 is greater than maxLength 2"},
		{"tag: equal exclusive bounds", func(tagExclusiveEqual) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagExclusiveEqual.F: exclusiveMinimum: exclusiveMinimum 1 is equal to exclusiveMaximum 1"},
		{"tag: minItems above maxItems", func(tagItemsCross) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagItemsCross.L: minItems: minItems 3 is greater than maxItems 1"},
		{"tag: bounds in an output", func() (tagMinAboveMax, error) { return tagMinAboveMax{}, nil }, agnara.CapabilityOptions{Name: "x"}, "output tagMinAboveMax.N: minimum: minimum 10 is greater than maximum 1"},
		{"exported field without a json tag", func(tagNoJSONName) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `input tagNoJSONName.UserID: exported field has no JSON name, so callers would see the Go name "UserID"`},
		{"exported field with an unnamed json tag", func(tagNoJSONNameOmitempty) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `input tagNoJSONNameOmitempty.UserID: exported field has no JSON name`},
		{"output field without a json tag", func() (tagNoJSONName, error) { return tagNoJSONName{}, nil }, agnara.CapabilityOptions{Name: "x"}, `output tagNoJSONName.UserID: exported field has no JSON name`},
		{"tag: key of another type", func(tagWrongType) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `input tagWrongType.N: jsonschema tag key "minLength" does not apply to a integer field (int), so it would be ignored`},
		{"tag: key without value", func(tagNoValue) error { return nil }, agnara.CapabilityOptions{Name: "x"}, `input tagNoValue.S: jsonschema tag "maxLength" has no value: write maxLength=<value>`},
		{"tag: bound not a number", func(tagBadNumber) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagBadNumber.N: jsonschema tag maximum=ten: want a number"},
		{"tag: bound not a JSON number", func(tagInfinity) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagInfinity.N: jsonschema tag maximum=inf: want a number"},
		{"tag: multipleOf zero", func(tagZeroMultiple) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagZeroMultiple.N: jsonschema tag multipleOf=0: want a number greater than 0"},
		{"tag: enum value not a number", func(tagBadEnumNumber) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagBadEnumNumber.N: jsonschema tag enum=two: want a number"},
		{"tag: unknown type (meta-schema)", func(tagBadType) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagBadType.S: type: value must be one of 'array', 'boolean'"},
		{"tag: bad pattern (meta-schema)", func(tagBadPattern) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagBadPattern.S: pattern: '(' is not valid regex"},
		{"tag: uniqueItems=false", func(tagUniqueFalse) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagUniqueFalse.L: jsonschema tag uniqueItems=false: want true"},
		{"tag: nested field", func(tagNested) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagNested.Inner.Name: jsonschema tag maxLength=-1: want a non-negative integer"},
		{"tag: bounds in a slice element", func(tagInSlice) error { return nil }, agnara.CapabilityOptions{Name: "x"}, "input tagInSlice.Items[].Code: minLength: minLength 4 is greater than maxLength 2"},
		{"tags that are fine", func(tagsThatAreFine) (tagsThatAreFine, error) { return tagsThatAreFine{}, nil }, agnara.CapabilityOptions{Name: "x"}, ""},
		{"anonymous input struct is fine", func(struct {
			T string `json:"t"`
		}) error {
			return nil
		}, agnara.CapabilityOptions{Name: "x"}, ""},
		{"output channel", func() (chan int, error) { return nil, nil }, agnara.CapabilityOptions{Name: "x"}, "output chan int: chan int values cannot be represented in JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := di.NewRegistry()
			if tt.name == "cycle" {
				di.Provide(reg, func(*Cycle2) *Cycle1 { return nil })
				di.Provide(reg, func(*Cycle1) *Cycle2 { return nil })
			}
			app := agnara.New("app", &agnara.Options{Dependencies: reg})
			opts := tt.opts
			site := here()
			app.Capability(tt.fn, &opts)
			site = lineAfter(site) // the registration is on the next line
			_, err := execution.Compile(app)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Compile = %v, want success", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Compile succeeded, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to contain %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), site) {
				t.Errorf("error = %v\nwant it to name the registration site %s", err, site)
			}
		})
	}
}

func TestRegisteringAfterCompileIsAnError(t *testing.T) {
	app := agnara.New("app", nil)
	app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "early"})
	plans, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	site := lineAfter(here())
	app.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "late"})
	if _, ok := plans.Lookup("app.late"); ok {
		t.Error("a capability registered after compile has a plan")
	}
	_, err = execution.Compile(app)
	if !errors.Is(err, agnara.ErrFrozen) || !strings.Contains(err.Error(), site) {
		t.Errorf("second Compile = %v, want ErrFrozen at %s", err, site)
	}
}

func TestCompileIsIdempotent(t *testing.T) {
	var built int
	type Clock struct{}
	reg := di.NewRegistry()
	di.Provide(reg, func() *Clock { built++; return &Clock{} })
	app := agnara.New("app", &agnara.Options{Dependencies: reg})
	cap := app.Capability(func(ctx context.Context, in GetUserInput, c *Clock) (User, error) { return User{}, nil },
		&agnara.CapabilityOptions{Name: "get", Description: "d"})
	a, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	b, err := execution.Compile(app)
	if err != nil {
		t.Fatal(err)
	}
	pa, _ := a.Plan(cap)
	pb, _ := b.Plan(cap)
	if string(pa.InputSchema()) != string(pb.InputSchema()) || string(pa.OutputSchema()) != string(pb.OutputSchema()) {
		t.Error("compiling twice gave different schemas")
	}
	invokeOK(t, pa, &execution.Invocation{Arguments: json.RawMessage(`{"id":"x"}`)})
	invokeOK(t, pb, &execution.Invocation{Arguments: json.RawMessage(`{"id":"x"}`)})
	if built != 1 {
		t.Errorf("singleton built %d times across two compiles, want 1", built)
	}
	if len(a.All()) != 1 || a.All()[0].Identity() != "app.get" || a.All()[0].Capability().App() != app {
		t.Errorf("All = %v", a.All())
	}
}

func TestPlanAccessorsReturnCopies(t *testing.T) {
	app := agnara.New("app", nil)
	cap := app.Capability(func(in GetUserInput) (User, error) { return User{}, nil }, &agnara.CapabilityOptions{
		Name: "get", Title: "Get", Description: "Get a user.", Scopes: []string{"users:read"},
		Annotations: agnara.ReadOnly, Confirm: "Sure?",
	})
	p := compileOne(t, app, cap)
	in, out, scopes := p.InputSchema(), p.OutputSchema(), p.Scopes()
	in[0], out[0], scopes[0] = 'X', 'X', "X"
	if p.InputSchema()[0] != '{' || p.OutputSchema()[0] != '{' || p.Scopes()[0] != "users:read" {
		t.Error("mutating what an accessor returned changed the plan")
	}
	o := p.Capability().Options()
	if p.Identity() != "app.get" || o.Name != "get" || o.Title != "Get" || o.Description != "Get a user." ||
		p.Annotations() != agnara.ReadOnly || o.Confirm != "Sure?" || o.Timeout != 0 || p.Capability() != cap || p.String() != "app.get" {
		t.Errorf("accessors disagree with the registration: %+v", p)
	}
}

func TestCheckedTagsArePublished(t *testing.T) {
	app := agnara.New("app", nil)
	c := app.Capability(func(tagsThatAreFine) error { return nil }, &agnara.CapabilityOptions{Name: "x"})
	schema := string(compileOne(t, app, c).InputSchema())
	for _, want := range []string{
		`"description":"An, escaped comma"`, `"minLength":1,"maxLength":5,"pattern":"^[a-z]+$"`, `"enum":["a","b"]`,
		`"minimum":-5,"exclusiveMinimum":-6,"maximum":5,"multipleOf":0.5`, `"minItems":0,"maxItems":2,"uniqueItems":true`,
	} {
		if !strings.Contains(schema, want) {
			t.Errorf("schema %s\ndoes not contain %s", schema, want)
		}
	}
}

// A tag whose value is wrong writes a keyword the derived schema's own
// check refuses too (multipleOf=0): the mistake is reported once, as the
// tag's. Every
// other problem of the struct is reported beside it, each on its own.
func TestTagMistakesReportedOnceEach(t *testing.T) {
	type in struct {
		Step  float64 `json:"step" jsonschema:"multipleOf=0"`
		Range int     `json:"range" jsonschema:"minimum=5,maximum=2"`
		Typo  string  `json:"typo" jsonschema:"patern=x"`
	}
	app := agnara.New("app", nil)
	app.Capability(func(in) error { return nil }, &agnara.CapabilityOptions{Name: "x"})
	_, err := execution.Compile(app)
	if err == nil {
		t.Fatal("Compile succeeded")
	}
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		msg := e.Error()
		got = append(got, msg[strings.Index(msg, "app.x: ")+len("app.x: "):])
	}
	want := []string{
		"input in.Step: jsonschema tag multipleOf=0: want a number greater than 0",
		`input in.Typo: unknown jsonschema tag key "patern" (did you mean "pattern"?)`,
		"input in.Range: minimum: minimum 5 is greater than maximum 2: no value satisfies both",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mistakes (-want +got):\n%s", diff)
	}
}
