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
		{"output schema on struct output", func() (User, error) { return User{}, nil }, agnara.CapabilityOptions{Name: "x", OutputSchema: json.RawMessage(`{"type":"object"}`)}, "OutputSchema is only for capabilities whose output is json.RawMessage"},
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
		{"anonymous input struct is fine", func(struct{ T string }) error { return nil }, agnara.CapabilityOptions{Name: "x"}, ""},
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
	if len(a.All()) != 1 || a.All()[0].Identity() != "app.get" || a.App() != app {
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
	if p.Identity() != "app.get" || p.Name() != "get" || p.Title() != "Get" || p.Description() != "Get a user." ||
		p.Annotations() != agnara.ReadOnly || p.Confirm() != "Sure?" || p.Timeout() != 0 || p.Capability() != cap || p.String() != "app.get" {
		t.Errorf("accessors disagree with the registration: %+v", p)
	}
}
