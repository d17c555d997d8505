package container

import (
	"context"
	"errors"
	"reflect"
)

// Recipe resolves a fixed list of types against a [Container]. It is built
// once, at compile time, by [Container.Recipe], after the whole dependency
// graph was checked; resolving it does no lookups by type.
//
// A Recipe is immutable and safe for concurrent use.
type Recipe struct {
	c     *Container
	steps []step   // per-invocation constructions, dependencies first
	outs  []source // where each requested type comes from
}

// source names where one value comes from: a singleton cell, or the result of
// one per-invocation step.
type source struct {
	cell *cell
	step int
}

type step struct {
	p    *provider
	args []source
}

// Recipe returns a recipe for types, or an error naming the first type that
// cannot be built (no provider, a cycle, or a singleton that depends on a
// per-invocation value).
func (c *Container) Recipe(types []reflect.Type) (*Recipe, error) {
	r := &Recipe{c: c}
	index := map[*provider]int{}
	var add func(t reflect.Type) (source, error)
	add = func(t reflect.Type) (source, error) {
		p := c.providers[t]
		if p == nil {
			return source{}, &missingError{t}
		}
		if err := c.verdict[p]; err != nil {
			return source{}, err
		}
		if p.lifetime == Singleton {
			return source{cell: c.cells[p]}, nil
		}
		if i, ok := index[p]; ok {
			return source{step: i}, nil
		}
		st := step{p: p}
		for _, in := range p.in {
			src, err := add(in)
			if err != nil {
				return source{}, err
			}
			st.args = append(st.args, src)
		}
		index[p] = len(r.steps)
		r.steps = append(r.steps, st)
		return source{step: index[p]}, nil
	}
	for _, t := range types {
		src, err := add(t)
		if err != nil {
			return nil, err
		}
		r.outs = append(r.outs, src)
	}
	return r, nil
}

type missingError struct{ t reflect.Type }

func (e *missingError) Error() string { return "no provider for " + e.t.String() }

// Resolve builds the recipe's values for one invocation, in the order of the
// types the recipe was made for, and writes them into dst, which must have
// room for them. The returned release function runs the cleanups of the
// per-invocation values in reverse order of construction; it must be called
// exactly once on every path, and is never nil. When Resolve fails, values
// built so far are already cleaned up. A panicking constructor also has the
// values built before it cleaned up before the panic continues.
func (r *Recipe) Resolve(ctx context.Context, dst []reflect.Value) (release func() error, err error) {
	if len(r.steps) == 0 {
		for i, src := range r.outs {
			v, err := r.c.get(ctx, src.cell)
			if err != nil {
				return noop, err
			}
			dst[i] = v
		}
		return noop, nil
	}
	if r.c.closed.Load() {
		return noop, ErrClosed
	}
	built := make([]reflect.Value, len(r.steps))
	var cleanups []func()
	cleanAll := func() error { return runCleanups(cleanups) }
	ok := false
	defer func() {
		// On failure (and panic), what was built so far is cleaned up here;
		// the caller gets a release that does nothing.
		if !ok {
			if cerr := cleanAll(); cerr != nil {
				err = errors.Join(err, cerr)
			}
			release = noop
		}
	}()
	args := make([]reflect.Value, 0, 4)
	for i, st := range r.steps {
		args = args[:0]
		if st.p.takesCtx {
			args = append(args, reflect.ValueOf(ctx))
		}
		for _, src := range st.args {
			v, err := r.value(ctx, src, built)
			if err != nil {
				return noop, err
			}
			args = append(args, v)
		}
		v, cleanup, err := call(st.p, args)
		if err != nil {
			return noop, err
		}
		if cleanup != nil {
			cleanups = append(cleanups, cleanup)
		}
		built[i] = v
	}
	for i, src := range r.outs {
		v, err := r.value(ctx, src, built)
		if err != nil {
			return noop, err
		}
		dst[i] = v
	}
	ok = true
	return cleanAll, nil
}

func (r *Recipe) value(ctx context.Context, src source, built []reflect.Value) (reflect.Value, error) {
	if src.cell != nil {
		return r.c.get(ctx, src.cell)
	}
	return built[src.step], nil
}

// Len returns the number of values the recipe resolves.
func (r *Recipe) Len() int { return len(r.outs) }

func noop() error { return nil }
