package container_test

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/registry"
)

// Types the tests build. Each is a distinct key in a registry.
type (
	A struct{ ID int }
	B struct {
		A  *A
		ID int
	}
	C struct {
		B  *B
		ID int
	}
	D struct{ ID int }
	// Out is a type no test provides.
	Out struct{}
)

type ctxKey struct{}

// events is a concurrency-safe log of what constructors and cleanups did.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, s)
}

func (e *events) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.list)
}

// nextLine returns the source line just after the line that calls it, so a
// test can compute the file:line a registration on that next line must
// report.
func nextLine() int {
	_, _, line, ok := runtime.Caller(1)
	if !ok {
		panic("runtime.Caller failed")
	}
	return line + 1
}

// at is the "file:line: " prefix of a diagnostic for a registration made in
// file at line.
func at(file string, line int) string { return fmt.Sprintf("%s:%d: ", file, line) }

// containerOf builds the container of reg, as an application does when it
// is first compiled (agnara's freeze).
func containerOf(reg *di.Registry) (*container.Container, error) {
	return container.New(registry.Dependencies(reg))
}

// newContainer builds a container that must have no registration mistakes
// and closes it when the test ends.
func newContainer(t *testing.T, reg *di.Registry) *container.Container {
	t.Helper()
	c, err := containerOf(reg)
	if err != nil {
		t.Fatalf("container.New: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func newRecipe(t *testing.T, c *container.Container, types ...reflect.Type) *container.Recipe {
	t.Helper()
	r, err := c.Recipe(types)
	if err != nil {
		t.Fatalf("Recipe(%v): %v", types, err)
	}
	if r.Len() != len(types) {
		t.Fatalf("Recipe(%v).Len() = %d, want %d", types, r.Len(), len(types))
	}
	return r
}

// mustResolve resolves r and fails the test on error. The caller owns the
// returned release.
func mustResolve(t *testing.T, r *container.Recipe, ctx context.Context) ([]reflect.Value, func() error) {
	t.Helper()
	dst := make([]reflect.Value, r.Len())
	release, err := r.Resolve(ctx, dst)
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if release == nil {
		t.Fatal("Resolve returned a nil release")
	}
	return dst, release
}

// resolveOne resolves a single T from c and returns it; the release runs at
// test end.
func resolveOne[T any](t *testing.T, c *container.Container, ctx context.Context) T {
	t.Helper()
	r := newRecipe(t, c, reflect.TypeFor[T]())
	dst, release := mustResolve(t, r, ctx)
	t.Cleanup(func() { _ = release() })
	v, ok := dst[0].Interface().(T)
	if !ok {
		t.Fatalf("resolved %v, want a %v", dst[0].Type(), reflect.TypeFor[T]())
	}
	return v
}

// tryResolve resolves r and returns the error; on success it releases at
// once.
func tryResolve(t *testing.T, r *container.Recipe, ctx context.Context) error {
	t.Helper()
	dst := make([]reflect.Value, r.Len())
	release, err := r.Resolve(ctx, dst)
	if release == nil {
		t.Fatal("Resolve returned a nil release")
	}
	if err == nil {
		if rerr := release(); rerr != nil {
			t.Errorf("release: %v", rerr)
		}
	}
	return err
}

// unwrapAll returns the errors joined in err (or err itself).
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// registration registers a constructor with one of the two lifetimes and
// returns the line of the registration call.
type registration struct {
	name    string
	life    container.Lifetime
	provide func(reg *di.Registry, ctor any) int
}

var registrations = []registration{
	{"Provide", container.Singleton, func(reg *di.Registry, ctor any) int {
		line := nextLine()
		di.Provide(reg, ctor)
		return line
	}},
	{"ProvidePerInvocation", container.PerInvocation, func(reg *di.Registry, ctor any) int {
		line := nextLine()
		di.ProvidePerInvocation(reg, ctor)
		return line
	}},
}
