package oidc

import "time"

// SetKeyClock makes v's key set measure its refetch interval with now and
// wait with after (a timer's channel, and a stop that frees it), for tests
// that move time by hand. Call it before v verifies a token.
func SetKeyClock(v *Verifier, now func() time.Time, after func(time.Duration) (<-chan time.Time, func() bool)) {
	v.keys.now, v.keys.after = now, after
}

// SetKeyFetchTimeout replaces the 30 s cut of one key-set fetch. Call it
// before v verifies a token.
func SetKeyFetchTimeout(v *Verifier, d time.Duration) { v.keys.fetchTimeout = d }

// SetKeyJoined makes v's key set call joined as a token starts waiting for
// a fetch in flight. Call it before v verifies a token.
func SetKeyJoined(v *Verifier, joined func()) { v.keys.joined = joined }

// DefaultKeyRefetchInterval is the default of [Options.KeyRefetchInterval].
const DefaultKeyRefetchInterval = defaultKeyRefetchInterval
