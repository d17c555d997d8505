package agnara

import (
	"fmt"
	"math"
)

// RateLimit is a token bucket: a caller may make Burst calls at once, and
// the bucket refills at Rate calls per second. It is declared per capability
// in [CapabilityOptions.RateLimit], or as a default for every tool of a
// server; it is counted per capability and caller (principal id and issuer;
// anonymous callers share one bucket per capability).
//
// The zero RateLimit declares no limit. A RateLimit is a plain value, safe
// to copy and share.
type RateLimit struct {
	// Rate is how many calls per second the bucket refills; it must be
	// positive and finite. 0.5 is one call every two seconds.
	Rate float64
	// Burst is how many calls may be made at once, at least 1.
	Burst int
}

// IsZero reports whether l declares no limit.
func (l RateLimit) IsZero() bool { return l == RateLimit{} }

// Validate reports why a declared limit cannot be enforced, or nil. The
// zero RateLimit is valid (no limit).
func (l RateLimit) Validate() error {
	if l.IsZero() {
		return nil
	}
	if !(l.Rate > 0) || math.IsInf(l.Rate, 0) {
		return fmt.Errorf("rate limit: Rate %v must be a positive, finite number of calls per second", l.Rate)
	}
	if l.Burst < 1 {
		return fmt.Errorf("rate limit: Burst %d must be at least 1", l.Burst)
	}
	return nil
}
