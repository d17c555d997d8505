package policy

import (
	"context"
	"errors"
)

// Request is what a [Policy] sees of one invocation. It is built by the
// runtime after the caller's scopes were checked and before the input is
// validated or any dependency is constructed.
type Request struct {
	// Principal is the caller.
	Principal Principal
	// Capability is the identity of the capability being invoked, such as
	// "users.delete_user".
	Capability string
	// Input returns the decoded input: the capability's input struct value,
	// the raw JSON for a capability that takes json.RawMessage, or nil for a
	// capability without input. It validates and decodes the arguments on
	// its first call (later calls return the same value); when they are
	// invalid it returns the invalid_input failure, which the policy
	// returns as is. Policies that decide on the caller alone never call
	// it, so a denied caller learns nothing about what the input should
	// be. Policies must not modify the value. Nil only in a Request a test
	// builds by hand.
	Input func() (any, error)
}

// Policy is an application rule evaluated for every invocation of the
// capabilities it is attached to, in declaration order, after the scope guard
// and before input validation (see [Request.Input]).
//
// Evaluate returns nil to allow the invocation. To refuse it, return a
// [Denial] (made with [Deny]), which the caller receives as a "forbidden"
// failure carrying the denial's message; a canonical failure from the
// execution package, which the caller receives as is; or any other error,
// which is treated as an internal failure: the caller sees a fixed safe
// message and the error goes to the server log.
//
// Implementations must be safe for concurrent use.
type Policy interface {
	Evaluate(ctx context.Context, req Request) error
}

// Func adapts an ordinary function to the [Policy] interface.
type Func func(ctx context.Context, req Request) error

// Evaluate calls f(ctx, req).
func (f Func) Evaluate(ctx context.Context, req Request) error { return f(ctx, req) }

// Denial is the error a [Policy] returns to refuse an invocation. Its message
// is shown to the caller, so it must not contain secrets.
type Denial struct {
	msg string
}

// Deny returns a Denial with the caller-safe message msg.
func Deny(msg string) *Denial { return &Denial{msg: msg} }

// Error returns the caller-safe message.
func (d *Denial) Error() string { return d.msg }

// IsDenial reports whether err is or wraps a [Denial].
func IsDenial(err error) bool {
	var d *Denial
	return errors.As(err, &d)
}
