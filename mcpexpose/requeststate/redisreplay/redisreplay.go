// Package redisreplay is a [requeststate.ReplayStore] on Redis, so that
// several server instances behind a load balancer enforce single use of a
// requestState together: a state opened once on any instance is refused on
// every instance.
//
// Each use is one atomic command,
//
//	SET <prefix><id> 1 NX PXAT <expiry in unix milliseconds>
//
// which records the state's single-use id only if it is absent, and lets
// Redis forget it when the state expires (a state is refused after its
// expiry anyway). Nothing else is stored; there is no read-then-write race
// and no Lua script.
//
// When Redis cannot answer (down, unreachable, timing out, refusing writes),
// Use returns an error and [requeststate.Sealer.Open] fails closed: no
// state is accepted until Redis answers again. The client reconnects by
// itself, so the store recovers without a restart.
//
// Redis must keep its keys for their TTL: run it with maxmemory-policy
// noeviction (Redis's default), under which a full Redis refuses the write
// and Open fails closed; every eviction policy, volatile-* ones first, may
// drop a used id early and let its state be used again. PXAT needs Redis
// 6.2 or later. A restart of a Redis without persistence forgets which
// states were used; they could then be used again until they expire (at
// most the state TTL, five minutes by default): give it persistence
// (appendonly yes), or rotate the key file with -keep 0 after such a
// restart. See docs/scaling.md.
package redisreplay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agnara-go/agnara/internal/redisconn"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix when [Options.Prefix] is empty.
const DefaultPrefix = "agnara:requeststate:used:"

// Options configures a [Store]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// Prefix namespaces the store's keys, so that several applications can
	// share one Redis database: every key is Prefix followed by the
	// state's 32-character hex id. Default: DefaultPrefix. Servers that
	// accept each other's states must use the same prefix.
	Prefix string
	// Timeout bounds each Use, in addition to the caller's context.
	// Default: one second. A Redis that does not answer in time counts as
	// unavailable.
	Timeout time.Duration
}

// Store is a [requeststate.ReplayStore] on a Redis client. It is safe for
// concurrent use.
type Store struct {
	client  redis.UniversalClient
	prefix  string
	timeout time.Duration
}

var _ requeststate.ReplayStore = (*Store)(nil)

// New returns a store on client, which it uses but does not own: closing
// the client is the caller's job.
func New(client redis.UniversalClient, opts *Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisreplay: New needs a Redis client")
	}
	s := &Store{client: client, prefix: DefaultPrefix, timeout: time.Second}
	if opts != nil {
		if opts.Prefix != "" {
			s.prefix = opts.Prefix
		}
		switch {
		case opts.Timeout < 0:
			return nil, fmt.Errorf("redisreplay: negative Timeout %v", opts.Timeout)
		case opts.Timeout > 0:
			s.timeout = opts.Timeout
		}
	}
	return s, nil
}

// Open connects to the Redis at url (redis://[[user]:password@]host:port/db,
// or rediss:// for TLS; the format of [redis.ParseURL]) and returns a store
// on it and a function that closes the connection. It fails when the URL is
// malformed or the server does not answer a PING within the store's
// timeout, so that a misconfigured instance does not start; once running,
// the store rides out outages. Error messages never contain the URL's
// password.
func Open(ctx context.Context, url string, opts *Options) (*Store, func() error, error) {
	wait := 2 * time.Second // at least the store's timeout
	if opts != nil && opts.Timeout > wait {
		wait = opts.Timeout
	}
	client, err := redisconn.Dial(ctx, "redisreplay", url, wait)
	if err != nil {
		return nil, nil, err
	}
	s, err := New(client, opts)
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return s, client.Close, nil
}

// Use records id as used until expires, in one SET NX PXAT. It returns
// false when id was already recorded, or when expires has passed by this
// host's clock. It returns an error when Redis does not answer, or answers
// with an error, within the timeout. It does not yet notice a Redis that
// lost its memory: sealed is unused.
func (s *Store) Use(ctx context.Context, id string, sealed, expires time.Time) (bool, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !time.Now().Before(expires) {
		return false, nil // cannot be proven unused; Redis would refuse a past PXAT
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	err := s.client.Do(ctx, "SET", s.prefix+id, "1", "NX", "PXAT", expires.UnixMilli()).Err()
	switch {
	case err == nil:
		return true, nil // OK: recorded now
	case errors.Is(err, redis.Nil):
		return false, nil // nil reply: already recorded
	default:
		return false, fmt.Errorf("redisreplay: SET NX: %w", err)
	}
}
