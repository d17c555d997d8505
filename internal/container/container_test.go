package container_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/google/go-cmp/cmp"
)

var errBoom = errors.New("boom")

// diagnosticLine returns the line of err's message (errors.Join puts one
// error per line) that contains every part, or "" if none does.
func diagnosticLine(err error, parts ...string) string {
	for _, l := range strings.Split(err.Error(), "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(l, p) {
				all = false
				break
			}
		}
		if all {
			return l
		}
	}
	return ""
}

func TestNewContainerGraphErrors(t *testing.T) {
	tests := []struct {
		name string
		// register adds the providers and returns the line of the
		// registration the diagnostic must point at.
		register func(r *di.Registry) int
		want     string
		once     string // the kind of mistake, which must be reported once
	}{
		{
			name: "missing provider",
			register: func(r *di.Registry) int {
				line := nextLine()
				di.Provide(r, func(*D) *A { return &A{} })
				return line
			},
			want: "no provider for *container_test.D",
			once: "no provider",
		},
		{
			name: "missing provider of an indirect dependency",
			register: func(r *di.Registry) int {
				di.ProvidePerInvocation(r, func(*B) *A { return &A{} })
				line := nextLine()
				di.ProvidePerInvocation(r, func(*D) *B { return &B{} })
				return line
			},
			want: "no provider for *container_test.D",
			once: "no provider",
		},
		{
			name: "cycle of two",
			register: func(r *di.Registry) int {
				line := nextLine()
				di.Provide(r, func(*B) *A { return &A{} })
				di.Provide(r, func(*A) *B { return &B{} })
				return line
			},
			want: "dependency cycle: *container_test.A -> *container_test.B -> *container_test.A",
			once: "dependency cycle",
		},
		{
			name: "cycle of three",
			register: func(r *di.Registry) int {
				line := nextLine()
				di.ProvidePerInvocation(r, func(*B) *A { return &A{} })
				di.ProvidePerInvocation(r, func(*C) *B { return &B{} })
				di.ProvidePerInvocation(r, func(*A) *C { return &C{} })
				return line
			},
			want: "dependency cycle: *container_test.A -> *container_test.B -> *container_test.C -> *container_test.A",
			once: "dependency cycle",
		},
		{
			name: "singleton depends on per-invocation",
			register: func(r *di.Registry) int {
				line := nextLine()
				di.Provide(r, func(*D) *A { return &A{} })
				di.ProvidePerInvocation(r, func() *D { return &D{} })
				return line
			},
			want: "singleton *container_test.A depends on per-invocation *container_test.D",
			once: "depends on per-invocation",
		},
		{
			name: "singleton depends on per-invocation through another singleton",
			register: func(r *di.Registry) int {
				di.Provide(r, func(*B) *A { return &A{} })
				line := nextLine()
				di.Provide(r, func(*D) *B { return &B{} })
				di.ProvidePerInvocation(r, func() *D { return &D{} })
				return line
			},
			want: "singleton *container_test.B depends on per-invocation *container_test.D",
			once: "depends on per-invocation",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := di.NewRegistry()
			line := tt.register(r)
			c, err := containerOf(r)
			if err == nil {
				t.Fatal("container.New: no error")
			}
			defer c.Close()
			if diagnosticLine(err, at("container_test.go", line), tt.want) == "" {
				t.Errorf("container.New error\n%v\nhas no line containing both %q and %q", err, at("container_test.go", line), tt.want)
			}
			if n := strings.Count(err.Error(), tt.once); n != 1 {
				t.Errorf("container.New reported %q %d times, want once:\n%v", tt.once, n, err)
			}
			// A recipe needing *A reports the same mistake.
			_, err = c.Recipe([]reflect.Type{reflect.TypeFor[*A]()})
			if err == nil {
				t.Fatal("Recipe(*A): no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Recipe(*A) error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestNewContainerReportsSeveralErrors checks that all mistakes, including
// ones in providers nothing asks for yet, come back together.
func TestNewContainerReportsSeveralErrors(t *testing.T) {
	r := di.NewRegistry()
	shapeLine := nextLine()
	di.Provide(r, 42)
	dupLine1 := nextLine()
	di.Supply(r, &D{})
	dupLine2 := nextLine()
	di.Provide(r, func() *D { return &D{} })
	missingLine := nextLine()
	di.Provide(r, func(*Out) *A { return &A{} })
	cycleLine := nextLine()
	di.ProvidePerInvocation(r, func(*C) *B { return &B{} })
	di.ProvidePerInvocation(r, func(*B) *C { return &C{} })
	lifetimeLine := nextLine()
	di.Provide(r, func(*B) int { return 0 })

	_, err := containerOf(r)
	if err == nil {
		t.Fatal("container.New: no error")
	}
	wants := [][]string{
		{at("container_test.go", shapeLine), "want a constructor function, got int"},
		{at("container_test.go", dupLine2), "*container_test.D already has a provider", fmt.Sprintf("container_test.go:%d)", dupLine1)},
		{at("container_test.go", missingLine), "no provider for *container_test.Out"},
		{at("container_test.go", cycleLine), "dependency cycle: *container_test.B -> *container_test.C -> *container_test.B"},
		{at("container_test.go", lifetimeLine), "singleton int depends on per-invocation *container_test.B"},
	}
	for _, want := range wants {
		if diagnosticLine(err, want...) == "" {
			t.Errorf("container.New error\n%v\nhas no line containing all of %q", err, want)
		}
	}
	if n := len(unwrapAll(err)); n < len(wants) {
		t.Errorf("container.New joined %d errors, want at least %d", n, len(wants))
	}
}

func TestSingletonIsLazy(t *testing.T) {
	var builtA, builtD atomic.Int32
	r := di.NewRegistry()
	di.Provide(r, func() *A { builtA.Add(1); return &A{ID: 1} })
	di.Provide(r, func() *D { builtD.Add(1); return &D{} }) // never requested
	di.ProvidePerInvocation(r, func(a *A) *B { return &B{A: a} })
	c := newContainer(t, r)
	if n := builtA.Load(); n != 0 {
		t.Fatalf("after NewContainer: *A built %d times, want 0", n)
	}
	rec := newRecipe(t, c, reflect.TypeFor[*B](), reflect.TypeFor[*A]())
	if n := builtA.Load(); n != 0 {
		t.Fatalf("after Recipe: *A built %d times, want 0", n)
	}
	var first *A
	for i := range 3 {
		dst, release := mustResolve(t, rec, context.Background())
		a := dst[1].Interface().(*A)
		if i == 0 {
			first = a
		}
		if a != first || dst[0].Interface().(*B).A != first {
			t.Errorf("resolve %d: got a different *A, want the same singleton", i)
		}
		if err := release(); err != nil {
			t.Fatalf("release: %v", err)
		}
		if n := builtA.Load(); n != 1 {
			t.Fatalf("after resolve %d: *A built %d times, want 1", i, n)
		}
	}
	if n := builtD.Load(); n != 0 {
		t.Errorf("*D, never requested, was built %d times", n)
	}
}

func TestSingletonBuiltOnceUnderConcurrentFirstUse(t *testing.T) {
	const goroutines = 50
	var builtA, builtB atomic.Int32
	r := di.NewRegistry()
	di.Provide(r, func() *A {
		builtA.Add(1)
		runtime.Gosched()
		return &A{ID: 1}
	})
	di.Provide(r, func(ctx context.Context, a *A) (*B, func()) {
		builtB.Add(1)
		runtime.Gosched()
		return &B{A: a}, func() {}
	})
	c := newContainer(t, r)
	recA := newRecipe(t, c, reflect.TypeFor[*A]())
	recB := newRecipe(t, c, reflect.TypeFor[*B]())

	start := make(chan struct{})
	as := make([]*A, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	for i := range goroutines {
		wg.Go(func() {
			<-start
			dst := make([]reflect.Value, 1)
			rec := recA
			if i%2 == 1 {
				rec = recB
			}
			release, err := rec.Resolve(context.Background(), dst)
			defer release()
			if err != nil {
				errs[i] = err
				return
			}
			if i%2 == 1 {
				as[i] = dst[0].Interface().(*B).A
			} else {
				as[i] = dst[0].Interface().(*A)
			}
		})
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if n := builtA.Load(); n != 1 {
		t.Errorf("*A built %d times, want 1", n)
	}
	if n := builtB.Load(); n != 1 {
		t.Errorf("*B built %d times, want 1", n)
	}
	for i, a := range as {
		if a != as[0] {
			t.Errorf("goroutine %d got *A %p, goroutine 0 got %p", i, a, as[0])
		}
	}
}

func TestSingletonFailureIsNotCached(t *testing.T) {
	tests := []struct {
		name    string
		request reflect.Type
	}{
		{"requested directly", reflect.TypeFor[*A]()},
		{"dependency of a singleton", reflect.TypeFor[*B]()},
		{"dependency of a per-invocation value", reflect.TypeFor[*C]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var attemptsA, builtB atomic.Int32
			r := di.NewRegistry()
			di.Provide(r, func() (*A, error) {
				if attemptsA.Add(1) <= 2 {
					return nil, errBoom
				}
				return &A{ID: 1}, nil
			})
			di.Provide(r, func(a *A) *B { builtB.Add(1); return &B{A: a} })
			di.ProvidePerInvocation(r, func(a *A) *C { return &C{B: &B{A: a}} })
			c := newContainer(t, r)
			rec := newRecipe(t, c, tt.request)

			for i := 1; i <= 2; i++ {
				err := tryResolve(t, rec, context.Background())
				var pe *container.ProviderError
				if !errors.As(err, &pe) || pe.Type != reflect.TypeFor[*A]() || !errors.Is(err, errBoom) {
					t.Fatalf("resolve %d: error = %v, want a *ProviderError for *A wrapping %v", i, err, errBoom)
				}
				if n := attemptsA.Load(); n != int32(i) {
					t.Fatalf("resolve %d: *A constructor ran %d times, want %d (failure must not be cached)", i, n, i)
				}
			}
			if n := builtB.Load(); n != 0 {
				t.Fatalf("*B built %d times while its dependency failed, want 0", n)
			}
			for i := 3; i <= 4; i++ {
				if err := tryResolve(t, rec, context.Background()); err != nil {
					t.Fatalf("resolve %d: %v", i, err)
				}
			}
			if n := attemptsA.Load(); n != 3 {
				t.Errorf("*A constructor ran %d times, want 3 (two failures, then built once)", n)
			}
		})
	}
}

func TestSingletonPanicIsNotCached(t *testing.T) {
	var attempts atomic.Int32
	r := di.NewRegistry()
	di.Provide(r, func() *A {
		if attempts.Add(1) == 1 {
			panic("first attempt")
		}
		return &A{ID: 2}
	})
	c := newContainer(t, r)
	rec := newRecipe(t, c, reflect.TypeFor[*A]())

	func() {
		defer func() {
			if p := recover(); p != "first attempt" {
				t.Errorf("recovered %v, want the constructor's panic", p)
			}
		}()
		_ = tryResolve(t, rec, context.Background())
	}()
	// The cell must be usable (not left locked) and retry.
	if got := resolveOne[*A](t, c, context.Background()); got.ID != 2 {
		t.Errorf("A.ID = %d, want 2", got.ID)
	}
	if n := attempts.Load(); n != 2 {
		t.Errorf("constructor ran %d times, want 2", n)
	}
}

// TestSingletonContextOutlivesInvocation checks that a singleton's
// constructor gets the values of the first invocation's context, but not its
// cancellation or deadline.
func TestSingletonContextOutlivesInvocation(t *testing.T) {
	base := context.WithValue(context.Background(), ctxKey{}, "v")
	cancelled, cancel := context.WithCancel(base)
	cancel()
	expired, cancel2 := context.WithDeadline(base, time.Unix(0, 0))
	defer cancel2()

	tests := []struct {
		name    string
		ctx     context.Context
		request reflect.Type
	}{
		{"cancelled, singleton requested", cancelled, reflect.TypeFor[*A]()},
		{"cancelled, singleton as dependency", cancelled, reflect.TypeFor[*B]()},
		{"deadline exceeded, singleton requested", expired, reflect.TypeFor[*A]()},
		{"deadline exceeded, singleton as dependency", expired, reflect.TypeFor[*B]()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got context.Context
			r := di.NewRegistry()
			di.Provide(r, func(ctx context.Context) *A { got = ctx; return &A{} })
			di.ProvidePerInvocation(r, func(a *A) *B { return &B{A: a} })
			c := newContainer(t, r)
			if err := tryResolve(t, newRecipe(t, c, tt.request), tt.ctx); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if got == nil {
				t.Fatal("singleton constructor got a nil context")
			}
			if err := got.Err(); err != nil {
				t.Errorf("singleton context Err() = %v, want nil", err)
			}
			if d, ok := got.Deadline(); ok {
				t.Errorf("singleton context has deadline %v, want none", d)
			}
			if v := got.Value(ctxKey{}); v != "v" {
				t.Errorf("singleton context value = %v, want %q (values are kept)", v, "v")
			}
		})
	}
}

func TestCloseRunsSingletonCleanupsInReverseOrder(t *testing.T) {
	var ev events
	r := di.NewRegistry()
	di.Provide(r, func() (*A, func()) {
		ev.add("build A")
		return &A{}, func() { ev.add("clean A") }
	})
	di.Provide(r, func(a *A) (*B, func(), error) {
		ev.add("build B")
		return &B{A: a}, func() { ev.add("clean B") }, nil
	})
	di.Provide(r, func() (*D, func()) {
		ev.add("build D")
		return &D{}, func() { ev.add("clean D") }
	})
	di.Provide(r, func() (*C, func()) { // never built: its cleanup must not run
		ev.add("build C")
		return &C{}, func() { ev.add("clean C") }
	})
	c, err := containerOf(r)
	if err != nil {
		t.Fatal(err)
	}
	resolveOne[*D](t, c, context.Background())
	resolveOne[*B](t, c, context.Background())
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	want := []string{"build D", "build A", "build B", "clean B", "clean A", "clean D"}
	if diff := cmp.Diff(want, ev.snapshot()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	var cleaned atomic.Int32
	r := di.NewRegistry()
	di.Provide(r, func() (*A, func()) { return &A{}, func() { cleaned.Add(1) } })
	c, err := containerOf(r)
	if err != nil {
		t.Fatal(err)
	}
	resolveOne[*A](t, c, context.Background())

	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after Close: %v", err)
	}
	if n := cleaned.Load(); n != 1 {
		t.Errorf("cleanup ran %d times after 11 Close calls, want 1", n)
	}
}

func TestCloseReportsPanickingCleanup(t *testing.T) {
	var ev events
	r := di.NewRegistry()
	di.Provide(r, func() (*A, func()) { return &A{}, func() { ev.add("clean A") } })
	di.Provide(r, func() (*B, func()) { return &B{}, func() { panic("B cleanup exploded") } })
	di.Provide(r, func() (*D, func()) { return &D{}, func() { ev.add("clean D") } })
	c, err := containerOf(r)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecipe(t, c, reflect.TypeFor[*A](), reflect.TypeFor[*B](), reflect.TypeFor[*D]())
	_, release := mustResolve(t, rec, context.Background())
	_ = release()

	err = c.Close()
	if err == nil || !strings.Contains(err.Error(), "B cleanup exploded") {
		t.Errorf("Close error = %v, want one reporting the panic %q", err, "B cleanup exploded")
	}
	if diff := cmp.Diff([]string{"clean D", "clean A"}, ev.snapshot()); diff != "" {
		t.Errorf("cleanups around the panicking one (-want +got):\n%s", diff)
	}
}

func TestResolveAfterClose(t *testing.T) {
	tests := []struct {
		name          string
		request       reflect.Type
		resolveBefore bool // resolve once before Close
	}{
		{"singleton never built", reflect.TypeFor[*A](), false},
		{"singleton built before Close", reflect.TypeFor[*A](), true},
		{"supplied value", reflect.TypeFor[*D](), false},
		{"per-invocation", reflect.TypeFor[*B](), false},
		{"per-invocation used before Close", reflect.TypeFor[*B](), true},
		{"per-invocation without dependencies", reflect.TypeFor[*C](), false},
		{"per-invocation without dependencies used before Close", reflect.TypeFor[*C](), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var builtA, builtB, builtC atomic.Int32
			r := di.NewRegistry()
			di.Provide(r, func() (*A, func()) { builtA.Add(1); return &A{}, func() {} })
			di.ProvidePerInvocation(r, func(a *A) *B { builtB.Add(1); return &B{A: a} })
			di.ProvidePerInvocation(r, func() *C { builtC.Add(1); return &C{} })
			di.Supply(r, &D{})
			c := newContainer(t, r)
			rec := newRecipe(t, c, tt.request)
			if tt.resolveBefore {
				if err := tryResolve(t, rec, context.Background()); err != nil {
					t.Fatalf("Resolve before Close: %v", err)
				}
			}
			a0, b0, c0 := builtA.Load(), builtB.Load(), builtC.Load()
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			dst := make([]reflect.Value, rec.Len())
			release, err := rec.Resolve(context.Background(), dst)
			if !errors.Is(err, di.ErrClosed) {
				t.Errorf("Resolve after Close: error = %v, want ErrClosed", err)
			}
			if release == nil {
				t.Fatal("Resolve returned a nil release")
			}
			if err := release(); err != nil {
				t.Errorf("release: %v", err)
			}
			if a, b, c := builtA.Load(), builtB.Load(), builtC.Load(); a != a0 || b != b0 || c != c0 {
				t.Errorf("constructors ran after Close: *A %d->%d, *B %d->%d, *C %d->%d", a0, a, b0, b, c0, c)
			}
		})
	}
}

// closer looks like a resource the container might be tempted to close.
type closer struct{ closed atomic.Bool }

func (c *closer) Close() error { c.closed.Store(true); return nil }

func TestSuppliedValuesAreNeverCleanedUp(t *testing.T) {
	var fnCalled atomic.Bool
	res := &closer{}
	r := di.NewRegistry()
	di.Supply(r, res)
	di.Supply[func()](r, func() { fnCalled.Store(true) })
	c, err := containerOf(r)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecipe(t, c, reflect.TypeFor[*closer](), reflect.TypeFor[func()]())
	dst, release := mustResolve(t, rec, context.Background())
	if dst[0].Interface().(*closer) != res {
		t.Error("resolved *closer is not the supplied one")
	}
	if err := release(); err != nil {
		t.Fatalf("release: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if res.closed.Load() {
		t.Error("the container closed a supplied value")
	}
	if fnCalled.Load() {
		t.Error("the container called a supplied func() as if it were a cleanup")
	}
}

func TestLifetimeString(t *testing.T) {
	tests := []struct {
		l    container.Lifetime
		want string
	}{
		{container.Singleton, "singleton"},
		{container.PerInvocation, "per-invocation"},
	}
	for _, tt := range tests {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("Lifetime(%d).String() = %q, want %q", tt.l, got, tt.want)
		}
	}
}
