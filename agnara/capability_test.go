package agnara_test

import (
	"context"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/policy"
)

// Functions registered by the tests; only their names matter.

func FetchAll[T any](ctx context.Context) error { return nil }

func GetUser(ctx context.Context) error                            { return nil }
func GetUserByID(ctx context.Context) error                        { return nil }
func HTTPServer(ctx context.Context) error                         { return nil }
func ListV2Items(ctx context.Context) error                        { return nil }
func ThisCapabilityFunctionNameIsFarTooLong(context.Context) error { return nil }

type userService struct{}

func (*userService) ListUsers(ctx context.Context) error { return nil }
func (userService) CountUsers(ctx context.Context) error { return nil }

// ListUsers is also a plain function so that tests have a second distinct
// name at hand.
func ListUsers(ctx context.Context) error { return nil }

var packageLevelLiteral = func(ctx context.Context) error { return nil }

func funcPointer(fn any) uintptr { return reflect.ValueOf(fn).Pointer() }

func TestCapabilityDefaultName(t *testing.T) {
	svc := &userService{}
	tests := []struct {
		name string
		fn   any
		want string
	}{
		{"function", GetUser, "get_user"},
		{"initialism", GetUserByID, "get_user_by_id"},
		{"leading initialism", HTTPServer, "http_server"},
		{"digits", ListV2Items, "list_v2_items"},
		{"pointer method value", svc.ListUsers, "list_users"},
		{"value method value", userService{}.CountUsers, "count_users"},
		{"method expression", (*userService).ListUsers, "list_users"},
		{"generic function", FetchAll[int], "fetch_all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agnara.New("users", nil)
			c, at := a.Capability(tt.fn, nil), here()
			if err := errOf(c); err != nil {
				t.Fatalf("Err() = %v, want nil", err)
			}
			if c.Name() != tt.want {
				t.Fatalf("Name() = %q, want %q", c.Name(), tt.want)
			}
			if c.Identity() != "users."+tt.want || c.String() != c.Identity() {
				t.Errorf("Identity() = %q, String() = %q; want users.%s", c.Identity(), c.String(), tt.want)
			}
			if got := c.Options().Name; got != tt.want {
				t.Errorf("Options().Name = %q, want %q", got, tt.want)
			}
			if c.Site() != at {
				t.Errorf("Site() = %q, want %q", c.Site(), at)
			}
			if c.App() != a {
				t.Error("App() is not the registering application")
			}
			if funcPointer(funcOf(c)) != funcPointer(tt.fn) {
				t.Error("Func() is not the registered function")
			}
		})
	}
}

func TestCapabilityUnnamable(t *testing.T) {
	nested := func() any { return func(context.Context) error { return nil } }
	var nilFunc func(context.Context) error
	tests := []struct {
		name string
		fn   any
		want string
	}{
		{"closure", func(context.Context) error { return nil }, "set CapabilityOptions.Name"},
		{"package-level function literal", packageLevelLiteral, "set CapabilityOptions.Name"},
		{"nested closure", nested(), "set CapabilityOptions.Name"},
		{"nil", nil, "want a function, got <nil>"},
		{"typed nil function", nilFunc, "want a function, got func(context.Context) error"},
		{"not a function", 42, "want a function, got int"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agnara.New("app", nil)
			c, at := a.Capability(tt.fn, nil), here()
			err := errOf(c)
			if err == nil {
				t.Fatal("Err() = nil, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Err() = %q, want it to contain %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), at+": ") {
				t.Errorf("Err() = %q, want it positioned at %s", err, at)
			}
			if c.Name() != "" {
				t.Errorf("Name() = %q, want empty", c.Name())
			}
			// The mistake is reported, and the capability is still recorded so
			// that compilation reports it.
			if got := a.Capabilities(); len(got) != 1 || got[0] != c {
				t.Errorf("Capabilities() = %v, want [%v]", got, c)
			}
		})
	}
}

func TestCapabilityExplicitName(t *testing.T) {
	tests := []struct {
		name string
		fn   any
	}{
		{"overrides default", GetUser},
		{"names a closure", func(context.Context) error { return nil }},
		{"names a method value", (&userService{}).ListUsers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := agnara.New("users", nil)
			c := a.Capability(tt.fn, &agnara.CapabilityOptions{Name: "fetch-one"})
			if err := errOf(c); err != nil {
				t.Fatalf("Err() = %v, want nil", err)
			}
			if c.Name() != "fetch-one" || c.Identity() != "users.fetch-one" {
				t.Errorf("Name() = %q, Identity() = %q", c.Name(), c.Identity())
			}
		})
	}
}

func TestCapabilityNames(t *testing.T) {
	for _, name := range validNames {
		c := agnara.New("app", nil).Capability(GetUser, &agnara.CapabilityOptions{Name: name})
		if err := errOf(c); err != nil {
			t.Errorf("Name %q: Err() = %v, want nil", name, err)
		}
		if c.Identity() != "app."+name {
			t.Errorf("Name %q: Identity() = %q", name, c.Identity())
		}
	}
	for _, name := range invalidNames {
		c, at := agnara.New("app", nil).Capability(GetUser, &agnara.CapabilityOptions{Name: name}), here()
		err := errOf(c)
		if err == nil {
			t.Errorf("Name %q: Err() = nil, want an invalid name error", name)
			continue
		}
		want := at + ": app." + name + ": invalid capability name " + strconv.Quote(name)
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Name %q: Err() = %q, want it to contain %q", name, err, want)
		}
	}
}

func TestCapabilityDefaultNameIsValidated(t *testing.T) {
	c, at := agnara.New("app", nil).Capability(ThisCapabilityFunctionNameIsFarTooLong, nil), here()
	err := errOf(c)
	if err == nil {
		t.Fatal("Err() = nil for a default name longer than 32 characters")
	}
	if !strings.HasPrefix(err.Error(), at+": ") || !strings.Contains(err.Error(), "invalid capability name") {
		t.Fatalf("Err() = %q", err)
	}
}

func TestFrozenCapabilitiesCarryErr(t *testing.T) {
	// Mistakes in a registration's own options are reported by Err, which
	// compilation consults; they stay attached to the capability.
	a := agnara.New("app", nil)
	c := a.Capability(GetUser, &agnara.CapabilityOptions{Timeout: -1})
	caps, _, _ := freeze(a)
	if len(caps) != 1 || caps[0] != c || errOf(caps[0]) == nil {
		t.Fatalf("frozen capabilities %v do not carry the registration mistake", caps)
	}
}

func TestCapabilityOptionValidation(t *testing.T) {
	allow := policy.Func(func(context.Context, policy.Request) error { return nil })
	tests := []struct {
		name string
		opts agnara.CapabilityOptions
		want []string // substrings of Err(); none means valid
	}{
		{"zero", agnara.CapabilityOptions{}, nil},
		{"everything valid", agnara.CapabilityOptions{
			Title:       "Get user",
			Description: "Returns a user.",
			Scopes:      []string{"users:read", "https://api.example.com/users", "a!#[]~"},
			Policies:    []policy.Policy{allow, allow},
			Confirm:     "Really?",
			Timeout:     time.Second,
			Annotations: agnara.ReadOnly | agnara.Idempotent | agnara.OpenWorld,
		}, nil},
		{"destructive idempotent", agnara.CapabilityOptions{Scopes: []string{"users:admin"}, Annotations: agnara.Destructive | agnara.Idempotent | agnara.OpenWorld}, nil},
		{"zero timeout", agnara.CapabilityOptions{Timeout: 0}, nil},
		{"nil policy", agnara.CapabilityOptions{Policies: []policy.Policy{allow, nil}}, []string{"policy 1 is nil"}},
		{"nil policy first", agnara.CapabilityOptions{Policies: []policy.Policy{nil}}, []string{"policy 0 is nil"}},
		{"scope with space", agnara.CapabilityOptions{Scopes: []string{"users read"}}, []string{`invalid scope "users read"`}},
		{"scope with double quote", agnara.CapabilityOptions{Scopes: []string{`users"read`}}, []string{`invalid scope "users\"read"`}},
		{"scope with backslash", agnara.CapabilityOptions{Scopes: []string{`users\read`}}, []string{`invalid scope "users\\read"`}},
		{"empty scope", agnara.CapabilityOptions{Scopes: []string{""}}, []string{`invalid scope ""`}},
		{"scope with tab", agnara.CapabilityOptions{Scopes: []string{"a\tb"}}, []string{`invalid scope "a\tb"`}},
		{"non-ASCII scope", agnara.CapabilityOptions{Scopes: []string{"usérs"}}, []string{`invalid scope "usérs"`}},
		{"one bad scope among good", agnara.CapabilityOptions{Scopes: []string{"ok", "not ok", "fine"}}, []string{`invalid scope "not ok"`}},
		{"negative timeout", agnara.CapabilityOptions{Timeout: -time.Second}, []string{"negative timeout -1s"}},
		{"rate limit", agnara.CapabilityOptions{RateLimit: agnara.RateLimit{Rate: 0.5, Burst: 1}}, nil},
		{"rate limit without rate", agnara.CapabilityOptions{RateLimit: agnara.RateLimit{Burst: 3}}, []string{"rate limit: Rate 0 must be a positive"}},
		{"rate limit without burst", agnara.CapabilityOptions{RateLimit: agnara.RateLimit{Rate: 2}}, []string{"rate limit: Burst 0 must be at least 1"}},
		{"negative rate", agnara.CapabilityOptions{RateLimit: agnara.RateLimit{Rate: -1, Burst: 1}}, []string{"Rate -1 must be a positive"}},
		{"infinite rate", agnara.CapabilityOptions{RateLimit: agnara.RateLimit{Rate: math.Inf(1), Burst: 1}}, []string{"Rate +Inf must be a positive"}},
		{"NaN rate", agnara.CapabilityOptions{RateLimit: agnara.RateLimit{Rate: math.NaN(), Burst: 1}}, []string{"Rate NaN must be a positive"}},
		{"read-only and destructive", agnara.CapabilityOptions{Annotations: agnara.ReadOnly | agnara.Destructive}, []string{"ReadOnly and Destructive contradict"}},
		{"all four annotations", agnara.CapabilityOptions{Annotations: agnara.ReadOnly | agnara.Destructive | agnara.Idempotent | agnara.OpenWorld}, []string{"ReadOnly and Destructive contradict"}},
		{"unknown annotation bit", agnara.CapabilityOptions{Annotations: 1 << 4}, []string{"unknown annotations 0x10"}},
		{"unknown high bit with known", agnara.CapabilityOptions{Annotations: agnara.ReadOnly | 1<<7}, []string{"unknown annotations 0x81"}},
		{"several mistakes at once", agnara.CapabilityOptions{
			Scopes:      []string{"a b"},
			Policies:    []policy.Policy{nil},
			Timeout:     -1,
			Annotations: agnara.ReadOnly | agnara.Destructive,
		}, []string{`invalid scope "a b"`, "policy 0 is nil", "negative timeout", "contradict"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			c, at := agnara.New("app", nil).Capability(GetUser, &opts), here()
			err := errOf(c)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Err() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Err() = nil, want errors containing %q", tt.want)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("Err() has %d mistakes, want %d: %q", len(lines), len(tt.want), err)
			}
			for _, w := range tt.want {
				found := false
				for _, l := range lines {
					if strings.Contains(l, w) {
						found = true
						if !strings.HasPrefix(l, at+": app.get_user: ") {
							t.Errorf("mistake %q is not positioned at %s with the identity", l, at)
						}
					}
				}
				if !found {
					t.Errorf("Err() = %q, want a mistake containing %q", err, w)
				}
			}
		})
	}
}

func TestCapabilityOptionsCopied(t *testing.T) {
	p1 := policy.Func(func(context.Context, policy.Request) error { return nil })
	p2 := policy.Func(func(context.Context, policy.Request) error { return policy.Deny("no") })
	opts := &agnara.CapabilityOptions{
		Title:       "T",
		Description: "D",
		Scopes:      []string{"a", "b"},
		Policies:    []policy.Policy{p1},
		Confirm:     "Sure?",
		Timeout:     time.Minute,
		Annotations: agnara.ReadOnly,
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}
	c := agnara.New("app", nil).Capability(GetUser, opts)

	// Mutating the caller's struct and slices after registration changes
	// nothing.
	opts.Title = "changed"
	opts.Name = "changed"
	opts.Scopes[0] = "zzz"
	opts.Policies[0] = p2
	opts.InputSchema[2] = 'X'
	opts.Timeout = 0

	check := func(when string) {
		t.Helper()
		o := c.Options()
		if o.Name != "get_user" || o.Title != "T" || o.Description != "D" || o.Confirm != "Sure?" ||
			o.Timeout != time.Minute || o.Annotations != agnara.ReadOnly {
			t.Fatalf("%s: Options() = %+v", when, o)
		}
		if !slices.Equal(o.Scopes, []string{"a", "b"}) {
			t.Fatalf("%s: Options().Scopes = %q, want [a b]", when, o.Scopes)
		}
		if len(o.Policies) != 1 || o.Policies[0].Evaluate(context.Background(), policy.Request{}) != nil {
			t.Fatalf("%s: Options().Policies changed", when)
		}
		if string(o.InputSchema) != `{"type":"object"}` {
			t.Fatalf("%s: Options().InputSchema = %s", when, o.InputSchema)
		}
	}
	check("after mutating the caller's options")

	// Mutating what Options returns changes nothing either.
	o := c.Options()
	o.Scopes[0] = "zzz"
	o.Scopes = append(o.Scopes[:1], "injected")
	o.Policies[0] = p2
	o.InputSchema[2] = 'X'
	o.Name = "other"
	check("after mutating a returned copy")
	if c.Name() != "get_user" {
		t.Fatalf("Name() = %q after mutating Options()", c.Name())
	}
}

func TestDefinitionCarriesTheRegistrationSite(t *testing.T) {
	c, at := agnara.New("app", nil).Capability(GetUser, nil), here()
	if got := registry.Define(c).Site.String(); got != at || c.Site() != at {
		t.Fatalf("Define(c).Site = %s, Site() = %s, want %s", got, c.Site(), at)
	}
}

func TestAnnotationsHas(t *testing.T) {
	tests := []struct {
		a, b agnara.Annotations
		want bool
	}{
		{0, 0, true},
		{agnara.ReadOnly, 0, true},
		{0, agnara.ReadOnly, false},
		{agnara.ReadOnly, agnara.ReadOnly, true},
		{agnara.ReadOnly | agnara.Idempotent, agnara.ReadOnly, true},
		{agnara.ReadOnly | agnara.Idempotent, agnara.Idempotent, true},
		{agnara.ReadOnly | agnara.Idempotent, agnara.ReadOnly | agnara.Idempotent, true},
		{agnara.ReadOnly, agnara.ReadOnly | agnara.Idempotent, false},
		{agnara.Destructive | agnara.OpenWorld, agnara.OpenWorld, true},
		{agnara.Destructive | agnara.OpenWorld, agnara.ReadOnly, false},
	}
	for _, tt := range tests {
		if got := tt.a.Has(tt.b); got != tt.want {
			t.Errorf("(%v).Has(%v) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
	// The four annotations are distinct bits.
	all := []agnara.Annotations{agnara.ReadOnly, agnara.Destructive, agnara.Idempotent, agnara.OpenWorld}
	for i, x := range all {
		for j, y := range all {
			if i != j && x.Has(y) {
				t.Errorf("%v.Has(%v) = true", x, y)
			}
		}
	}
}

func TestAnnotationsString(t *testing.T) {
	tests := []struct {
		a    agnara.Annotations
		want string
	}{
		{0, "none"},
		{agnara.ReadOnly, "read-only"},
		{agnara.Destructive, "destructive"},
		{agnara.Idempotent, "idempotent"},
		{agnara.OpenWorld, "open-world"},
		{agnara.ReadOnly | agnara.Idempotent, "read-only|idempotent"},
		{agnara.Idempotent | agnara.ReadOnly, "read-only|idempotent"},
		{agnara.Destructive | agnara.OpenWorld, "destructive|open-world"},
		{agnara.ReadOnly | agnara.Destructive | agnara.Idempotent | agnara.OpenWorld, "read-only|destructive|idempotent|open-world"},
	}
	for _, tt := range tests {
		if got := tt.a.String(); got != tt.want {
			t.Errorf("Annotations(%#x).String() = %q, want %q", uint8(tt.a), got, tt.want)
		}
	}
}
