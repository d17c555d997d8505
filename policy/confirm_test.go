package policy_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agnara-go/agnara/policy"
)

func TestBoundVerifier(t *testing.T) {
	req := policy.Request{Principal: policy.NewPrincipal("alice", nil), Capability: "users.delete_user"}
	const digest = "sha256:abc"
	tests := []struct {
		name   string
		digest string
		ev     policy.Confirmation
		allow  bool
	}{
		{"accepted and matching", digest, policy.Confirmation{Capability: "users.delete_user", ArgumentsDigest: digest, Accepted: true}, true},
		{"declined", digest, policy.Confirmation{Capability: "users.delete_user", ArgumentsDigest: digest, Accepted: false}, false},
		{"wrong capability", digest, policy.Confirmation{Capability: "users.create_user", ArgumentsDigest: digest, Accepted: true}, false},
		{"capability case differs", digest, policy.Confirmation{Capability: "Users.delete_user", ArgumentsDigest: digest, Accepted: true}, false},
		{"wrong digest", digest, policy.Confirmation{Capability: "users.delete_user", ArgumentsDigest: "sha256:other", Accepted: true}, false},
		{"evidence for other arguments", "sha256:new", policy.Confirmation{Capability: "users.delete_user", ArgumentsDigest: digest, Accepted: true}, false},
		{"empty evidence", digest, policy.Confirmation{}, false},
		{"wrong capability and declined", digest, policy.Confirmation{Capability: "x.y", ArgumentsDigest: digest}, false},
	}
	var v policy.ConfirmationVerifier = policy.Bound{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := v.VerifyConfirmation(context.Background(), req, tt.digest, tt.ev)
			if tt.allow {
				if err != nil {
					t.Fatalf("VerifyConfirmation = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("VerifyConfirmation = nil, want a denial")
			}
			if !policy.IsDenial(err) {
				t.Fatalf("VerifyConfirmation = %T %v, want a *policy.Denial", err, err)
			}
			if err.Error() == "" {
				t.Fatal("denial has an empty message")
			}
		})
	}
}

func TestBoundVerifierEmptyCapabilityAndDigest(t *testing.T) {
	// Matching is by equality: evidence for the same (empty) capability and
	// digest is accepted; this pins that no hidden rule is applied.
	err := policy.Bound{}.VerifyConfirmation(context.Background(), policy.Request{}, "", policy.Confirmation{Accepted: true})
	if err != nil {
		t.Fatalf("VerifyConfirmation = %v, want nil", err)
	}
}

func TestVerifyFuncAdapter(t *testing.T) {
	sentinel := errors.New("verifier failed")
	req := policy.Request{Capability: "app.cap", Input: func() (any, error) { return "in", nil }}
	ev := policy.Confirmation{Capability: "app.cap", ArgumentsDigest: "d", Accepted: true}
	for _, ret := range []error{nil, sentinel, policy.Deny("no")} {
		called := 0
		var v policy.ConfirmationVerifier = policy.VerifyFunc(func(ctx context.Context, gotReq policy.Request, gotDigest string, gotEv policy.Confirmation) error {
			called++
			if ctx.Value(ctxKey{}) != "marker" {
				t.Error("VerifyFunc did not pass the context through")
			}
			if in, _ := gotReq.Input(); gotReq.Capability != req.Capability || in != "in" {
				t.Errorf("request = %+v, want %+v", gotReq, req)
			}
			if gotDigest != "d" {
				t.Errorf("digest = %q, want d", gotDigest)
			}
			if gotEv != ev {
				t.Errorf("evidence = %+v, want %+v", gotEv, ev)
			}
			return ret
		})
		ctx := context.WithValue(context.Background(), ctxKey{}, "marker")
		if err := v.VerifyConfirmation(ctx, req, "d", ev); err != ret {
			t.Errorf("VerifyConfirmation = %v, want %v", err, ret)
		}
		if called != 1 {
			t.Errorf("function called %d times, want 1", called)
		}
	}
}
