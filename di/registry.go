package di

import (
	"reflect"

	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
)

// ErrFrozen is reported for a definition made after what it belongs to was
// compiled: here, a provider added to a registry after an application
// using it was compiled (compiling an application freezes its registry).
// It is the one frozen error of agnara-go: agnara.ErrFrozen (a capability
// registered after its application was compiled) and mcpexpose.ErrFrozen
// (a tool, resource or prompt declared after its exposure was compiled)
// are this same value, so errors.Is(err, ErrFrozen) holds for any late
// definition, whichever of the three packages it names.
var ErrFrozen = container.ErrFrozen

// ErrClosed is the cause of a dependency that could not be resolved
// because the application was closed (agnara.App.Close): the invocation
// that needed it fails with internal_failure.
var ErrClosed = container.ErrClosed

// Registry maps types to the constructors that build them. Add providers
// while the application is being defined, and pass the registry in
// agnara.Options.Dependencies; the application builds its values from it.
// Registration mistakes are collected and reported together when the
// application is compiled, each with the file:line of the registration.
//
// A Registry is safe for concurrent use.
type Registry struct {
	c container.Registry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{}
}

func init() {
	registry.InstallDependencies(func(r *Registry) *container.Registry {
		if r == nil {
			return nil
		}
		return &r.c
	})
}

// Provide registers constructor as the singleton provider of the type it
// returns. See the package documentation for the accepted shapes.
func Provide(r *Registry, constructor any) {
	r.c.Add(site.Caller(1), constructor, container.Singleton)
}

// ProvidePerInvocation registers constructor as the provider of the type it
// returns, building a fresh value for every invocation that needs one.
func ProvidePerInvocation(r *Registry, constructor any) {
	r.c.Add(site.Caller(1), constructor, container.PerInvocation)
}

// Supply registers value as the singleton of type T. T is usually inferred;
// name it to supply an interface: di.Supply[Clock](r, systemClock{}).
// Supplied values are never cleaned up by the application: their owner
// closes them.
func Supply[T any](r *Registry, value T) {
	r.c.Supply(site.Caller(1), reflect.TypeFor[T](), reflect.ValueOf(&value).Elem())
}
