package policy_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agnara-go/agnara/policy"
)

func ExampleNewPrincipal() {
	p := policy.NewPrincipal("alice", []string{"users:write", "users:read", "users:read", ""})
	fmt.Println(p.ID(), p.IsAnonymous(), p.Scopes())
	fmt.Println(policy.Anonymous().IsAnonymous())
	// Output:
	// alice false [users:read users:write]
	// true
}

func ExampleScopes_Allows() {
	p := policy.NewPrincipal("alice", []string{"users:read"})
	var exact policy.Scopes
	fmt.Println(exact.Allows(p, []string{"users:read"}))
	fmt.Println(exact.Allows(p, []string{"users:read", "users:write"}))
	// Output:
	// true
	// false
}

func ExampleScopes_Missing() {
	p := policy.NewPrincipal("alice", []string{"users:read"})
	var exact policy.Scopes
	fmt.Println(exact.Missing(p, []string{"admin", "users:read", "users:write"}))
	fmt.Println(exact.Missing(p, []string{"users:read"}) == nil)
	// Output:
	// [admin users:write]
	// true
}

func ExampleHierarchy() {
	s := policy.Scopes{Implies: policy.Hierarchy(":")}
	p := policy.NewPrincipal("alice", []string{"users"})
	for _, required := range []string{"users", "users:read", "users:read:email", "users2", "admin"} {
		fmt.Println(required, s.Allows(p, []string{required}))
	}
	// Output:
	// users true
	// users:read true
	// users:read:email true
	// users2 false
	// admin false
}

// A policy that decides on the arguments reads them with req.Input, which
// validates and decodes them on first use; a policy that decides on the
// caller alone never does, so a caller it denies learns nothing about the
// input.
func ExampleFunc() {
	type DeleteInput struct{ Owner string }
	ownerOnly := policy.Func(func(ctx context.Context, req policy.Request) error {
		in, err := req.Input()
		if err != nil {
			return err // invalid_input, as is
		}
		if in.(DeleteInput).Owner != req.Principal.ID() {
			return policy.Deny("only the owner may delete")
		}
		return nil
	})
	alice := policy.NewPrincipal("alice", nil)
	input := func(owner string) func() (any, error) {
		return func() (any, error) { return DeleteInput{Owner: owner}, nil }
	}
	fmt.Println(ownerOnly.Evaluate(context.Background(), policy.Request{Principal: alice, Capability: "users.delete_user", Input: input("alice")}))
	err := ownerOnly.Evaluate(context.Background(), policy.Request{Principal: alice, Capability: "users.delete_user", Input: input("bob")})
	fmt.Println(err, policy.IsDenial(err))
	// Output:
	// <nil>
	// only the owner may delete true
}

func ExampleDeny() {
	err := fmt.Errorf("owner policy: %w", policy.Deny("only the owner may delete"))
	fmt.Println(policy.IsDenial(err))
	var d *policy.Denial
	if errors.As(err, &d) {
		fmt.Println(d)
	}
	fmt.Println(policy.IsDenial(errors.New("database down")))
	// Output:
	// true
	// only the owner may delete
	// false
}

// Key is "the same caller": the same id from another issuer is another
// caller, and anonymous callers share the key "".
func ExamplePrincipal_Key() {
	a := policy.NewPrincipal("sam", nil).WithIssuer("https://a.example")
	b := policy.NewPrincipal("sam", nil).WithIssuer("https://b.example")
	fmt.Println(a.Key())
	fmt.Println(a.Key() == b.Key())
	fmt.Println(a.Key() == a.WithScopes([]string{"admin"}).Key())
	fmt.Printf("%q\n", policy.Anonymous().Key())
	// Output:
	// 17:https://a.examplesam
	// false
	// true
	// ""
}
