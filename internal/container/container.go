package container

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agnara-go/agnara/internal/site"
)

// ErrClosed is returned when a value is resolved from a closed [Container]
// (di.ErrClosed is this value).
var ErrClosed = errors.New("di: container is closed")

// Container builds and owns the values of one [Registry]. An application
// creates it once (agnara's freeze), freezing the registry it is built
// from, and closes it to release singletons (agnara.App.Close).
//
// A Container is safe for concurrent use.
type Container struct {
	providers map[reflect.Type]*provider
	cells     map[*provider]*cell
	verdict   map[*provider]error // graph check result per provider, set by New

	mu       sync.Mutex
	cleanups []func() // singleton cleanups, in construction order
	closed   atomic.Bool
}

// cell holds one singleton.
type cell struct {
	p     *provider
	deps  []*cell
	mu    sync.Mutex
	built atomic.Bool
	value reflect.Value
}

// New freezes r and returns a container for it, together with every
// registration mistake recorded in r. A nil registry yields an empty
// container. The container is usable even when an error is returned, but
// plans compiled against it will report the same mistakes.
func New(r *Registry) (*Container, error) {
	c := &Container{providers: map[reflect.Type]*provider{}, cells: map[*provider]*cell{}, verdict: map[*provider]error{}}
	if r == nil {
		return c, nil
	}
	r.mu.Lock()
	r.frozen = true
	for t, p := range r.providers {
		c.providers[t] = p
	}
	errs := slices.Clone(r.errs)
	order := slices.Clone(r.order)
	r.mu.Unlock()

	for _, p := range order {
		if p.lifetime == Singleton {
			c.cells[p] = &cell{p: p}
		}
	}
	// Check every provider's own graph once, so that mistakes in providers
	// no capability uses yet are still reported.
	for _, p := range order {
		if err := c.check(p, nil); err != nil {
			errs = append(errs, err)
		}
	}
	for _, cl := range c.cells {
		for _, in := range cl.p.in {
			if dp := c.providers[in]; dp != nil {
				cl.deps = append(cl.deps, c.cells[dp])
			}
		}
	}
	return c, errors.Join(dedupe(errs)...)
}

// check walks the dependency graph below p, reporting missing providers,
// cycles and singletons that depend on per-invocation values.
//
// Each provider's verdict is remembered, so that the whole graph is checked
// in time linear in its size, and recipes reuse the verdicts.
func (c *Container) check(p *provider, path []*provider) error {
	if err, done := c.verdict[p]; done {
		return err
	}
	err := c.checkOnce(p, path)
	if !slices.Contains(path, p) {
		c.verdict[p] = err
	}
	return err
}

func (c *Container) checkOnce(p *provider, path []*provider) error {
	if slices.Contains(path, p) {
		// Report the cycle the same way whichever member it was found
		// from, starting at its least type name, so it is reported once.
		cycle := path[slices.Index(path, p):]
		start := 0
		for i, q := range cycle {
			if q.out.String() < cycle[start].out.String() {
				start = i
			}
		}
		names := make([]string, 0, len(cycle)+1)
		for i := range cycle {
			names = append(names, cycle[(start+i)%len(cycle)].out.String())
		}
		names = append(names, names[0])
		first := cycle[start]
		return site.Errorf(first.site, first.name, "dependency cycle: %s", strings.Join(names, " -> "))
	}
	path = append(path, p)
	for _, in := range p.in {
		dp := c.providers[in]
		if dp == nil {
			return site.Errorf(p.site, p.name, "no provider for %s", in)
		}
		if p.lifetime == Singleton && dp.lifetime == PerInvocation {
			return site.Errorf(p.site, p.name, "singleton %s depends on per-invocation %s", p.out, in)
		}
		if err := c.check(dp, path); err != nil {
			return err
		}
	}
	return nil
}

func dedupe(errs []error) []error {
	seen := make(map[string]bool, len(errs))
	out := errs[:0]
	for _, err := range errs {
		if !seen[err.Error()] {
			seen[err.Error()] = true
			out = append(out, err)
		}
	}
	return out
}

// Close runs the cleanups of every singleton built so far, in reverse order of
// construction, and makes later resolutions fail with [ErrClosed]. Close is
// idempotent. A cleanup that panics is reported as an error after the others
// ran.
func (c *Container) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.mu.Lock()
	cleanups := c.cleanups
	c.cleanups = nil
	c.mu.Unlock()
	return runCleanups(cleanups)
}

func runCleanups(cleanups []func()) error {
	var errs []error
	for i := len(cleanups) - 1; i >= 0; i-- {
		func() {
			defer func() {
				if r := recover(); r != nil {
					errs = append(errs, fmt.Errorf("di: cleanup panicked: %v", r))
				}
			}()
			cleanups[i]()
		}()
	}
	return errors.Join(errs...)
}

// get returns the singleton of cl, building it (and its singleton
// dependencies) on first use.
func (c *Container) get(ctx context.Context, cl *cell) (reflect.Value, error) {
	if c.closed.Load() {
		return reflect.Value{}, ErrClosed
	}
	if cl.built.Load() {
		return cl.value, nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.built.Load() {
		return cl.value, nil
	}
	if cl.p.fn.IsValid() {
		args := make([]reflect.Value, 0, len(cl.deps)+1)
		if cl.p.takesCtx {
			// A singleton outlives the invocation that first needed it,
			// so it must not inherit that invocation's cancellation.
			args = append(args, reflect.ValueOf(context.WithoutCancel(ctx)))
		}
		for _, d := range cl.deps {
			v, err := c.get(ctx, d)
			if err != nil {
				return reflect.Value{}, err
			}
			args = append(args, v)
		}
		v, cleanup, err := call(cl.p, args)
		if err != nil {
			return reflect.Value{}, err
		}
		if cleanup != nil {
			c.mu.Lock()
			closed := c.closed.Load()
			if !closed {
				c.cleanups = append(c.cleanups, cleanup)
			}
			c.mu.Unlock()
			if closed {
				cleanup()
				return reflect.Value{}, ErrClosed
			}
		}
		cl.value = v
	} else {
		cl.value = cl.p.value
	}
	cl.built.Store(true)
	return cl.value, nil
}

// ProviderError reports that a constructor failed. Its message names the
// constructor and the type; the constructor's own error is available through
// errors.Unwrap and must be treated as internal (it is never shown to a
// caller by agnara).
type ProviderError struct {
	Type     reflect.Type
	Provider string
	Err      error
}

// Error names the constructor, the type and the constructor's error.
func (e *ProviderError) Error() string {
	return fmt.Sprintf("di: constructing %s with %s: %v", e.Type, e.Provider, e.Err)
}

// Unwrap returns the constructor's own error.
func (e *ProviderError) Unwrap() error { return e.Err }

// call invokes p's constructor with args.
func call(p *provider, args []reflect.Value) (reflect.Value, func(), error) {
	out := p.fn.Call(args)
	var cleanup func()
	if p.cleanup {
		cleanup, _ = out[1].Interface().(func())
	}
	if p.fails {
		if err, _ := out[len(out)-1].Interface().(error); err != nil {
			if cleanup != nil {
				cleanup()
			}
			return reflect.Value{}, nil, &ProviderError{Type: p.out, Provider: p.name, Err: err}
		}
	}
	return out[0], cleanup, nil
}
