package di_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/google/go-cmp/cmp"
)

// Out is what the shape tests construct.
type Out struct {
	FromCtx string
	Dep     *D
	N       int
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

// at is the "file:line: " prefix of a diagnostic for a registration made in
// file at line.
func at(file string, line int) string { return fmt.Sprintf("%s:%d: ", file, line) }

func TestProvideAcceptedShapes(t *testing.T) {
	type counts struct{ built, cleaned atomic.Int32 }
	tests := []struct {
		name         string
		ctor         func(n *counts) any
		want         Out
		wantCleanups int32
	}{
		{
			name: "T",
			ctor: func(n *counts) any {
				return func() *Out { n.built.Add(1); return &Out{N: 1} }
			},
			want: Out{N: 1},
		},
		{
			name: "(T, error)",
			ctor: func(n *counts) any {
				return func() (*Out, error) { n.built.Add(1); return &Out{N: 2}, nil }
			},
			want: Out{N: 2},
		},
		{
			name: "(T, func())",
			ctor: func(n *counts) any {
				return func() (*Out, func()) {
					n.built.Add(1)
					return &Out{N: 3}, func() { n.cleaned.Add(1) }
				}
			},
			want:         Out{N: 3},
			wantCleanups: 1,
		},
		{
			name: "(T, func(), error)",
			ctor: func(n *counts) any {
				return func() (*Out, func(), error) {
					n.built.Add(1)
					return &Out{N: 4}, func() { n.cleaned.Add(1) }, nil
				}
			},
			want:         Out{N: 4},
			wantCleanups: 1,
		},
		{
			name: "(T, func(), error) with a nil cleanup",
			ctor: func(n *counts) any {
				return func() (*Out, func(), error) { n.built.Add(1); return &Out{N: 5}, nil, nil }
			},
			want: Out{N: 5},
		},
		{
			name: "context.Context -> T",
			ctor: func(n *counts) any {
				return func(ctx context.Context) *Out {
					n.built.Add(1)
					s, _ := ctx.Value(ctxKey{}).(string)
					return &Out{FromCtx: s}
				}
			},
			want: Out{FromCtx: "request-value"},
		},
		{
			name: "dependencies -> T",
			ctor: func(n *counts) any {
				return func(d *D, a *A) *Out { n.built.Add(1); return &Out{Dep: d, N: a.ID} }
			},
			want: Out{Dep: &D{ID: 40}, N: 41},
		},
		{
			name: "context.Context and dependencies -> (T, func(), error)",
			ctor: func(n *counts) any {
				return func(ctx context.Context, d *D, a *A) (*Out, func(), error) {
					n.built.Add(1)
					s, _ := ctx.Value(ctxKey{}).(string)
					return &Out{FromCtx: s, Dep: d, N: a.ID}, func() { n.cleaned.Add(1) }, nil
				}
			},
			want:         Out{FromCtx: "request-value", Dep: &D{ID: 40}, N: 41},
			wantCleanups: 1,
		},
	}
	for _, tt := range tests {
		for _, reg := range registrations {
			t.Run(tt.name+"/"+reg.name, func(t *testing.T) {
				var n counts
				r := di.NewRegistry()
				dep := &D{ID: 40}
				di.Supply(r, dep)
				di.Supply(r, &A{ID: 41})
				reg.provide(r, tt.ctor(&n))
				c, err := containerOf(r)
				if err != nil {
					t.Fatalf("container.New: %v", err)
				}
				defer c.Close()

				ctx := context.WithValue(context.Background(), ctxKey{}, "request-value")
				rec := newRecipe(t, c, reflect.TypeFor[*Out]())
				dst, release := mustResolve(t, rec, ctx)
				got, ok := dst[0].Interface().(*Out)
				if !ok || got == nil {
					t.Fatalf("resolved %v, want a non-nil *Out", dst[0])
				}
				if diff := cmp.Diff(tt.want, *got); diff != "" {
					t.Errorf("resolved value (-want +got):\n%s", diff)
				}
				if tt.want.Dep != nil && got.Dep != dep {
					t.Errorf("dependency *D is %p, want the supplied %p", got.Dep, dep)
				}
				if n := n.built.Load(); n != 1 {
					t.Errorf("constructor ran %d times, want 1", n)
				}

				if err := release(); err != nil {
					t.Fatalf("release: %v", err)
				}
				wantAfterRelease := int32(0)
				if reg.life == container.PerInvocation {
					wantAfterRelease = tt.wantCleanups
				}
				if got := n.cleaned.Load(); got != wantAfterRelease {
					t.Errorf("%s: cleanups run after release = %d, want %d", reg.life, got, wantAfterRelease)
				}
				if err := c.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if got := n.cleaned.Load(); got != tt.wantCleanups {
					t.Errorf("%s: cleanups run after release and Close = %d, want %d", reg.life, got, tt.wantCleanups)
				}
			})
		}
	}
}

func TestProvideNonPointerAndInterfaceTypes(t *testing.T) {
	for _, reg := range registrations {
		t.Run(reg.name, func(t *testing.T) {
			r := di.NewRegistry()
			reg.provide(r, func() D { return D{ID: 7} })
			reg.provide(r, func(d D) fmt.Stringer { return stringer(fmt.Sprint("id ", d.ID)) })
			c := newContainer(t, r)
			if got := resolveOne[D](t, c, context.Background()); got.ID != 7 {
				t.Errorf("resolved D{ID: %d}, want D{ID: 7}", got.ID)
			}
			if got := resolveOne[fmt.Stringer](t, c, context.Background()); got.String() != "id 7" {
				t.Errorf("resolved fmt.Stringer %q, want %q", got.String(), "id 7")
			}
		})
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestProvideRejectedShapes(t *testing.T) {
	tests := []struct {
		name string
		ctor any
		want string // part of the diagnostic that names the problem
	}{
		{"nil", nil, "want a constructor function, got <nil>"},
		{"not a function", 42, "want a constructor function, got int"},
		{"a *A value", &A{}, "want a constructor function, got *di_test.A"},
		{"nil function", (func() *A)(nil), "constructor is a nil function"},
		{"variadic", func(...*D) *A { return nil }, "cannot be variadic"},
		{"no results", func() {}, "a constructor returns T, (T, error), (T, func()) or (T, func(), error)"},
		{"four results", func() (*A, func(), error, int) { return nil, nil, nil, 0 }, "a constructor returns T"}, //lint:ignore ST1008 the rejected shape is the point of the case
		{"second result is neither cleanup nor error", func() (*A, int) { return nil, 0 }, "a constructor returns T"},
		{"cleanup with arguments", func() (*A, func(int)) { return nil, nil }, "a constructor returns T"},
		{"error before cleanup", func() (*A, error, func()) { return nil, nil, nil }, "a constructor returns T"}, //lint:ignore ST1008 the rejected shape is the point of the case
		{"two errors", func() (*A, error, error) { return nil, nil, nil }, "a constructor returns T"},
		{"two cleanups", func() (*A, func(), func()) { return nil, nil, nil }, "a constructor returns T"},
		{"provides error", func() error { return nil }, "cannot provide error"},
		{"provides context.Context", func() context.Context { return nil }, "cannot provide context.Context"},
		{"provides a cleanup func", func() func() { return nil }, "cannot provide func()"},
		{"context.Context not first", func(*D, context.Context) *A { return nil }, "context.Context must be the first parameter"},
		{"depends on itself", func(*A) *A { return nil }, "*di_test.A depends on itself"},
	}
	for _, tt := range tests {
		for _, reg := range registrations {
			t.Run(tt.name+"/"+reg.name, func(t *testing.T) {
				r := di.NewRegistry()
				di.Supply(r, &D{})
				line := reg.provide(r, tt.ctor)
				c, err := containerOf(r)
				if err == nil {
					t.Fatal("container.New: no error for a bad constructor")
				}
				defer c.Close()
				msg := err.Error()
				if !strings.Contains(msg, at("registry_test.go", line)) {
					t.Errorf("error %q does not point at registry_test.go:%d", msg, line)
				}
				if !strings.Contains(msg, tt.want) {
					t.Errorf("error %q does not contain %q", msg, tt.want)
				}
				if errors.Is(err, di.ErrFrozen) {
					t.Errorf("error %q is ErrFrozen, want a shape error", msg)
				}
				// The rejected constructor is not registered.
				if _, err := c.Recipe([]reflect.Type{reflect.TypeFor[*A]()}); err == nil {
					t.Error("Recipe(*A) succeeded with only a rejected provider for *A")
				}
			})
		}
	}
}

// TestContainerUsableDespiteRegistrationErrors checks that a registration
// mistake is reported but does not stop the rest of the registry working.
func TestContainerUsableDespiteRegistrationErrors(t *testing.T) {
	r := di.NewRegistry()
	di.Provide(r, "not a constructor")
	di.ProvidePerInvocation(r, func() (*B, int) { return nil, 0 })
	di.Provide(r, func() *A { return &A{ID: 3} })
	di.ProvidePerInvocation(r, func(a *A) *D { return &D{ID: a.ID + 1} })
	c, err := containerOf(r)
	if err == nil {
		t.Fatal("container.New: no error for two bad registrations")
	}
	defer c.Close()
	if n := len(unwrapAll(err)); n != 2 {
		t.Errorf("container.New reported %d errors, want 2: %v", n, err)
	}
	rec := newRecipe(t, c, reflect.TypeFor[*D](), reflect.TypeFor[*A]())
	dst, release := mustResolve(t, rec, context.Background())
	defer release()
	if got := dst[0].Interface().(*D).ID; got != 4 {
		t.Errorf("D.ID = %d, want 4", got)
	}
	if got := dst[1].Interface().(*A).ID; got != 3 {
		t.Errorf("A.ID = %d, want 3", got)
	}
}

// unwrapAll returns the errors joined in err (or err itself).
func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// registerA registers a provider for *A in one of three ways and returns the
// line of the registration call.
var registerA = []struct {
	name string
	add  func(r *di.Registry) int
}{
	{"Provide", func(r *di.Registry) int {
		line := nextLine()
		di.Provide(r, func() *A { return &A{ID: 1} })
		return line
	}},
	{"ProvidePerInvocation", func(r *di.Registry) int {
		line := nextLine()
		di.ProvidePerInvocation(r, func() *A { return &A{ID: 2} })
		return line
	}},
	{"Supply", func(r *di.Registry) int {
		line := nextLine()
		di.Supply(r, &A{ID: 3})
		return line
	}},
}

func TestDuplicateProviderReportsBothSites(t *testing.T) {
	for _, first := range registerA {
		for _, second := range registerA {
			t.Run(first.name+"+"+second.name, func(t *testing.T) {
				r := di.NewRegistry()
				line1 := first.add(r)
				line2 := second.add(r)
				c, err := containerOf(r)
				if err == nil {
					t.Fatal("container.New: no error for two providers of *A")
				}
				defer c.Close()
				msg := err.Error()
				for _, want := range []string{
					at("registry_test.go", line2),
					fmt.Sprintf("registry_test.go:%d)", line1),
					"*di_test.A already has a provider",
				} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not contain %q", msg, want)
					}
				}
				if n := len(unwrapAll(err)); n != 1 {
					t.Errorf("got %d errors, want 1: %v", n, err)
				}
			})
		}
	}
}

func TestRegisterAfterFrozen(t *testing.T) {
	for _, late := range registerA {
		t.Run(late.name, func(t *testing.T) {
			r := di.NewRegistry()
			di.Supply(r, &D{ID: 1})
			c1, err := containerOf(r)
			if err != nil {
				t.Fatalf("first container.New: %v", err)
			}
			defer c1.Close()

			line := late.add(r)

			c2, err := containerOf(r)
			if !errors.Is(err, di.ErrFrozen) {
				t.Fatalf("second container.New error = %v, want ErrFrozen", err)
			}
			defer c2.Close()
			if !strings.Contains(err.Error(), at("registry_test.go", line)) {
				t.Errorf("error %q does not point at registry_test.go:%d", err, line)
			}
			// The late provider is visible to neither container.
			for i, c := range []*container.Container{c1, c2} {
				if _, err := c.Recipe([]reflect.Type{reflect.TypeFor[*A]()}); err == nil {
					t.Errorf("container %d: Recipe(*A) succeeded after *A was registered on a frozen registry", i+1)
				}
			}
			// What was registered before freezing still works.
			if got := resolveOne[*D](t, c2, context.Background()); got.ID != 1 {
				t.Errorf("D.ID = %d, want 1", got.ID)
			}
		})
	}
}

func TestSupply(t *testing.T) {
	r := di.NewRegistry()
	d := &D{ID: 5}
	di.Supply(r, d)                             // T inferred as *D
	di.Supply(r, 42)                            // a non-pointer value
	di.Supply[fmt.Stringer](r, stringer("sup")) // an interface, named explicitly
	c := newContainer(t, r)
	ctx := context.Background()

	if got := resolveOne[*D](t, c, ctx); got != d {
		t.Errorf("resolved *D %p, want the supplied %p", got, d)
	}
	if got := resolveOne[int](t, c, ctx); got != 42 {
		t.Errorf("resolved int %d, want 42", got)
	}
	if got := resolveOne[fmt.Stringer](t, c, ctx); got.String() != "sup" {
		t.Errorf("resolved fmt.Stringer %q, want %q", got, "sup")
	}
	// Supply[fmt.Stringer] registers the interface, not the concrete type.
	if _, err := c.Recipe([]reflect.Type{reflect.TypeFor[stringer]()}); err == nil {
		t.Error("Recipe(stringer) succeeded, but only fmt.Stringer was supplied")
	}
}

func TestNewContainerNilRegistry(t *testing.T) {
	c, err := containerOf(nil)
	if err != nil {
		t.Fatalf("container.New(nil) error = %v", err)
	}
	if c == nil {
		t.Fatal("container.New(nil) returned a nil container")
	}
	if _, err := c.Recipe([]reflect.Type{reflect.TypeFor[*A]()}); err == nil {
		t.Error("Recipe(*A) on an empty container succeeded")
	}
	r := newRecipe(t, c)
	if err := tryResolve(t, r, context.Background()); err != nil {
		t.Errorf("resolving an empty recipe: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
