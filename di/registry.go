package di

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/agnara-go/agnara/internal/site"
)

// lifetime says how long a constructed value lives. [Provide] and
// [ProvidePerInvocation] choose it; nothing outside the package names it.
type lifetime uint8

const (
	// singleton values are built once per [Container] and live until it
	// closes.
	singleton lifetime = iota
	// perInvocation values are built for one invocation and cleaned up when
	// it ends.
	perInvocation
)

// String returns "singleton" or "per-invocation".
func (l lifetime) String() string {
	if l == perInvocation {
		return "per-invocation"
	}
	return "singleton"
}

// ErrFrozen is reported for a definition made after what it belongs to was
// compiled: here, a provider added to a registry that a [Container] was
// already built from (building a container compiles its registry). It is
// the one frozen error of agnara-go: agnara.ErrFrozen (a capability
// registered after its application was compiled) and mcpexpose.ErrFrozen (a
// tool, resource or prompt declared after its exposure was compiled) are
// this same value, so errors.Is(err, ErrFrozen) holds for any late
// definition, whichever of the three packages it names.
var ErrFrozen = errors.New("agnara: frozen: declared after compile")

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
	cleanupType = reflect.TypeFor[func()]()
)

// Registry maps types to the constructors that build them. Add providers
// while the application is being defined; build a [Container] once
// definitions are complete. Registration mistakes are collected and reported
// together by [NewContainer] (and therefore by plan compilation), each with the
// file:line of the registration.
//
// A Registry is safe for concurrent use.
type Registry struct {
	mu        sync.Mutex
	providers map[reflect.Type]*provider
	order     []*provider
	errs      []error
	frozen    bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{providers: make(map[reflect.Type]*provider)}
}

type provider struct {
	out      reflect.Type
	fn       reflect.Value // invalid for supplied values
	value    reflect.Value // supplied value
	in       []reflect.Type
	takesCtx bool
	cleanup  bool
	fails    bool
	life     lifetime
	site     site.Site
	name     string
}

// Provide registers constructor as the singleton provider of the type it
// returns. See the package documentation for the accepted shapes.
func Provide(r *Registry, constructor any) {
	r.add(site.Caller(1), constructor, singleton)
}

// ProvidePerInvocation registers constructor as the provider of the type it
// returns, building a fresh value for every invocation that needs one.
func ProvidePerInvocation(r *Registry, constructor any) {
	r.add(site.Caller(1), constructor, perInvocation)
}

// Supply registers value as the singleton of type T. T is usually inferred;
// name it to supply an interface: di.Supply[Clock](r, systemClock{}).
// Supplied values are never cleaned up by the container: their owner closes
// them.
func Supply[T any](r *Registry, value T) {
	s := site.Caller(1)
	t := reflect.TypeFor[T]()
	p := &provider{out: t, value: reflect.ValueOf(&value).Elem(), life: singleton, site: s, name: "supplied " + t.String()}
	r.register(p)
}

func (r *Registry) add(s site.Site, constructor any, life lifetime) {
	p, err := newProvider(s, constructor, life)
	if err != nil {
		r.fail(err)
		return
	}
	r.register(p)
}

func (r *Registry) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
}

func (r *Registry) register(p *provider) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.frozen:
		r.errs = append(r.errs, &site.Error{Site: p.site, Subject: p.name, Err: ErrFrozen})
	case r.providers[p.out] != nil:
		prev := r.providers[p.out]
		r.errs = append(r.errs, site.Errorf(p.site, p.name, "%s already has a provider (%s at %s)", p.out, prev.name, prev.site))
	default:
		r.providers[p.out] = p
		r.order = append(r.order, p)
	}
}

func newProvider(s site.Site, constructor any, life lifetime) (*provider, error) {
	fn := reflect.ValueOf(constructor)
	if constructor == nil || fn.Kind() != reflect.Func {
		return nil, site.Errorf(s, "provider", "want a constructor function, got %T", constructor)
	}
	if fn.IsNil() {
		return nil, site.Errorf(s, "provider", "constructor is a nil function")
	}
	t := fn.Type()
	name := funcName(fn)
	if t.IsVariadic() {
		return nil, site.Errorf(s, name, "a constructor cannot be variadic")
	}
	p := &provider{fn: fn, life: life, site: s, name: name}

	// Results: T [, func()] [, error].
	n := t.NumOut()
	if n == 0 || n > 3 {
		return nil, site.Errorf(s, name, "a constructor returns T, (T, error), (T, func()) or (T, func(), error); got %s", t)
	}
	p.out = t.Out(0)
	rest := make([]reflect.Type, 0, 2)
	for i := 1; i < n; i++ {
		rest = append(rest, t.Out(i))
	}
	if len(rest) > 0 && rest[len(rest)-1] == errorType {
		p.fails = true
		rest = rest[:len(rest)-1]
	}
	if len(rest) == 1 && rest[0] == cleanupType {
		p.cleanup = true
		rest = rest[:0]
	}
	if len(rest) != 0 {
		return nil, site.Errorf(s, name, "a constructor returns T, (T, error), (T, func()) or (T, func(), error); got %s", t)
	}
	if p.out == errorType || p.out == contextType || p.out == cleanupType {
		return nil, site.Errorf(s, name, "a constructor cannot provide %s", p.out)
	}

	// Parameters: [context.Context,] dependencies...
	for i := 0; i < t.NumIn(); i++ {
		in := t.In(i)
		if in == contextType {
			if i != 0 {
				return nil, site.Errorf(s, name, "context.Context must be the first parameter")
			}
			p.takesCtx = true
			continue
		}
		if in == p.out {
			return nil, site.Errorf(s, name, "%s depends on itself", p.out)
		}
		p.in = append(p.in, in)
	}
	return p, nil
}

func funcName(fn reflect.Value) string {
	if f := runtime.FuncForPC(fn.Pointer()); f != nil {
		name := f.Name()
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		return name
	}
	return fmt.Sprint(fn.Type())
}
