package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

type GreetInput struct {
	Name string `json:"name" jsonschema:"minLength=1" jsonschema_description:"Who to greet."`
}

type Greeting struct {
	Text string `json:"text"`
}

// Greeter is a dependency, provided by the application's registry.
type Greeter struct{ Salutation string }

func Greet(ctx context.Context, in GreetInput, g *Greeter) (Greeting, error) {
	return Greeting{Text: g.Salutation + ", " + in.Name + "!"}, nil
}

// Registering a function as a capability and compiling the application.
// Compile derives the closed input schema from GreetInput and checks that
// *Greeter has a provider.
func ExampleCompile() {
	deps := di.NewRegistry()
	di.Provide(deps, func() *Greeter { return &Greeter{Salutation: "Hello"} })

	app := agnara.New("greeter", &agnara.Options{Dependencies: deps})
	app.Capability(Greet, &agnara.CapabilityOptions{
		Description: "Greet someone by name.",
		Scopes:      []string{"greet"},
		Annotations: agnara.ReadOnly | agnara.Idempotent,
	})

	plans, err := execution.Compile(app)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range plans.All() {
		fmt.Println(p.Identity(), p.Scopes(), p.Annotations())
		fmt.Println(string(p.InputSchema()))
		fmt.Println(string(p.OutputSchema()))
	}
	// Output:
	// greeter.greet [greet] read-only|idempotent
	// {"type":"object","properties":{"name":{"type":"string","description":"Who to greet.","minLength":1}},"required":["name"],"additionalProperties":false}
	// {"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}
}

// Mistakes are collected and reported together, each with the file:line of
// the registration that made it.
func ExampleCompile_mistakes() {
	app := agnara.New("greeter", nil)
	app.Capability(Greet, nil) // no provider for *Greeter
	app.Capability(func(ctx context.Context) (int, string) { return 0, "" }, &agnara.CapabilityOptions{Name: "count"})

	_, err := execution.Compile(app)
	fmt.Println(err)
	// Output:
	// execution/example_test.go:64: greeter.greet: parameter 3 (*execution_test.Greeter): no provider for *execution_test.Greeter
	// execution/example_test.go:65: greeter.count: second result string: want error
}

// Invoking a plan: the arguments are validated against the input schema
// before anything runs, and every violation is reported at once.
func ExamplePlan_Invoke() {
	deps := di.NewRegistry()
	di.Provide(deps, func() *Greeter { return &Greeter{Salutation: "Hello"} })
	app := agnara.New("greeter", &agnara.Options{Dependencies: deps})
	greet := app.Capability(Greet, &agnara.CapabilityOptions{Scopes: []string{"greet"}})
	plans, err := execution.Compile(app)
	if err != nil {
		panic(err)
	}
	p, _ := plans.Plan(greet)
	caller := policy.NewPrincipal("user-1", []string{"greet"})

	for _, args := range []string{
		`{"name":"Ada"}`,
		`{"name":"","nickname":"A"}`,
	} {
		out, err := p.Invoke(context.Background(), &execution.Invocation{
			Principal: caller,
			Arguments: json.RawMessage(args),
		})
		if err != nil { // the caller went away
			fmt.Println(err)
			continue
		}
		switch o := out.(type) {
		case execution.Success:
			fmt.Printf("success: %+v\n", o.Value)
		case *execution.Failure:
			fmt.Println(o.Code, o.Message)
			for _, v := range o.Details["violations"].([]execution.Violation) {
				fmt.Printf("  %s: %s\n", v.Path, v.Message)
			}
		}
	}

	// A caller without the "greet" scope is refused before the input is
	// even looked at.
	out, _ := p.Invoke(context.Background(), &execution.Invocation{Arguments: json.RawMessage(`{}`)})
	fmt.Println(out.(*execution.Failure).Code)
	// Output:
	// success: {Text:Hello, Ada!}
	// invalid_input the arguments do not match the input schema (2 violations)
	//   /name: must not be empty
	//   /nickname: unknown field
	// forbidden
}

// A handler ends an invocation with a deliberate, caller-safe failure by
// returning one; any other error becomes an internal failure whose cause is
// logged, not shown.
func ExampleFail() {
	var mu sync.Mutex
	users := map[string]string{"1": "Ada"}
	app := agnara.New("users", nil)
	get := app.Capability(func(ctx context.Context, in struct {
		ID string `json:"id"`
	}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		name, ok := users[in.ID]
		if !ok {
			return "", execution.Fail(execution.NotFound, "no user with this id", map[string]any{"id": in.ID})
		}
		return name, nil
	}, &agnara.CapabilityOptions{Name: "get_user"})
	plans, _ := execution.Compile(app)
	p, _ := plans.Plan(get)

	out, _ := p.Invoke(context.Background(), &execution.Invocation{Arguments: json.RawMessage(`{"id":"2"}`)})
	f := out.(*execution.Failure)
	fmt.Println(f.Code, "-", f.Message, f.Details)
	// Output:
	// not_found - no user with this id map[id:2]
}
