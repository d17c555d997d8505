// Package redisreplay is a [requeststate.ReplayStore] on Redis, so that
// several server instances behind a load balancer enforce single use of a
// requestState together: a state opened once on any instance is refused on
// every instance.
//
// # One step per use
//
// Each use is one Lua script (EVALSHA), atomic like any script, on two
// keys: the state's id, <prefix><id>, and the store's epoch,
// <prefix>epoch. The script
//
//  1. reads the epoch: when this Redis process last started remembering
//     used ids, by Redis's own clock (TIME), and which process that is
//     (its run_id, from INFO server). When there is no epoch, or it was
//     written by another Redis process, Redis may have forgotten ids it
//     recorded: it was restarted (empty, or from a snapshot older than its
//     last writes), flushed (FLUSHALL, FLUSHDB), failed over to a replica
//     that lagged, or the key was evicted or deleted. The script then
//     starts a new epoch, now;
//  2. refuses the state if it was sealed before the epoch began, less
//     [Options.ClockSkew]: Redis cannot tell whether such a state was used;
//  3. otherwise records the id, SET <prefix><id> 1 NX PXAT <expiry>, only
//     if it is absent, and lets Redis forget it when the state expires (a
//     state is refused after its expiry anyway).
//
// "The epoch is unchanged" and "the id is now recorded" are therefore one
// step: no instance can accept a state on the strength of an epoch that
// ended. Instances keep nothing between uses, so one that never saw Redis
// restart refuses an old state as surely as the one that noticed.
//
// What that costs: after Redis loses its memory, each confirmation in flight
// (sealed before the new epoch began, or in the ClockSkew after it) is
// refused once with the usual stale-state error, and its client asks again;
// no handler runs twice. Open starts the first epoch, so that a fresh Redis
// refuses nothing sealed after an instance started.
//
// # Redis
//
// When Redis cannot answer (down, unreachable, timing out, refusing writes),
// Use returns an error and [requeststate.Sealer.Open] fails closed: no
// state is accepted until Redis answers again. The client reconnects by
// itself, so the store recovers without a restart.
//
// Redis must keep its keys for their TTL: run it with maxmemory-policy
// noeviction (Redis's default), under which a full Redis refuses the write
// and Open fails closed; every eviction policy may drop a used id early and
// let its state be used again (the epoch key has no TTL, so volatile-*
// policies never evict it, and an evicted epoch only refuses states). The
// script needs Redis 6.2 or later (PXAT, and scripts that write after
// reading TIME) and the INFO command. Persistence is not needed for single
// use; a Redis that keeps its data across a restart still starts a new
// epoch, since what a restart kept cannot be told from what it lost. See
// docs/scaling.md and ADR 28.
//
// # Deployments
//
// [Open] takes the URL of a single Redis, a Sentinel deployment or a Redis
// Cluster (package internal/redisconn gives the three forms; docs/scaling.md
// shows each). "This Redis process" in the epoch is the process that holds
// the store's keys: on Sentinel the current master, so that a failover to a
// replica starts a new epoch, as a restart does (the replica has another
// run_id); on a Cluster the master of the one hash slot all the store's keys
// are in. Both keys of a use must be in that slot, so on a Cluster the
// prefix carries a hash tag: "agnara:{requeststate}:used:" by default, and
// a Prefix without one is refused. Every id is then on one shard: single use
// does not spread over the cluster's shards.
//
// # Acknowledged by replicas
//
// With [Options.Replicas] set, each use is followed, on the same
// connection, by WAIT Replicas ReplicaTimeout, and the state is accepted
// only when that many replicas acknowledged its used marker: a marker
// the master took but no replica holds is refused as Redis being
// unavailable, and the call does not run. This guards against an old master
// that a partition cut off from its replicas and sentinels still taking
// uses the promoted replica never sees; a failover itself starts a new
// epoch. See ADR 55.
package redisreplay

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agnara-go/agnara/internal/redisconn"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/redis/go-redis/v9"
)

// defaultPrefix is the key prefix when [Options.Prefix] is empty.
const defaultPrefix = "agnara:requeststate:used:"

// defaultClusterPrefix is [Options.Prefix] when it is empty and the client
// is a Redis Cluster's: its hash tag puts every key of the store in one
// slot, as the script that checks the epoch and records an id needs.
const defaultClusterPrefix = "agnara:{requeststate}:used:"

// defaultClockSkew is [Options.ClockSkew] when it is zero. Two tests
// outside this package wait for it past an epoch's start with a 1 s of
// their own (TestDefaultClockSkewOfTheClusterTests).
const defaultClockSkew = time.Second

// Options configures a [Store]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// Prefix namespaces the store's keys, so that several applications can
	// share one Redis database: each used id is Prefix followed by the
	// state's 32-character hex id, and the epoch is Prefix followed by
	// "epoch". Default: "agnara:requeststate:used:", or
	// "agnara:{requeststate}:used:" on a Redis Cluster, where a Prefix must
	// contain a hash tag ("{...}"). Servers that accept each other's
	// states must use the same prefix.
	Prefix string
	// Timeout bounds each Use, in addition to the caller's context.
	// Default: one second. A Redis that does not answer in time counts as
	// unavailable.
	Timeout time.Duration
	// ClockSkew is how far any instance's clock may run ahead of Redis's.
	// A state is sealed by its instance's clock and an epoch begins by
	// Redis's, so a state sealed less than ClockSkew after an epoch began
	// is refused too: with a clock further ahead than that, a state sealed
	// and used before Redis lost its memory could pass for one sealed
	// after. Default: 1 second. A larger value refuses more states right
	// after a loss, and nothing else.
	ClockSkew time.Duration
	// Replicas is how many replicas must acknowledge each used marker
	// (Redis's WAIT) before its state is accepted; with fewer within
	// ReplicaTimeout the state is refused as Redis unavailable. Default:
	// 0, no WAIT. On Sentinel set it to the replicas a promotion may pick
	// from (usually 1), and run the master with min-replicas-to-write.
	Replicas int
	// ReplicaTimeout bounds each WAIT. It must be shorter than Timeout,
	// which bounds the script and the WAIT together. Default: half of
	// Timeout.
	ReplicaTimeout time.Duration
	// Logger receives a warning each time this store sees a new epoch
	// (Redis lost its memory, or held none yet). Default: no logging.
	Logger *slog.Logger
}

// Store is a [requeststate.ReplayStore] on a Redis client. It is safe for
// concurrent use.
type Store struct {
	client   redis.UniversalClient
	prefix   string
	epochKey string
	timeout  time.Duration
	skew     time.Duration
	logger   *slog.Logger
	token    string // names this store in the epochs it starts
	replicas int
	waitFor  time.Duration // each WAIT's timeout
	cluster  *redis.ClusterClient

	seen atomic.Pointer[string] // the last epoch a use saw, for the log
}

var _ requeststate.ReplayStore = (*Store)(nil)

// epochLua leaves the current epoch in the locals epoch and start (unix
// milliseconds, Redis's clock) and started (1 when this call began it).
// KEYS[1] is the epoch key, ARGV[1] the calling store's token. An epoch is
// "<start> <run_id> <token>"; one that does not parse, or that another
// Redis process wrote, is replaced by a new one starting now.
const epochLua = `
local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
if not run then return redis.error_reply('ERR no run_id in INFO server') end
local epoch = redis.call('GET', KEYS[1])
local start, owner
if epoch then start, owner = string.match(epoch, '^(%d+) (%x+) ') end
local started = 0
if not start or owner ~= run then
  local t = redis.call('TIME')
  start = string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  epoch = start .. ' ' .. run .. ' ' .. ARGV[1]
  redis.call('SET', KEYS[1], epoch)
  started = 1
end
`

// epochScript returns {epoch, started}.
var epochScript = redis.NewScript(epochLua + `
return {epoch, started}
`)

// useScript records one use. KEYS[2] is the id's key, ARGV[2] the earliest
// moment the state may have been sealed by Redis's clock (its sealing time
// less the clock skew), ARGV[3] its expiry, both unix milliseconds. It
// returns {verdict, epoch, started}: verdict 1 when the id is recorded now,
// 0 when it was already, -1 when the state is older than the epoch.
var useScript = redis.NewScript(epochLua + `
if tonumber(ARGV[2]) < tonumber(start) then return {-1, epoch, started} end
if redis.call('SET', KEYS[2], '1', 'NX', 'PXAT', ARGV[3]) then return {1, epoch, started} end
return {0, epoch, started}
`)

// New returns a store on client, which it uses but does not own: closing
// the client is the caller's job. New does not contact Redis: call
// [Store.Epoch] once before serving (Open does), or, on a Redis that holds
// no epoch yet, the states sealed before the first use are refused.
func New(client redis.UniversalClient, opts *Options) (*Store, error) {
	if client == nil {
		return nil, errors.New("redisreplay: New needs a Redis client")
	}
	s := &Store{client: client, prefix: defaultPrefix, timeout: time.Second, skew: defaultClockSkew,
		logger: slog.New(slog.DiscardHandler), token: strings.ToLower(rand.Text())}
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
		switch {
		case opts.ClockSkew < 0:
			return nil, fmt.Errorf("redisreplay: negative ClockSkew %v", opts.ClockSkew)
		case opts.ClockSkew > 0:
			s.skew = opts.ClockSkew
		}
		if opts.Logger != nil {
			s.logger = opts.Logger
		}
		if opts.Replicas < 0 {
			return nil, fmt.Errorf("redisreplay: negative Replicas %d", opts.Replicas)
		}
		s.replicas = opts.Replicas
		switch {
		case opts.ReplicaTimeout < 0:
			return nil, fmt.Errorf("redisreplay: negative ReplicaTimeout %v", opts.ReplicaTimeout)
		case opts.ReplicaTimeout >= s.timeout:
			return nil, fmt.Errorf("redisreplay: ReplicaTimeout %v is not shorter than Timeout %v", opts.ReplicaTimeout, s.timeout)
		case opts.ReplicaTimeout > 0:
			s.waitFor = opts.ReplicaTimeout
		}
	}
	if s.waitFor == 0 {
		s.waitFor = s.timeout / 2
	}
	if c, ok := client.(*redis.ClusterClient); ok {
		s.cluster = c
		if opts == nil || opts.Prefix == "" {
			s.prefix = defaultClusterPrefix
		} else if !hasHashTag(s.prefix) {
			return nil, fmt.Errorf("redisreplay: Prefix %q has no hash tag ({...}): on a Redis Cluster the epoch and the used ids must share one slot", s.prefix)
		}
	}
	s.epochKey = s.prefix + "epoch"
	return s, nil
}

// Open connects to the Redis deployment at url and returns a store
// on it and a function that closes the connection. The URL is one of
//
//	redis://[[user]:password@]host:port/db        one Redis (redis.ParseURL)
//	redis://sentinel:port/db?master_name=NAME&addr=sentinel2:port&...
//	                                              Sentinel (redis.ParseFailoverURL)
//	redis://node:port?addr=node2:port&...          Cluster (redis.ParseClusterURL)
//
// or rediss:// for TLS. It fails when the URL is
// malformed or Redis does not answer a PING and the first
// [Store.Epoch] within the store's timeout, so that a misconfigured instance
// does not start; once running, the store rides out outages. When the epoch
// is younger than [Options.ClockSkew] (Open started it), Open waits until
// it is not, at most ClockSkew, so that the states the instance seals once
// it serves are not refused. Error messages never contain the URL's
// password.
func Open(ctx context.Context, url string, opts *Options) (*Store, func() error, error) {
	var timeout time.Duration
	if opts != nil {
		timeout = opts.Timeout
	}
	return redisconn.Open(ctx, "redisreplay", url, timeout, func(c redis.UniversalClient) (*Store, error) {
		s, err := New(c, opts)
		if err != nil {
			return nil, err
		}
		start, err := s.Epoch(ctx)
		if err != nil {
			return nil, fmt.Errorf("redisreplay: Redis at %s: %s", redisconn.RedactURL(url), redisconn.RedactErr(err, url))
		}
		// A state sealed less than ClockSkew after the epoch began is
		// refused: when the epoch is that young (a new Redis, or one that
		// lost its memory), wait until the states this instance seals open.
		if young := min(time.Until(start.Add(s.skew)), s.skew); young > 0 {
			timer := time.NewTimer(young)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return s, nil
	})
}

// Epoch returns when Redis's current memory of used states began, by
// Redis's clock, starting it now if Redis holds no epoch of its own (a new
// Redis, or one that lost its memory). States sealed before it, less
// [Options.ClockSkew], are refused. It returns an error when Redis does not
// answer, or answers with an error, within the timeout.
func (s *Store) Epoch(ctx context.Context) (time.Time, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	res, err := epochScript.Run(ctx, s.client, []string{s.epochKey}, s.token).Slice()
	if err != nil {
		return time.Time{}, fmt.Errorf("redisreplay: epoch: %w", err)
	}
	var epoch string
	var started int64
	if len(res) == 2 {
		epoch, _ = res[0].(string)
		started, _ = res[1].(int64)
	}
	start, err := s.noticed(epoch, started == 1)
	if err != nil {
		return time.Time{}, err
	}
	return start, nil
}

// Use records id as used until expires, in one script that first checks
// the epoch. It returns false when id was already recorded, when expires
// has passed by this host's clock, and when the state was sealed before
// the epoch began (less the clock skew). It returns an error when Redis
// does not answer, or answers with an error, within the timeout.
func (s *Store) Use(ctx context.Context, id string, sealed, expires time.Time) (bool, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if !time.Now().Before(expires) {
		return false, nil // cannot be proven unused; Redis would refuse a past PXAT
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	earliest := sealed.Add(-s.skew).UnixMilli()
	keys := []string{s.epochKey, s.prefix + id}
	var res []any
	var acked int64
	var err error
	if s.replicas == 0 {
		res, err = useScript.Run(ctx, s.client, keys, s.token, earliest, expires.UnixMilli()).Slice()
	} else {
		res, acked, err = s.useAndWait(ctx, keys, earliest, expires.UnixMilli())
	}
	if err != nil {
		return false, fmt.Errorf("redisreplay: use: %w", err)
	}
	var verdict, started int64
	var epoch string
	if len(res) == 3 {
		verdict, _ = res[0].(int64)
		epoch, _ = res[1].(string)
		started, _ = res[2].(int64)
	}
	if _, err := s.noticed(epoch, started == 1); err != nil {
		return false, err
	}
	if verdict == 1 && acked < int64(s.replicas) {
		return false, fmt.Errorf("redisreplay: use: the used marker was acknowledged by %d of the %d replicas required within %v", acked, s.replicas, s.waitFor)
	}
	return verdict == 1, nil
}

// useAndWait runs the use script and WAIT in one pipeline, so that both go
// on one connection to the master holding the keys (WAIT counts the
// replicas that have this connection's writes), and returns the script's
// answer and how many replicas acknowledged.
func (s *Store) useAndWait(ctx context.Context, keys []string, earliest, expires int64) ([]any, int64, error) {
	var node redis.Cmdable = s.client
	if s.cluster != nil {
		master, err := s.cluster.MasterForKey(ctx, s.epochKey)
		if err != nil {
			return nil, 0, err
		}
		node = master
	}
	for attempt := 0; ; attempt++ {
		var use *redis.Cmd
		var wait *redis.Cmd
		_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
			use = useScript.EvalSha(ctx, p, keys, s.token, earliest, expires)
			wait = p.Do(ctx, "WAIT", s.replicas, max(1, s.waitFor.Milliseconds())) // WAIT 0 would block until the context ends
			return nil
		})
		if err != nil && attempt == 0 && redis.HasErrorPrefix(use.Err(), "NOSCRIPT") {
			if err := useScript.Load(ctx, node).Err(); err != nil {
				return nil, 0, err
			}
			continue
		}
		if err != nil {
			if s.cluster != nil {
				s.cluster.ReloadState(ctx) // the slot may have moved or failed over
			}
			return nil, 0, err
		}
		res, err := use.Slice()
		if err != nil {
			return nil, 0, err
		}
		acked, err := wait.Int64()
		return res, acked, err
	}
}

// hasHashTag reports whether key contains a Redis Cluster hash tag: a "{"
// followed later by a "}" with something between them.
func hasHashTag(key string) bool {
	_, after, ok := strings.Cut(key, "{")
	end := strings.IndexByte(after, '}')
	return ok && end > 0
}

// noticed parses the epoch a script answered with, and logs it when it is
// not the one this store saw last. It fails on an answer that is not an
// epoch, which only a script other than ours can give.
func (s *Store) noticed(epoch string, started bool) (time.Time, error) {
	ms, _, _ := strings.Cut(epoch, " ")
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("redisreplay: unexpected epoch %q in Redis's answer", epoch)
	}
	start := time.UnixMilli(n)
	if last := s.seen.Load(); last != nil && *last == epoch {
		return start, nil
	}
	seen := epoch // only a new epoch is kept on the heap
	last := s.seen.Swap(&seen)
	switch {
	case started:
		s.logger.Warn("redisreplay: started a new epoch: Redis held none of its own (a new Redis, or one restarted, flushed or failed over); request states sealed before it are refused",
			"epoch_start", start.UTC())
	case last != nil && *last != epoch:
		s.logger.Warn("redisreplay: Redis started a new epoch since this instance last used it; request states sealed before it are refused",
			"epoch_start", start.UTC())
	}
	return start, nil
}
