package policy

import "context"

// Confirmation is evidence that a caller answered the confirmation prompt of
// one invocation. It is produced by trusted adapter code (for MCP, after the
// sealed request state of an earlier round was verified), never taken from
// caller input directly.
type Confirmation struct {
	// Capability is the identity of the capability that was confirmed.
	Capability string
	// ArgumentsDigest is the digest, as computed by the execution package, of
	// the arguments that were shown to the caller when confirmation was asked.
	ArgumentsDigest string
	// Accepted reports whether the caller said yes.
	Accepted bool
}

// ConfirmationVerifier decides whether evidence of confirmation allows an
// invocation to go on. It runs after every [Policy] of the capability. It
// returns nil to allow, and otherwise an error interpreted as for
// [Policy.Evaluate].
//
// digest is the digest of the arguments of the invocation being verified;
// evidence minted for other arguments must be refused.
//
// Implementations must be safe for concurrent use.
type ConfirmationVerifier interface {
	VerifyConfirmation(ctx context.Context, req Request, digest string, evidence Confirmation) error
}

// VerifyFunc adapts an ordinary function to the [ConfirmationVerifier]
// interface.
type VerifyFunc func(ctx context.Context, req Request, digest string, evidence Confirmation) error

// VerifyConfirmation calls f(ctx, req, digest, evidence).
func (f VerifyFunc) VerifyConfirmation(ctx context.Context, req Request, digest string, evidence Confirmation) error {
	return f(ctx, req, digest, evidence)
}

// Bound is the default [ConfirmationVerifier]: it allows an invocation only
// when the evidence was accepted and names the same capability and the same
// arguments digest. A refused confirmation is a [Denial]. Bound is safe for
// concurrent use.
type Bound struct{}

// VerifyConfirmation implements [ConfirmationVerifier].
func (Bound) VerifyConfirmation(_ context.Context, req Request, digest string, ev Confirmation) error {
	switch {
	case ev.Capability != req.Capability || ev.ArgumentsDigest != digest:
		return Deny("the confirmation does not match this call")
	case !ev.Accepted:
		return Deny("the caller declined the confirmation")
	}
	return nil
}
