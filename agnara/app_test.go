package agnara_test

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/policy"
)

var validNames = []string{
	"a",
	"Z",
	"users",
	"Users2",
	"my-app_2",
	"a-",
	"b_",
	strings.Repeat("x", 32),
}

var invalidNames = []string{
	"1app",
	"_app",
	"-app",
	"my app",
	"my.app",
	"app!",
	"app/x",
	"ünicode",
	"app\n",
	" app",
	strings.Repeat("x", 33),
}

func TestNewValidName(t *testing.T) {
	for _, name := range validNames {
		a := agnara.New(name, nil)
		if a.Name() != name {
			t.Errorf("Name() = %q, want %q", a.Name(), name)
		}
		caps, container, err := freeze(a)
		if err != nil {
			t.Errorf("New(%q): Freeze() error = %v, want nil", name, err)
		}
		if len(caps) != 0 {
			t.Errorf("New(%q): Freeze() returned %d capabilities, want 0", name, len(caps))
		}
		if container == nil {
			t.Errorf("New(%q): Freeze() returned a nil container", name)
		}
	}
}

func TestNewInvalidName(t *testing.T) {
	for _, name := range append([]string{""}, invalidNames...) {
		a, at := agnara.New(name, nil), here()
		if a.Name() != name {
			t.Errorf("Name() = %q, want %q", a.Name(), name)
		}
		_, _, err := freeze(a)
		if err == nil {
			t.Errorf("New(%q): Freeze() error = nil, want an invalid name error", name)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, at+": ") {
			t.Errorf("New(%q): error %q does not start with the New call site %q", name, msg, at)
		}
		if !strings.Contains(msg, "invalid application name") || !strings.Contains(msg, strconv.Quote(name)) {
			t.Errorf("New(%q): error %q does not name the invalid application name", name, msg)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	for _, opts := range []*agnara.Options{nil, {}} {
		a := agnara.New("app", opts)
		if got := a.Version(); got != "0.0.0" {
			t.Errorf("Version() = %q, want 0.0.0", got)
		}
		l := a.Logger()
		if l == nil {
			t.Fatal("Logger() = nil")
		}
		if l.Handler().Enabled(context.Background(), slog.LevelError) {
			t.Error("default logger is enabled for errors; want one that discards everything")
		}
		l.Error("must not panic") // the default logger is usable
		f := registry.Freeze[*agnara.Capability](a)
		if _, ok := f.ConfirmationVerifier.(policy.Bound); !ok {
			t.Errorf("ConfirmationVerifier = %T, want policy.Bound", f.ConfirmationVerifier)
		}
		if o := a.Observer(); o != nil {
			t.Errorf("Observer() = %v, want none", o)
		}
		if f.Scopes.Implies != nil {
			t.Error("default Scopes has an implication; want exact match")
		}
		if got := a.String(); got != "agnara.App(app)" {
			t.Errorf("String() = %q", got)
		}
		// A default dependency registry exists: freezing builds a container.
		_, c, err := freeze(a)
		if err != nil || c == nil {
			t.Errorf("Freeze() = container %v, error %v; want a container and no error", c, err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	}
}

type countingVerifier struct{ n int }

func (v *countingVerifier) VerifyConfirmation(context.Context, policy.Request, string, policy.Confirmation) error {
	v.n++
	return nil
}

func TestNewCustomOptions(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	verifier := &countingVerifier{}
	opts := &agnara.Options{
		Version:              "1.2.3",
		Logger:               logger,
		Scopes:               policy.Scopes{Implies: policy.Hierarchy(":")},
		ConfirmationVerifier: verifier,
	}
	a := agnara.New("app", opts)
	// Options are copied: later changes to the struct are not seen.
	opts.Version = "9.9.9"
	opts.Logger = nil
	opts.ConfirmationVerifier = nil
	opts.Scopes = policy.Scopes{}

	if a.Version() != "1.2.3" {
		t.Errorf("Version() = %q, want 1.2.3", a.Version())
	}
	if a.Logger() != logger {
		t.Error("Logger() is not the logger passed in Options")
	}
	f := registry.Freeze[*agnara.Capability](a)
	if f.ConfirmationVerifier != policy.ConfirmationVerifier(verifier) {
		t.Errorf("ConfirmationVerifier = %v, want the one passed in Options", f.ConfirmationVerifier)
	}
	if f.Logger != logger {
		t.Error("the frozen Logger is not the logger passed in Options")
	}
	p := policy.NewPrincipal("alice", []string{"users"})
	if !f.Scopes.Allows(p, []string{"users:read"}) {
		t.Error("Scopes() did not keep the configured implication")
	}
}

type missingDep struct{}
type needsMissing struct{}

func TestNewUsesGivenDependencies(t *testing.T) {
	r := di.NewRegistry()
	di.Provide(r, func(*missingDep) *needsMissing { return &needsMissing{} })
	a := agnara.New("app", &agnara.Options{Dependencies: r})
	_, _, err := freeze(a)
	if err == nil || !strings.Contains(err.Error(), "no provider for") {
		t.Fatalf("Freeze() error = %v; want the registry's missing-provider error", err)
	}
}

type resource struct{}

func TestCloseIdempotent(t *testing.T) {
	cleanups := 0
	r := di.NewRegistry()
	di.Provide(r, func() (*resource, func(), error) {
		return &resource{}, func() { cleanups++ }, nil
	})
	a := agnara.New("app", &agnara.Options{Dependencies: r})
	_, c, err := freeze(a)
	if err != nil {
		t.Fatal(err)
	}
	// Build the singleton so that closing has something to clean up.
	recipe, err := c.Recipe([]reflect.Type{reflect.TypeFor[*resource]()})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]reflect.Value, 1)
	release, err := recipe.Resolve(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if cleanups != 0 {
		t.Fatalf("singleton cleaned up before Close: %d", cleanups)
	}
	for i := range 3 {
		if err := a.Close(); err != nil {
			t.Fatalf("Close() #%d = %v", i+1, err)
		}
		if cleanups != 1 {
			t.Fatalf("after Close() #%d the singleton was cleaned up %d times, want 1", i+1, cleanups)
		}
	}
}

func TestCloseWithoutFreeze(t *testing.T) {
	a := agnara.New("app", nil)
	if err := a.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close() = %v", err)
	}
}

func TestFreezeIdempotent(t *testing.T) {
	a := agnara.New("bad name", nil)
	c1 := a.Capability(GetUser, nil)
	c2 := a.Capability(ListUsers, nil)

	caps1, cont1, err1 := freeze(a)
	caps2, cont2, err2 := freeze(a)
	want := []*agnara.Capability{c1, c2}
	if !reflect.DeepEqual(caps1, want) || !reflect.DeepEqual(caps2, want) {
		t.Fatalf("Freeze() capabilities = %v then %v, want %v", caps1, caps2, want)
	}
	if cont1 == nil || cont1 != cont2 {
		t.Fatalf("Freeze() built different containers: %p then %p", cont1, cont2)
	}
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("Freeze() errors differ: %v then %v", err1, err2)
	}
	// The returned slice is a copy.
	caps1[0] = nil
	if caps3, _, _ := freeze(a); caps3[0] != c1 {
		t.Fatal("mutating the slice returned by Freeze changed the application")
	}
}

func TestCapabilitiesOrderAndCopy(t *testing.T) {
	a := agnara.New("app", nil)
	c1 := a.Capability(GetUser, nil)
	c2 := a.Capability(ListUsers, nil)
	c3 := a.Capability(GetUserByID, nil)
	got := a.Capabilities()
	if want := []*agnara.Capability{c1, c2, c3}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Capabilities() = %v, want %v", got, want)
	}
	got[0] = nil
	if a.Capabilities()[0] != c1 {
		t.Fatal("mutating the slice returned by Capabilities changed the application")
	}
}

func TestRegistrationAfterFreeze(t *testing.T) {
	a := agnara.New("app", nil)
	early := a.Capability(GetUser, nil)
	if _, _, err := freeze(a); err != nil {
		t.Fatalf("first Freeze() = %v", err)
	}

	late, at := a.Capability(ListUsers, nil), here()
	err := errOf(late)
	if !errors.Is(err, agnara.ErrFrozen) {
		t.Fatalf("errOf(late) = %v, want ErrFrozen", err)
	}
	if !strings.Contains(err.Error(), at+": app.list_users: ") {
		t.Errorf("errOf(late) = %q, want it positioned at %s with the identity", err, at)
	}
	if late.Name() != "list_users" || late.App() != a {
		t.Errorf("late capability: name %q, app %v", late.Name(), late.App())
	}

	caps, _, err := freeze(a)
	if !errors.Is(err, agnara.ErrFrozen) {
		t.Fatalf("Freeze() after a late registration = %v, want ErrFrozen", err)
	}
	if !strings.Contains(err.Error(), at+": ") {
		t.Errorf("Freeze() error %q does not name the late registration site %s", err, at)
	}
	if want := []*agnara.Capability{early}; !reflect.DeepEqual(caps, want) {
		t.Errorf("Freeze() capabilities = %v, want only %v", caps, want)
	}
	if got := a.Capabilities(); !reflect.DeepEqual(got, []*agnara.Capability{early}) {
		t.Errorf("Capabilities() = %v, want only %v", got, early)
	}
	if errOf(early) != nil {
		t.Errorf("errOf(early) = %v, want nil", errOf(early))
	}
}

func TestDuplicateCapabilityName(t *testing.T) {
	tests := []struct {
		name     string
		register func(a *agnara.App) (first, second string)
	}{
		{"default names", func(a *agnara.App) (string, string) {
			_, first := a.Capability(GetUser, nil), here()
			_, second := a.Capability(GetUser, nil), here()
			return first, second
		}},
		{"explicit name equals default name", func(a *agnara.App) (string, string) {
			_, first := a.Capability(GetUser, nil), here()
			_, second := a.Capability(ListUsers, &agnara.CapabilityOptions{Name: "get_user"}), here()
			return first, second
		}},
		{"explicit names", func(a *agnara.App) (string, string) {
			_, first := a.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "x"}), here()
			_, second := a.Capability(func() error { return nil }, &agnara.CapabilityOptions{Name: "x"}), here()
			return first, second
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agnara.New("app", nil)
			first, second := tt.register(a)
			_, _, err := freeze(a)
			if err == nil {
				t.Fatal("Freeze() = nil, want a duplicate name error")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, second+": app.") {
				t.Errorf("error %q is not positioned at the second registration %s", msg, second)
			}
			if !strings.Contains(msg, "duplicate capability name (first registered at "+first+")") {
				t.Errorf("error %q does not name the first registration %s", msg, first)
			}
			if strings.Count(msg, "duplicate capability name") != 1 {
				t.Errorf("error %q reports the duplicate more than once", msg)
			}
		})
	}
}

func TestThirdDuplicateIsReportedOnce(t *testing.T) {
	a := agnara.New("app", nil)
	_, first := a.Capability(GetUser, nil), here()
	a.Capability(GetUser, nil)
	_, third := a.Capability(GetUser, nil), here()
	_, _, err := freeze(a)
	if err == nil {
		t.Fatal("Freeze() = nil, want duplicate name errors")
	}
	if n := strings.Count(err.Error(), "duplicate capability name"); n != 2 {
		t.Errorf("got %d duplicate errors, want 2 (one per extra registration):\n%v", n, err)
	}
	if !strings.Contains(err.Error(), third+": app.get_user: duplicate capability name (first registered at "+first+")") {
		t.Errorf("third registration not reported against the first:\n%v", err)
	}
}

func TestDistinctNamesAreNotDuplicates(t *testing.T) {
	a := agnara.New("app", nil)
	a.Capability(GetUser, nil)
	a.Capability(GetUser, &agnara.CapabilityOptions{Name: "get_user2"})
	a.Capability(GetUserByID, nil)
	// Case matters for names as it does for identities.
	a.Capability(GetUser, &agnara.CapabilityOptions{Name: "Get_user"})
	if _, _, err := freeze(a); err != nil {
		t.Fatalf("Freeze() = %v, want nil", err)
	}
}

// TestConcurrentRegistration is meaningful under -race.
func TestConcurrentRegistration(t *testing.T) {
	a := agnara.New("app", nil)
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			a.Capability(GetUser, &agnara.CapabilityOptions{Name: "cap_" + string(rune('a'+i))})
			_ = a.Capabilities()
		})
	}
	wg.Wait()
	caps, _, err := freeze(a)
	if err != nil {
		t.Fatalf("Freeze() = %v", err)
	}
	if len(caps) != n {
		t.Fatalf("registered %d capabilities, want %d", len(caps), n)
	}
	seen := map[string]bool{}
	for _, c := range caps {
		seen[c.Name()] = true
	}
	if len(seen) != n {
		t.Fatalf("got %d distinct names, want %d", len(seen), n)
	}
}
