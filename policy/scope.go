package policy

// Implication reports whether holding the scope held also grants the scope
// required. It is consulted only when the principal does not hold required
// exactly, so it never needs to handle held == required.
type Implication func(held, required string) bool

// Scopes checks declared scopes against a principal. The zero value matches
// scopes exactly. Scopes values are safe for concurrent use as long as Implies
// is.
type Scopes struct {
	// Implies, when non-nil, lets a broader scope grant narrower ones. See
	// [Hierarchy] for the common "a:b implies a:b:c" rule.
	Implies Implication
}

// Allows reports whether p holds every scope in required.
func (s Scopes) Allows(p Principal, required []string) bool {
	for _, r := range required {
		if !s.holds(p, r) {
			return false
		}
	}
	return true
}

// Missing returns the scopes in required that p does not hold, in the order
// given, or nil when p holds them all. It allocates only when something is
// missing.
func (s Scopes) Missing(p Principal, required []string) []string {
	var missing []string
	for _, r := range required {
		if !s.holds(p, r) {
			missing = append(missing, r)
		}
	}
	return missing
}

func (s Scopes) holds(p Principal, required string) bool {
	if p.HasScope(required) {
		return true
	}
	if s.Implies == nil {
		return false
	}
	for _, held := range p.scopes {
		if s.Implies(held, required) {
			return true
		}
	}
	return false
}

// Hierarchy returns an Implication under which a scope implies every scope
// that extends it after sep: with sep ":", "users" implies "users:read" and
// "users:read:email", but not "users2" or "admin".
func Hierarchy(sep string) Implication {
	return func(held, required string) bool {
		return sep != "" && len(required) > len(held)+len(sep) &&
			required[:len(held)] == held && required[len(held):len(held)+len(sep)] == sep
	}
}
