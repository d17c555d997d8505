package execution

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/policy"
	"golang.org/x/time/rate"
)

// ReasonRateLimited is the [Reason] of the [Unavailable] failure of a call
// refused by a rate limit. Its details carry "retry_after_ms", the number of
// milliseconds after which the same call would be admitted.
const ReasonRateLimited Reason = "rate_limited"

// Limiter counts calls against rate limits (see [agnara.RateLimit]). It is
// the extension point for where the counts live: [LocalLimiter] keeps them
// in this process; package redislimit shares them between instances.
//
// Allow admits one call under key and limit, or refuses it and says how
// long to wait before the call would be admitted. A refused call is not
// counted. It returns an error, and refuses, when it cannot decide (its
// store is unavailable); the plan then refuses the call as Unavailable: a
// limiter that cannot count fails closed unless it decides otherwise
// itself. key identifies the capability and the caller; it is opaque,
// stable across processes and versions of one deployment, and never empty.
// limit is never the zero RateLimit and has passed
// [agnara.RateLimit.Validate].
//
// Implementations must be safe for concurrent use.
type Limiter interface {
	Allow(ctx context.Context, key string, limit agnara.RateLimit) (retryAfter time.Duration, ok bool, err error)
}

// defaultLimiterKeys is the number of keys a [LocalLimiter] keeps when
// [LocalLimiterOptions.MaxKeys] is zero.
const defaultLimiterKeys = 65536

// LocalLimiterOptions configures a [LocalLimiter]. A nil
// *LocalLimiterOptions and every zero field mean the documented default.
type LocalLimiterOptions struct {
	// MaxKeys bounds how many callers' buckets are kept. When a new key
	// would exceed it, the least recently used bucket is dropped; its
	// caller's next call starts from a full bucket. Default: 65536 (a
	// bucket takes about 200 bytes).
	MaxKeys int
}

// LocalLimiter is a [Limiter] in this process, a token bucket per key
// (golang.org/x/time/rate). Its memory is bounded by
// [LocalLimiterOptions.MaxKeys], however many distinct callers there are.
// Several instances of a server each count on their own: share counts with
// package redislimit. Every compilation of an application ([Compile]) has
// one, used when an invocation names no other ([Invocation.Limiter]).
//
// A LocalLimiter is safe for concurrent use.
type LocalLimiter struct {
	max int

	mu      sync.Mutex
	buckets map[string]*list.Element // of *bucket
	lru     list.List                // front: most recently used
}

type bucket struct {
	key string
	lim *rate.Limiter
}

var _ Limiter = (*LocalLimiter)(nil)

// NewLocalLimiter returns an empty limiter. It fails when an option is out
// of range.
func NewLocalLimiter(opts *LocalLimiterOptions) (*LocalLimiter, error) {
	l := &LocalLimiter{max: defaultLimiterKeys, buckets: make(map[string]*list.Element)}
	if opts != nil {
		switch {
		case opts.MaxKeys < 0:
			return nil, fmt.Errorf("execution: negative MaxKeys %d", opts.MaxKeys)
		case opts.MaxKeys > 0:
			l.max = opts.MaxKeys
		}
	}
	return l, nil
}

// Allow admits one call under key and limit, or refuses it with the time
// until it would be admitted. It never fails. When the limit of a key
// changes, its bucket is kept and takes the new limit.
func (l *LocalLimiter) Allow(_ context.Context, key string, limit agnara.RateLimit) (time.Duration, bool, error) {
	if err := limit.Validate(); err != nil || limit.IsZero() {
		return 0, false, fmt.Errorf("execution: cannot enforce %+v: invalid limit", limit)
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var lim *rate.Limiter
	if e, ok := l.buckets[key]; ok {
		l.lru.MoveToFront(e)
		lim = e.Value.(*bucket).lim
		if lim.Limit() != rate.Limit(limit.Rate) {
			lim.SetLimitAt(now, rate.Limit(limit.Rate))
		}
		if lim.Burst() != limit.Burst {
			lim.SetBurstAt(now, limit.Burst)
		}
	} else {
		for len(l.buckets) >= l.max {
			oldest := l.lru.Back()
			delete(l.buckets, oldest.Value.(*bucket).key)
			l.lru.Remove(oldest)
		}
		lim = rate.NewLimiter(rate.Limit(limit.Rate), limit.Burst)
		l.buckets[key] = l.lru.PushFront(&bucket{key: key, lim: lim})
	}
	// Under l.mu nothing else touches lim between these two calls.
	if tokens := lim.TokensAt(now); tokens < 1 {
		wait := time.Duration(math.Ceil((1 - tokens) / limit.Rate * float64(time.Second)))
		return max(wait, time.Millisecond), false, nil
	}
	lim.AllowN(now, 1)
	return 0, true, nil
}

// len returns the number of buckets the limiter holds.
func (l *LocalLimiter) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// limitKey is the key of principal's calls of the capability identity:
// the identity, a space, then "-" for an anonymous caller, or the
// principal's key (policy.Principal.Key), which no two callers share
// whatever their issuers and ids contain. (A key starts with a digit, so
// "-" is no one's; the bytes are those of the keys before Principal.Key,
// so that a limiter shared across an upgrade keeps its buckets.)
func limitKey(identity string, p policy.Principal) string {
	if p.IsAnonymous() {
		return identity + " -"
	}
	return identity + " " + p.Key()
}

// checkLimit counts the call against the plan's rate limit, or the
// invocation's default when the plan declares none. It returns a failure to
// end the invocation with, a non-nil error when ctx ended, or nothing to go
// on. Without a limit, or for a later round of a call already counted
// ([Invocation.Counted]), it does nothing and allocates nothing.
func (p *Plan) checkLimit(ctx context.Context, inv *Invocation, principal policy.Principal) (*Failure, error) {
	if inv.Counted {
		return nil, nil
	}
	limit := p.rateLimit
	if limit.IsZero() {
		limit = inv.RateLimit
		if limit.IsZero() {
			return nil, nil
		}
	}
	lim := inv.Limiter
	if lim == nil {
		lim = p.limiter
	}
	f, err := checkRate(ctx, lim, p.identity, principal, limit)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return nil, ctxErr
		}
		p.logger.LogAttrs(ctx, slog.LevelError, "rate limiter unavailable",
			slog.String("capability", p.identity), slog.Any("error", err))
	}
	return f, nil
}

// checkRate counts one request of principal under name against limit with
// lim, as [Plan.Invoke] counts a call of a capability (name is then its
// identity); exposures call it, through internal/registry, for requests
// they must limit that invoke no plan (for MCP, tasks/get or
// completion/complete). Each name and principal has a bucket of its own;
// name must not be a capability identity unless the request is meant to
// spend that capability's calls, and must not be empty.
//
// It returns nil when the request is admitted, and the [Unavailable]
// failure with reason [ReasonRateLimited] and its retry hint when it is
// not. When the limiter cannot decide it returns its error together with
// the failure to refuse the request with (unavailable, no reason: the
// check fails closed); the caller logs the error. The zero limit admits
// everything, counting nothing.
func checkRate(ctx context.Context, lim Limiter, name string, principal policy.Principal, limit agnara.RateLimit) (*Failure, error) {
	if limit.IsZero() {
		return nil, nil
	}
	if lim == nil || name == "" {
		return limiterUnavailable(), errors.New("execution: a rate check needs a limiter and a name")
	}
	wait, ok, err := lim.Allow(ctx, limitKey(name, principal), limit)
	switch {
	case err != nil:
		return limiterUnavailable(), err
	case !ok:
		ms := max(wait.Milliseconds(), 1)
		if wait > time.Duration(ms)*time.Millisecond {
			ms++ // round up: retrying at the hint must succeed
		}
		return &Failure{
			Code:    Unavailable,
			Reason:  ReasonRateLimited,
			Message: "rate limit exceeded for this capability; retry in " + (time.Duration(ms) * time.Millisecond).String(),
			Details: map[string]any{"retry_after_ms": ms},
		}, nil
	}
	return nil, nil
}

// limiterUnavailable is the failure of a request refused because its rate
// limit cannot be checked now (the limiter reported an error).
func limiterUnavailable() *Failure {
	return &Failure{Code: Unavailable, Message: "the rate limit cannot be checked now; retry later"}
}
