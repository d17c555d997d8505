package execution_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

type EchoInput struct {
	Message string `json:"message"`
}

type EchoOutput struct {
	Message string `json:"message"`
}

type Config struct{ Prefix string }

type Session struct{ cfg *Config }

// BenchmarkInvoke measures one invocation through the whole pipeline (scope
// guard, validation, strict decoding, dependencies, handler, log check) with
// a discarding logger.
func BenchmarkInvoke(b *testing.B) {
	reg := di.NewRegistry()
	di.Provide(reg, func() *Config { return &Config{Prefix: "> "} })
	di.ProvidePerInvocation(reg, func(c *Config) (*Session, func()) { return &Session{cfg: c}, func() {} })
	app := agnara.New("bench", &agnara.Options{Dependencies: reg})
	trivial := app.Capability(func(ctx context.Context, in EchoInput) (EchoOutput, error) {
		return EchoOutput(in), nil
	}, &agnara.CapabilityOptions{Name: "echo", Scopes: []string{"echo"}})
	twoDeps := app.Capability(func(ctx context.Context, in EchoInput, c *Config, s *Session) (EchoOutput, error) {
		return EchoOutput{Message: c.Prefix + in.Message}, nil
	}, &agnara.CapabilityOptions{Name: "echo_deps", Scopes: []string{"echo"}})
	noInput := app.Capability(func(ctx context.Context) error { return nil }, &agnara.CapabilityOptions{Name: "ping"})
	plans, err := execution.Compile(app)
	if err != nil {
		b.Fatal(err)
	}
	inv := &execution.Invocation{
		Principal: policy.NewPrincipal("bench", []string{"echo"}),
		Arguments: json.RawMessage(`{"message":"hello, world"}`),
	}
	for _, bc := range []struct {
		name string
		cap  *agnara.Capability
		inv  *execution.Invocation
	}{
		{"trivial", trivial, inv},
		{"two_deps", twoDeps, inv},
		{"no_input", noInput, &execution.Invocation{}},
	} {
		p, _ := plans.Plan(bc.cap)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				out, err := p.Invoke(ctx, bc.inv)
				if err != nil {
					b.Fatal(err)
				}
				if _, ok := out.(execution.Success); !ok {
					b.Fatal(out)
				}
			}
		})
	}
}

// BenchmarkInvokeObserved is BenchmarkInvoke's two_deps case with an
// observer that does nothing: what observing the stages costs beside it.
// Without an observer it costs nothing (BenchmarkInvoke).
func BenchmarkInvokeObserved(b *testing.B) {
	reg := di.NewRegistry()
	di.Provide(reg, func() *Config { return &Config{Prefix: "> "} })
	di.ProvidePerInvocation(reg, func(c *Config) (*Session, func()) { return &Session{cfg: c}, func() {} })
	app := agnara.New("bench", &agnara.Options{Dependencies: reg, Observer: nopObserver{}})
	twoDeps := app.Capability(func(ctx context.Context, in EchoInput, c *Config, s *Session) (EchoOutput, error) {
		return EchoOutput{Message: c.Prefix + in.Message}, nil
	}, &agnara.CapabilityOptions{Name: "echo_deps", Scopes: []string{"echo"}})
	plans, err := execution.Compile(app)
	if err != nil {
		b.Fatal(err)
	}
	p, _ := plans.Plan(twoDeps)
	inv := &execution.Invocation{
		Principal: policy.NewPrincipal("bench", []string{"echo"}),
		Arguments: json.RawMessage(`{"message":"hello, world"}`),
	}
	b.ReportAllocs()
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Invoke(ctx, inv); err != nil {
			b.Fatal(err)
		}
	}
}

// nopObserver observes nothing, at the least cost an observer can have.
type nopObserver struct{}

func (nopObserver) Request(ctx context.Context, _ agnara.RequestInfo) (context.Context, func(agnara.Label, error)) {
	return ctx, nopRequestEnd
}

func (nopObserver) Stage(ctx context.Context, _ string, _ agnara.Stage) (context.Context, func(error)) {
	return ctx, nopStageEnd
}

func nopRequestEnd(agnara.Label, error) {}
func nopStageEnd(error)                 {}

// BenchmarkCompile compiles applications of 100, 1,000 and 10,000
// capabilities, each with a dependency and a scope, to show that
// compilation grows linearly. "shared" capabilities share one input type (as
// capabilities without input, or over one domain type, do); "distinct" ones
// each have their own input type, built with reflect.StructOf, so no schema
// is reused.
func BenchmarkCompile(b *testing.B) {
	for _, kind := range []string{"shared", "distinct"} {
		for _, n := range []int{100, 1000, 10000} {
			if kind == "distinct" && n == 10000 && testing.Short() {
				continue
			}
			fns := make([]any, n)
			for i := range fns {
				fns[i] = echoFunc(kind == "distinct", i)
			}
			b.Run(fmt.Sprintf("%s/n=%d", kind, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					reg := di.NewRegistry()
					di.Provide(reg, func() *Config { return &Config{} })
					app := agnara.New("bench", &agnara.Options{Dependencies: reg})
					for i, fn := range fns {
						app.Capability(fn, &agnara.CapabilityOptions{Name: fmt.Sprintf("c%d", i), Scopes: []string{"s"}})
					}
					if _, err := execution.Compile(app); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/capability")
			})
		}
	}
}

// echoFunc returns a capability function func(context.Context, In, *Config)
// (EchoOutput, error); with distinct, In is a struct type of its own.
func echoFunc(distinct bool, i int) any {
	if !distinct {
		return func(ctx context.Context, in EchoInput, c *Config) (EchoOutput, error) { return EchoOutput(in), nil }
	}
	in := reflect.StructOf([]reflect.StructField{
		{Name: "Message", Type: reflect.TypeFor[string](), Tag: `json:"message"`},
		{Name: fmt.Sprintf("Field%d", i), Type: reflect.TypeFor[int](), Tag: reflect.StructTag(fmt.Sprintf(`json:"field%d,omitempty"`, i))},
	})
	ft := reflect.FuncOf([]reflect.Type{reflect.TypeFor[context.Context](), in, reflect.TypeFor[*Config]()},
		[]reflect.Type{reflect.TypeFor[EchoOutput](), reflect.TypeFor[error]()}, false)
	return reflect.MakeFunc(ft, func(args []reflect.Value) []reflect.Value {
		return []reflect.Value{reflect.ValueOf(EchoOutput{}), reflect.Zero(reflect.TypeFor[error]())}
	}).Interface()
}
