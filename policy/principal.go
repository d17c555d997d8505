package policy

import (
	"maps"
	"slices"
	"strconv"
)

// Principal is the caller of one invocation: an identity, the scopes it holds
// and optional attributes chosen by the application.
//
// A Principal is an immutable value: accessors return copies, and the With
// methods derive a new Principal. The zero value is the anonymous principal,
// which holds no scopes. Principal values are safe for concurrent use.
type Principal struct {
	id     string
	issuer string
	scopes []string          // sorted, unique
	attrs  map[string]string // never mutated after construction
}

// NewPrincipal returns a principal with the given id and scopes. Duplicate and
// empty scopes are dropped; the slice is copied. An empty id yields an
// anonymous principal that nevertheless holds the given scopes, which is how an
// application grants scopes to callers it cannot identify.
func NewPrincipal(id string, scopes []string) Principal {
	return Principal{id: id, scopes: normalizeScopes(scopes)}
}

// Anonymous returns the principal used when a request carries no credential.
// It is the zero Principal.
func Anonymous() Principal { return Principal{} }

// ID returns the principal's identifier, or "" for an anonymous principal.
func (p Principal) ID() string { return p.id }

// Issuer returns the authority that vouched for the identity (for OAuth, the
// token issuer), or "" when none was set.
func (p Principal) Issuer() string { return p.issuer }

// IsAnonymous reports whether the principal carries no identity.
func (p Principal) IsAnonymous() bool { return p.id == "" }

// Key returns what "the same caller" means: one string for the issuer and
// the id together, equal for two principals exactly when both their
// issuers and their ids are equal. The same id vouched for by another
// issuer is another caller. Scopes and attributes are not part of it.
//
// Every owner check, cap, rate limit and binding compares callers by Key
// (a session, a task, a sealed request state, a rate-limit bucket).
// Approvals add one rule on top: self-approval also refuses an approver
// whose id only looks like the requester's, whatever the issuers (ADR
// 0058, ADR 0066).
//
// The key is the issuer's length in decimal, a colon, the issuer, then the
// id: unambiguous whatever the issuer and the id contain. An anonymous
// principal's key is "": anonymous callers cannot be told apart, so they
// are one caller wherever keys are compared, and a check that must tell
// people apart refuses them first. Store the issuer and the id, not the
// key, in records meant to be read.
func (p Principal) Key() string {
	if p.id == "" {
		return ""
	}
	return strconv.Itoa(len(p.issuer)) + ":" + p.issuer + p.id
}

// Scopes returns a sorted copy of the scopes the principal holds.
func (p Principal) Scopes() []string { return slices.Clone(p.scopes) }

// HasScope reports whether the principal holds scope exactly. Implications
// between scopes are applied by [Scopes], not here.
func (p Principal) HasScope(scope string) bool {
	_, ok := slices.BinarySearch(p.scopes, scope)
	return ok
}

// Attribute returns the value of the application-defined attribute key.
func (p Principal) Attribute(key string) (string, bool) {
	v, ok := p.attrs[key]
	return v, ok
}

// Attributes returns a copy of the principal's attributes.
func (p Principal) Attributes() map[string]string { return maps.Clone(p.attrs) }

// WithIssuer returns a copy of p whose issuer is issuer.
func (p Principal) WithIssuer(issuer string) Principal {
	p.issuer = issuer
	return p
}

// WithAttributes returns a copy of p with attrs merged over its existing
// attributes. The map is copied.
func (p Principal) WithAttributes(attrs map[string]string) Principal {
	merged := make(map[string]string, len(p.attrs)+len(attrs))
	maps.Copy(merged, p.attrs)
	maps.Copy(merged, attrs)
	p.attrs = merged
	return p
}

// WithScopes returns a copy of p holding exactly scopes.
func (p Principal) WithScopes(scopes []string) Principal {
	p.scopes = normalizeScopes(scopes)
	return p
}

func normalizeScopes(scopes []string) []string {
	if len(scopes) == 0 {
		return nil
	}
	out := make([]string, 0, len(scopes))
	for _, s := range scopes {
		if s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
