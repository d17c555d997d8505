package policy_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

var (
	_ policy.Policy               = policy.Func(nil)
	_ policy.ConfirmationVerifier = policy.Bound{}
	_ policy.ConfirmationVerifier = policy.VerifyFunc(nil)
	_ error                       = (*policy.Denial)(nil)
)

type ctxKey struct{}

func TestFuncAdapter(t *testing.T) {
	sentinel := errors.New("boom")
	tests := []struct {
		name string
		ret  error
	}{
		{"allow", nil},
		{"deny", policy.Deny("no")},
		{"other error", sentinel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.WithValue(context.Background(), ctxKey{}, "marker")
			req := policy.Request{
				Principal:  policy.NewPrincipal("alice", []string{"s"}),
				Capability: "users.delete_user",
				Input:      func() (any, error) { return 42, nil },
			}
			called := 0
			var p policy.Policy = policy.Func(func(gotCtx context.Context, gotReq policy.Request) error {
				called++
				if gotCtx.Value(ctxKey{}) != "marker" {
					t.Error("Func did not pass the context through")
				}
				if in, _ := gotReq.Input(); gotReq.Capability != req.Capability || in != 42 || gotReq.Principal.ID() != "alice" {
					t.Errorf("Func received request %+v, want %+v", gotReq, req)
				}
				return tt.ret
			})
			err := p.Evaluate(ctx, req)
			if called != 1 {
				t.Fatalf("function called %d times, want 1", called)
			}
			if err != tt.ret {
				t.Fatalf("Evaluate = %v, want %v", err, tt.ret)
			}
		})
	}
}

func TestDeny(t *testing.T) {
	d := policy.Deny("only the owner may delete")
	if d.Error() != "only the owner may delete" {
		t.Fatalf("Error() = %q", d.Error())
	}
	var err error = d
	var target *policy.Denial
	if !errors.As(err, &target) || target != d {
		t.Fatal("errors.As did not find the *Denial")
	}
	if a, b := policy.Deny("a"), policy.Deny("a"); a == b {
		t.Error("Deny returned the same pointer twice")
	}
}

func TestIsDenial(t *testing.T) {
	d := policy.Deny("nope")
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"denial", d, true},
		{"wrapped", fmt.Errorf("checking owner: %w", d), true},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", d)), true},
		{"joined", errors.Join(errors.New("other"), d), true},
		{"plain error", errors.New("nope"), false},
		{"formatted without wrapping", fmt.Errorf("checking owner: %v", d), false},
	}
	for _, tt := range tests {
		if got := policy.IsDenial(tt.err); got != tt.want {
			t.Errorf("%s: IsDenial(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestWrappedDenialKeepsMessage(t *testing.T) {
	err := fmt.Errorf("policy owner: %w", policy.Deny("only the owner may delete"))
	var d *policy.Denial
	if !errors.As(err, &d) {
		t.Fatal("errors.As failed on a wrapped denial")
	}
	if d.Error() != "only the owner may delete" {
		t.Fatalf("unwrapped denial message = %q", d.Error())
	}
}
