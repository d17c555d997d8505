// Package container is agnara's dependency engine: the providers a
// di.Registry records, and the [Container] an application builds from
// them once, at its first compile, to build and own the values at run
// time. Package di is the front door a service uses (NewRegistry,
// Provide, ProvidePerInvocation, Supply); package agnara owns the
// container (it builds it, execution resolves a [Recipe] per plan from
// it, and agnara.App.Close closes it), so none of this is part of the API
// (ADR 73).
//
// All reflection happens at registration and compile time; resolving a
// [Recipe] only calls the constructors.
package container

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

// Lifetime says how long a constructed value lives. di.Provide and
// di.ProvidePerInvocation choose it.
type Lifetime uint8

const (
	// Singleton values are built once per [Container] and live until it
	// closes.
	Singleton Lifetime = iota
	// PerInvocation values are built for one invocation and cleaned up when
	// it ends.
	PerInvocation
)

// String returns "singleton" or "per-invocation".
func (l Lifetime) String() string {
	if l == PerInvocation {
		return "per-invocation"
	}
	return "singleton"
}

// ErrFrozen is di.ErrFrozen, agnara.ErrFrozen and mcpexpose.ErrFrozen: the
// one frozen error of agnara-go, reported here for a provider added to a
// registry that a [Container] was already built from.
var ErrFrozen = errors.New("agnara: frozen: declared after compile")

var (
	contextType = reflect.TypeFor[context.Context]()
	errorType   = reflect.TypeFor[error]()
	cleanupType = reflect.TypeFor[func()]()
)

// Registry maps types to the constructors that build them. The zero value
// is an empty registry. Registration mistakes are collected and reported
// together by [New], each with the file:line of the registration.
//
// A Registry is safe for concurrent use; it must not be copied after first
// use.
type Registry struct {
	mu        sync.Mutex
	providers map[reflect.Type]*provider
	order     []*provider
	errs      []error
	frozen    bool
}

type provider struct {
	out      reflect.Type
	fn       reflect.Value // invalid for supplied values
	value    reflect.Value // supplied value
	in       []reflect.Type
	takesCtx bool
	cleanup  bool
	fails    bool
	lifetime Lifetime
	site     site.Site
	name     string
}

// Add registers constructor, made at s, as the provider of the type it
// returns, with lifetime life. A constructor of the wrong shape is a
// mistake [New] reports.
func (r *Registry) Add(s site.Site, constructor any, life Lifetime) {
	p, err := newProvider(s, constructor, life)
	if err != nil {
		r.fail(err)
		return
	}
	r.register(p)
}

// Supply registers value, made at s, as the singleton of type t. A
// container never cleans up a supplied value: its owner does.
func (r *Registry) Supply(s site.Site, t reflect.Type, value reflect.Value) {
	r.register(&provider{out: t, value: value, lifetime: Singleton, site: s, name: "supplied " + t.String()})
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
		if r.providers == nil {
			r.providers = make(map[reflect.Type]*provider)
		}
		r.providers[p.out] = p
		r.order = append(r.order, p)
	}
}

func newProvider(s site.Site, constructor any, life Lifetime) (*provider, error) {
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
	p := &provider{fn: fn, lifetime: life, site: s, name: name}

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
