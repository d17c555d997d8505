package approval

import (
	"fmt"
	"time"
)

// Options configure a store. A nil *Options means every default; each zero
// field is its documented default. The struct is copied on entry. Safe for
// concurrent use once passed (it is not retained).
type Options struct {
	// ApproverScope is the scope a principal must hold to approve, reject,
	// cancel someone else's approval or reconcile. Default
	// "approvals:approve".
	ApproverScope string
	// PendingTTL is how long a pending approval waits for a decision.
	// Default 24h.
	PendingTTL time.Duration
	// ApprovedTTL is how long an approved approval waits to be claimed for
	// dispatch. Default 1h.
	ApprovedTTL time.Duration
	// Clock returns the current time. Default time.Now. Tests set it to
	// drive expiry.
	Clock func() time.Time
}

// DefaultApproverScope is the default Options.ApproverScope.
const DefaultApproverScope = "approvals:approve"

func (o *Options) withDefaults() (Options, error) {
	var c Options
	if o != nil {
		c = *o
	}
	if c.ApproverScope == "" {
		c.ApproverScope = DefaultApproverScope
	}
	if c.PendingTTL < 0 || c.ApprovedTTL < 0 {
		return c, fmt.Errorf("%w: negative TTL in options", ErrInvalid)
	}
	if c.PendingTTL == 0 {
		c.PendingTTL = 24 * time.Hour
	}
	if c.ApprovedTTL == 0 {
		c.ApprovedTTL = time.Hour
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	return c, nil
}
