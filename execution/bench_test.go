package execution_test

import (
	"context"
	"encoding/json"
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
