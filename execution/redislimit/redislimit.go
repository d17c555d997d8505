// Package redislimit is an [execution.Limiter] on Redis, so that several
// server instances behind a load balancer count a caller's calls together:
// a limit of 10 calls a second is 10 across all of them, not 10 on each.
//
// Each call is one round trip: a Lua script (EVALSHA) runs the generic cell
// rate algorithm (GCRA) on one key, Prefix followed by the limiter key,
// holding the bucket's theoretical arrival time in microseconds. The script
// reads the clock with Redis's TIME, so instances whose clocks disagree
// still agree on the count, and sets the key to expire when the bucket is
// full again: an idle caller costs Redis nothing.
//
// When Redis cannot answer (down, unreachable, timing out, refusing
// writes), Allow returns an error, and the plan refuses the call as
// "unavailable": the limiter fails closed, since a limit that stops
// counting during an outage is no limit when it is needed most. Set
// [Options.Fallback] (usually an [execution.LocalLimiter]) to count in the
// process instead while Redis is away: each instance then enforces the
// limit on its own. The client reconnects by itself, so counting resumes
// without a restart.
//
// [Open] takes the URL of a single Redis, a Sentinel deployment or a Redis
// Cluster; each bucket is one key, so on a Cluster the buckets spread over
// the shards. See docs/scaling.md.
package redislimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/redisconn"
	"github.com/redis/go-redis/v9"
)

// defaultPrefix is the key prefix when [Options.Prefix] is empty.
const defaultPrefix = "agnara:ratelimit:"

// Options configures a [Limiter]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// Prefix namespaces the limiter's keys, so that several applications
	// can share one Redis database. Default: "agnara:ratelimit:". Instances
	// that count together must use the same prefix.
	Prefix string
	// Timeout bounds each Allow, in addition to the caller's context.
	// Default: 500 milliseconds. A Redis that does not answer in time
	// counts as unavailable.
	Timeout time.Duration
	// Fallback, when set, decides the calls Redis cannot count. Default:
	// none; Allow returns an error and the call is refused.
	Fallback execution.Limiter
}

// Limiter is an [execution.Limiter] on a Redis client. It is safe for
// concurrent use.
type Limiter struct {
	client   redis.UniversalClient
	prefix   string
	timeout  time.Duration
	fallback execution.Limiter
}

var _ execution.Limiter = (*Limiter)(nil)

// gcra admits one call if the bucket allows it. KEYS[1] holds the
// theoretical arrival time (TAT) in microseconds; ARGV[1] is the emission
// interval (microseconds a call costs), ARGV[2] the burst. It returns
// {1, 0} when admitted and {0, microseconds to wait} when not.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - burst * interval
if allow_at > now then
  return {0, math.ceil(allow_at - now)}
end
redis.call('SET', KEYS[1], string.format('%.0f', new_tat), 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, 0}
`)

// New returns a limiter on client, which it uses but does not own: closing
// the client is the caller's job.
func New(client redis.UniversalClient, opts *Options) (*Limiter, error) {
	if client == nil {
		return nil, errors.New("redislimit: New needs a Redis client")
	}
	l := &Limiter{client: client, prefix: defaultPrefix, timeout: 500 * time.Millisecond}
	if opts != nil {
		if opts.Prefix != "" {
			l.prefix = opts.Prefix
		}
		switch {
		case opts.Timeout < 0:
			return nil, fmt.Errorf("redislimit: negative Timeout %v", opts.Timeout)
		case opts.Timeout > 0:
			l.timeout = opts.Timeout
		}
		l.fallback = opts.Fallback
	}
	return l, nil
}

// Open connects to the Redis deployment at url and returns a limiter on it
// and a function that closes the connection. The URL is one of
//
//	redis://[[user]:password@]host:port/db        one Redis (redis.ParseURL)
//	redis://sentinel:port/db?master_name=NAME&addr=sentinel2:port&...
//	                                              Sentinel (redis.ParseFailoverURL)
//	redis://node:port?addr=node2:port&...          Cluster (redis.ParseClusterURL)
//
// or rediss:// for TLS. It fails when the URL is malformed or Redis does
// not answer a PING within two seconds (or the limiter's Timeout, if
// longer), so that a misconfigured instance does not start. Error messages
// never contain a password.
func Open(ctx context.Context, url string, opts *Options) (*Limiter, func() error, error) {
	var timeout time.Duration
	if opts != nil {
		timeout = opts.Timeout
	}
	return redisconn.Open(ctx, "redislimit", url, timeout, func(c redis.UniversalClient) (*Limiter, error) { return New(c, opts) })
}

// Allow admits one call under key and limit, or refuses it with the time
// until it would be admitted, in one round trip. It returns an error when
// Redis does not answer, or answers with an error, within the timeout, and
// there is no Fallback.
func (l *Limiter) Allow(ctx context.Context, key string, limit agnara.RateLimit) (time.Duration, bool, error) {
	if err := limit.Validate(); err != nil || limit.IsZero() {
		return 0, false, fmt.Errorf("redislimit: cannot enforce %+v: invalid limit", limit)
	}
	interval := math.Max(1, math.Round(1e6/limit.Rate)) // microseconds per call
	rctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	res, err := gcra.Run(rctx, l.client, []string{l.prefix + key}, int64(interval), limit.Burst).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, false, ctx.Err() // the caller went away, Redis may be fine
		}
		if l.fallback != nil {
			return l.fallback.Allow(ctx, key, limit)
		}
		return 0, false, fmt.Errorf("redislimit: %w", err)
	}
	if res[0] == 1 {
		return 0, true, nil
	}
	return time.Duration(res[1]) * time.Microsecond, false, nil
}
