package container_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/google/go-cmp/cmp"
)

// E shares a per-invocation *A with B in the sharing tests.
type E struct{ A *A }

func TestRecipeErrors(t *testing.T) {
	tests := []struct {
		name  string
		types []reflect.Type
		want  string
	}{
		{"no provider", []reflect.Type{reflect.TypeFor[*Out]()}, "no provider for *container_test.Out"},
		{"no provider for the second type", []reflect.Type{reflect.TypeFor[*D](), reflect.TypeFor[*Out]()}, "no provider for *container_test.Out"},
		{"no provider for a dependency", []reflect.Type{reflect.TypeFor[*A]()}, "no provider for *container_test.Out"},
		{"cycle", []reflect.Type{reflect.TypeFor[*B]()}, "dependency cycle: *container_test.B -> *container_test.C -> *container_test.B"},
		{"singleton on per-invocation", []reflect.Type{reflect.TypeFor[int]()}, "singleton int depends on per-invocation *container_test.D"},
	}
	r := di.NewRegistry()
	di.ProvidePerInvocation(r, func() *D { return &D{} })
	di.ProvidePerInvocation(r, func(*Out) *A { return &A{} })
	di.ProvidePerInvocation(r, func(*C) *B { return &B{} })
	di.ProvidePerInvocation(r, func(*B) *C { return &C{} })
	di.Provide(r, func(*D) int { return 0 })
	c, err := containerOf(r)
	if err == nil {
		t.Fatal("container.New: no error for a registry with mistakes")
	}
	defer c.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := c.Recipe(tt.types)
			if err == nil {
				t.Fatalf("Recipe(%v) succeeded", tt.types)
			}
			if rec != nil {
				t.Errorf("Recipe(%v) returned a recipe with its error", tt.types)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Recipe error %q does not contain %q", err, tt.want)
			}
		})
	}
	// The good part of the registry still compiles.
	newRecipe(t, c, reflect.TypeFor[*D]())
}

func TestRecipeLen(t *testing.T) {
	r := di.NewRegistry()
	di.Supply(r, &A{})
	di.ProvidePerInvocation(r, func() *D { return &D{} })
	c := newContainer(t, r)
	tests := []struct {
		types []reflect.Type
		want  int
	}{
		{nil, 0},
		{[]reflect.Type{reflect.TypeFor[*A]()}, 1},
		{[]reflect.Type{reflect.TypeFor[*A](), reflect.TypeFor[*D]()}, 2},
		{[]reflect.Type{reflect.TypeFor[*D](), reflect.TypeFor[*A](), reflect.TypeFor[*D]()}, 3},
	}
	for _, tt := range tests {
		rec, err := c.Recipe(tt.types)
		if err != nil {
			t.Fatalf("Recipe(%v): %v", tt.types, err)
		}
		if got := rec.Len(); got != tt.want {
			t.Errorf("Recipe(%v).Len() = %d, want %d", tt.types, got, tt.want)
		}
	}
}

func TestResolveFillsRequestedOrder(t *testing.T) {
	r := di.NewRegistry()
	di.Supply(r, &D{ID: 4})
	di.Provide(r, func() *A { return &A{ID: 1} })
	di.ProvidePerInvocation(r, func(a *A) *B { return &B{A: a, ID: 2} })
	di.ProvidePerInvocation(r, func(b *B) *C { return &C{B: b, ID: 3} })
	c := newContainer(t, r)
	types := []reflect.Type{
		reflect.TypeFor[*C](), reflect.TypeFor[*D](), reflect.TypeFor[*A](),
		reflect.TypeFor[*B](), reflect.TypeFor[*C](),
	}
	rec := newRecipe(t, c, types...)
	dst, release := mustResolve(t, rec, context.Background())
	defer release()
	for i, v := range dst {
		if !v.IsValid() || v.Type() != types[i] {
			t.Fatalf("dst[%d] = %v, want a %v", i, v, types[i])
		}
	}
	cv, dv, av, bv := dst[0].Interface().(*C), dst[1].Interface().(*D), dst[2].Interface().(*A), dst[3].Interface().(*B)
	if cv.ID != 3 || dv.ID != 4 || av.ID != 1 || bv.ID != 2 {
		t.Errorf("IDs = %d %d %d %d, want 3 4 1 2", cv.ID, dv.ID, av.ID, bv.ID)
	}
	if cv.B != bv || bv.A != av || dst[4].Interface().(*C) != cv {
		t.Error("values in one Resolve are not wired to each other")
	}
}

func TestPerInvocationFreshValuePerResolve(t *testing.T) {
	var built atomic.Int32
	r := di.NewRegistry()
	di.ProvidePerInvocation(r, func() *A { return &A{ID: int(built.Add(1))} })
	c := newContainer(t, r)
	rec := newRecipe(t, c, reflect.TypeFor[*A]())
	seen := map[*A]bool{}
	for i := 1; i <= 3; i++ {
		dst, release := mustResolve(t, rec, context.Background())
		a := dst[0].Interface().(*A)
		if a.ID != i || seen[a] {
			t.Errorf("resolve %d: got A{ID: %d} (seen before: %v), want a fresh A{ID: %d}", i, a.ID, seen[a], i)
		}
		seen[a] = true
		if err := release(); err != nil {
			t.Fatal(err)
		}
	}
	if n := built.Load(); n != 3 {
		t.Errorf("constructor ran %d times for 3 resolves, want 3", n)
	}
}

func TestPerInvocationSharedWithinResolve(t *testing.T) {
	var built, cleaned atomic.Int32
	r := di.NewRegistry()
	di.ProvidePerInvocation(r, func() (*A, func()) {
		return &A{ID: int(built.Add(1))}, func() { cleaned.Add(1) }
	})
	di.ProvidePerInvocation(r, func(a *A) *B { return &B{A: a} })
	di.ProvidePerInvocation(r, func(a *A) *E { return &E{A: a} })
	c := newContainer(t, r)
	rec := newRecipe(t, c, reflect.TypeFor[*B](), reflect.TypeFor[*E](), reflect.TypeFor[*A]())

	var prev *A
	for i := 1; i <= 2; i++ {
		dst, release := mustResolve(t, rec, context.Background())
		b, e, a := dst[0].Interface().(*B), dst[1].Interface().(*E), dst[2].Interface().(*A)
		if b.A != a || e.A != a {
			t.Errorf("resolve %d: *B and *E got different *A values within one Resolve", i)
		}
		if a == prev {
			t.Errorf("resolve %d: reused the *A of the previous Resolve", i)
		}
		prev = a
		if n := built.Load(); n != int32(i) {
			t.Errorf("after resolve %d: *A built %d times, want %d", i, n, i)
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		if n := cleaned.Load(); n != int32(i) {
			t.Errorf("after release %d: *A cleaned %d times, want %d", i, n, i)
		}
	}
}

func TestPerInvocationGetsInvocationContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "req"))
	cancel()
	var got context.Context
	r := di.NewRegistry()
	di.ProvidePerInvocation(r, func(ctx context.Context) *A { got = ctx; return &A{} })
	c := newContainer(t, r)
	if err := tryResolve(t, newRecipe(t, c, reflect.TypeFor[*A]()), ctx); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if got == nil {
		t.Fatal("constructor got a nil context")
	}
	if v := got.Value(ctxKey{}); v != "req" {
		t.Errorf("context value = %v, want %q", v, "req")
	}
	if !errors.Is(got.Err(), context.Canceled) {
		t.Errorf("context Err() = %v, want the invocation's cancellation", got.Err())
	}
}

func TestReleaseRunsCleanupsInReverseOrder(t *testing.T) {
	var ev events
	r := di.NewRegistry()
	di.ProvidePerInvocation(r, func() (*A, func()) {
		ev.add("build A")
		return &A{}, func() { ev.add("clean A") }
	})
	di.ProvidePerInvocation(r, func(a *A) (*B, func(), error) {
		ev.add("build B")
		return &B{A: a}, func() { ev.add("clean B") }, nil
	})
	di.ProvidePerInvocation(r, func(b *B) (*C, func()) {
		ev.add("build C")
		return &C{B: b}, func() { ev.add("clean C") }
	})
	di.ProvidePerInvocation(r, func() *D { ev.add("build D"); return &D{} })
	c := newContainer(t, r)
	rec := newRecipe(t, c, reflect.TypeFor[*C](), reflect.TypeFor[*D]())
	_, release := mustResolve(t, rec, context.Background())
	wantBuilt := []string{"build A", "build B", "build C", "build D"}
	if diff := cmp.Diff(wantBuilt, ev.snapshot()); diff != "" {
		t.Fatalf("events before release (-want +got):\n%s", diff)
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	want := append(wantBuilt, "clean C", "clean B", "clean A")
	if diff := cmp.Diff(want, ev.snapshot()); diff != "" {
		t.Errorf("events after release (-want +got):\n%s", diff)
	}
}

func TestResolveFailureCleansUpEarlierValues(t *testing.T) {
	tests := []struct {
		name string
		// register adds providers; the recipe asks for *B.
		register   func(r *di.Registry, ev *events)
		wantType   reflect.Type // ProviderError.Type
		wantEvents []string     // by the time Resolve returns
		wantInErr  string       // extra text the error must contain
	}{
		{
			name: "later constructor fails",
			register: func(r *di.Registry, ev *events) {
				di.ProvidePerInvocation(r, func(a *A) (*B, error) { ev.add("build B"); return nil, errBoom })
			},
			wantType:   reflect.TypeFor[*B](),
			wantEvents: []string{"build A", "build D", "build B", "clean D", "clean A"},
		},
		{
			name: "later constructor fails after returning a cleanup",
			register: func(r *di.Registry, ev *events) {
				di.ProvidePerInvocation(r, func(a *A) (*B, func(), error) {
					ev.add("build B")
					return &B{}, func() { ev.add("clean B") }, errBoom
				})
			},
			wantType:   reflect.TypeFor[*B](),
			wantEvents: []string{"build A", "build D", "build B", "clean B", "clean D", "clean A"},
		},
		{
			name: "a singleton dependency fails",
			register: func(r *di.Registry, ev *events) {
				di.Provide(r, func() (*C, error) { ev.add("build C"); return nil, errBoom })
				di.ProvidePerInvocation(r, func(a *A, c *C) *B { ev.add("build B"); return &B{} })
			},
			wantType:   reflect.TypeFor[*C](),
			wantEvents: []string{"build A", "build D", "build C", "clean D", "clean A"},
		},
		{
			name: "an earlier cleanup panics",
			register: func(r *di.Registry, ev *events) {
				di.ProvidePerInvocation(r, func(a *A, d *E) (*B, error) { ev.add("build B"); return nil, errBoom })
				di.ProvidePerInvocation(r, func() (*E, func()) {
					ev.add("build E")
					return &E{}, func() { panic("E cleanup exploded") }
				})
			},
			wantType:   reflect.TypeFor[*B](),
			wantEvents: []string{"build A", "build D", "build E", "build B", "clean D", "clean A"},
			wantInErr:  "E cleanup exploded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev events
			r := di.NewRegistry()
			di.ProvidePerInvocation(r, func() (*A, func()) {
				ev.add("build A")
				return &A{}, func() { ev.add("clean A") }
			})
			di.ProvidePerInvocation(r, func() (*D, func()) {
				ev.add("build D")
				return &D{}, func() { ev.add("clean D") }
			})
			tt.register(r, &ev)
			c := newContainer(t, r)
			rec := newRecipe(t, c, reflect.TypeFor[*A](), reflect.TypeFor[*D](), reflect.TypeFor[*B]())

			dst := make([]reflect.Value, rec.Len())
			release, err := rec.Resolve(context.Background(), dst)
			var pe *container.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("Resolve error = %v, want a *container.ProviderError", err)
			}
			if pe.Type != tt.wantType {
				t.Errorf("ProviderError.Type = %v, want %v", pe.Type, tt.wantType)
			}
			if !errors.Is(err, errBoom) {
				t.Errorf("Resolve error %v does not wrap the constructor's error", err)
			}
			if !strings.Contains(err.Error(), tt.wantType.String()) {
				t.Errorf("Resolve error %q does not name %v", err, tt.wantType)
			}
			if tt.wantInErr != "" && !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("Resolve error %q does not contain %q", err, tt.wantInErr)
			}
			atReturn := ev.snapshot()
			if diff := cmp.Diff(tt.wantEvents, atReturn); diff != "" {
				t.Errorf("events when Resolve returned (-want +got):\n%s", diff)
			}
			if release == nil {
				t.Fatal("Resolve returned a nil release")
			}
			if err := release(); err != nil {
				t.Errorf("release after a failed Resolve: %v", err)
			}
			// Everything was already cleaned up: release must not run
			// cleanups again (or late).
			if diff := cmp.Diff(atReturn, ev.snapshot()); diff != "" {
				t.Errorf("release after a failed Resolve ran cleanups (-before +after):\n%s", diff)
			}
		})
	}
}

func TestResolvePanicCleansUpEarlierValues(t *testing.T) {
	tests := []struct {
		name     string
		register func(r *di.Registry, ev *events)
		want     []string
	}{
		{
			name: "per-invocation constructor panics",
			register: func(r *di.Registry, ev *events) {
				di.ProvidePerInvocation(r, func(a *A, d *D) *B { ev.add("build B"); panic("kaboom") })
			},
			want: []string{"build A", "build D", "build B", "clean D", "clean A"},
		},
		{
			name: "singleton dependency panics",
			register: func(r *di.Registry, ev *events) {
				di.Provide(r, func() *C { ev.add("build C"); panic("kaboom") })
				di.ProvidePerInvocation(r, func(a *A, d *D, c *C) *B { ev.add("build B"); return &B{} })
			},
			want: []string{"build A", "build D", "build C", "clean D", "clean A"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev events
			r := di.NewRegistry()
			di.ProvidePerInvocation(r, func() (*A, func()) {
				ev.add("build A")
				return &A{}, func() { ev.add("clean A") }
			})
			di.ProvidePerInvocation(r, func() (*D, func()) {
				ev.add("build D")
				return &D{}, func() { ev.add("clean D") }
			})
			tt.register(r, &ev)
			c := newContainer(t, r)
			rec := newRecipe(t, c, reflect.TypeFor[*B]())

			var recovered any
			func() {
				defer func() { recovered = recover() }()
				dst := make([]reflect.Value, rec.Len())
				release, _ := rec.Resolve(context.Background(), dst)
				t.Error("Resolve returned instead of panicking")
				_ = release()
			}()
			if recovered != "kaboom" {
				t.Errorf("recovered %v, want the constructor's panic %q", recovered, "kaboom")
			}
			if diff := cmp.Diff(tt.want, ev.snapshot()); diff != "" {
				t.Errorf("events after the panic (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReleaseReportsPanickingCleanup(t *testing.T) {
	var ev events
	r := di.NewRegistry()
	di.ProvidePerInvocation(r, func() (*A, func()) { return &A{}, func() { ev.add("clean A") } })
	di.ProvidePerInvocation(r, func(*A) (*B, func()) { return &B{}, func() { panic("B cleanup exploded") } })
	di.ProvidePerInvocation(r, func(*B) (*C, func()) { return &C{}, func() { ev.add("clean C") } })
	c := newContainer(t, r)
	_, release := mustResolve(t, newRecipe(t, c, reflect.TypeFor[*C]()), context.Background())
	err := release()
	if err == nil || !strings.Contains(err.Error(), "B cleanup exploded") {
		t.Errorf("release error = %v, want one reporting the panic %q", err, "B cleanup exploded")
	}
	if diff := cmp.Diff([]string{"clean C", "clean A"}, ev.snapshot()); diff != "" {
		t.Errorf("cleanups around the panicking one (-want +got):\n%s", diff)
	}
}

func TestConstructorErrorIsProviderError(t *testing.T) {
	for _, reg := range registrations {
		t.Run(reg.name, func(t *testing.T) {
			var cleaned atomic.Int32
			r := di.NewRegistry()
			reg.provide(r, func() (*A, func(), error) {
				return &A{}, func() { cleaned.Add(1) }, errBoom
			})
			c, err := containerOf(r)
			if err != nil {
				t.Fatal(err)
			}
			err = tryResolve(t, newRecipe(t, c, reflect.TypeFor[*A]()), context.Background())
			var pe *container.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("Resolve error = %v, want a *container.ProviderError", err)
			}
			if pe.Type != reflect.TypeFor[*A]() {
				t.Errorf("ProviderError.Type = %v, want *container_test.A", pe.Type)
			}
			if !strings.Contains(pe.Provider, "TestConstructorErrorIsProviderError") {
				t.Errorf("ProviderError.Provider = %q, want the constructor's name", pe.Provider)
			}
			if !errors.Is(err, errBoom) || errors.Unwrap(err) != errBoom {
				t.Errorf("Resolve error %v does not wrap %v", err, errBoom)
			}
			for _, want := range []string{"*container_test.A", pe.Provider, "boom"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			// The cleanup returned alongside the error runs once, at once.
			if n := cleaned.Load(); n != 1 {
				t.Errorf("cleanup returned with the error ran %d times, want 1", n)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if n := cleaned.Load(); n != 1 {
				t.Errorf("after Close, that cleanup ran %d times, want 1", n)
			}
		})
	}
}

// TestResolveConcurrently resolves per-invocation values on top of a shared
// singleton from many goroutines at once (run with -race).
func TestResolveConcurrently(t *testing.T) {
	const goroutines = 20
	var builtA, builtB, cleanedB atomic.Int32
	r := di.NewRegistry()
	di.Provide(r, func() *A { builtA.Add(1); return &A{} })
	di.ProvidePerInvocation(r, func(ctx context.Context, a *A) (*B, func()) {
		return &B{A: a, ID: int(builtB.Add(1))}, func() { cleanedB.Add(1) }
	})
	c := newContainer(t, r)
	rec := newRecipe(t, c, reflect.TypeFor[*B]())

	start := make(chan struct{})
	bs := make([]*B, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			<-start
			dst := make([]reflect.Value, 1)
			release, err := rec.Resolve(context.Background(), dst)
			if err == nil {
				bs[i] = dst[0].Interface().(*B)
				err = release()
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("Resolve/release: %v", err)
	}
	if n := builtA.Load(); n != 1 {
		t.Errorf("singleton *A built %d times, want 1", n)
	}
	if n, m := builtB.Load(), cleanedB.Load(); n != goroutines || m != goroutines {
		t.Errorf("*B built %d and cleaned %d times, want %d and %d", n, m, goroutines, goroutines)
	}
	ids := map[int]bool{}
	for _, b := range bs {
		if b.A != bs[0].A {
			t.Error("invocations saw different singleton *A values")
		}
		ids[b.ID] = true
	}
	if len(ids) != goroutines {
		t.Errorf("%d distinct *B values across %d invocations, want %d", len(ids), goroutines, goroutines)
	}
}
