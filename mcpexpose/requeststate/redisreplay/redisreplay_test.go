package redisreplay_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
	"github.com/redis/go-redis/v9"
)

const id = "00112233445566778899aabbccddeeff"

// epochKey is where a store with the default prefix keeps its epoch.
const epochKey = redisreplay.DefaultPrefix + "epoch"

// open returns a store on r with its own connection, closed at cleanup.
func open(t *testing.T, r *enginetest.RedisServer, opts *redisreplay.Options) *redisreplay.Store {
	t.Helper()
	s, closeFn, err := redisreplay.Open(t.Context(), r.URL(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	return s
}

func raw(t *testing.T, r *enginetest.RedisServer) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

func TestUseIsSingleAndExpiresWithTheState(t *testing.T) {
	r := enginetest.Redis(t)
	s := open(t, r, nil)
	ctx := t.Context()
	expires := time.Now().Add(time.Minute)

	sealed := time.Now()

	fresh, err := s.Use(ctx, id, sealed, expires)
	if err != nil || !fresh {
		t.Fatalf("first Use = %v, %v; want true", fresh, err)
	}
	fresh, err = s.Use(ctx, id, sealed, expires)
	if err != nil || fresh {
		t.Fatalf("second Use = %v, %v; want false", fresh, err)
	}
	// Another store (another instance's connection) sees the same use.
	if fresh, err := open(t, r, nil).Use(ctx, id, sealed, expires); err != nil || fresh {
		t.Fatalf("Use on another store = %v, %v; want false", fresh, err)
	}

	// The key is namespaced and expires when the state does.
	c := raw(t, r)
	pttl, err := c.PTTL(ctx, redisreplay.DefaultPrefix+id).Result()
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Until(expires); pttl <= 0 || pttl > left+time.Second || pttl < left-5*time.Second {
		t.Errorf("key PTTL %v, want about %v (the state's expiry)", pttl, left)
	}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if want := []string{redisreplay.DefaultPrefix + id, epochKey}; !slices.Equal(keys, want) {
		t.Errorf("Redis holds %q, want only %q", keys, want)
	}
	// The epoch never expires, so that no volatile-* policy evicts it.
	if ttl, err := c.PTTL(ctx, epochKey).Result(); err != nil || ttl != -1 {
		t.Errorf("epoch key PTTL %v, %v; want -1 (no expiry)", ttl, err)
	}

	// Redis forgets an id once the state has expired (soon, but not
	// before a loaded machine has made the call).
	soon := time.Now().Add(time.Second)
	if fresh, err := s.Use(ctx, "ff"+id[2:], sealed, soon); err != nil || !fresh {
		t.Fatalf("Use with a short expiry = %v, %v", fresh, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.Exists(ctx, redisreplay.DefaultPrefix+"ff"+id[2:]).Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("Redis kept the id long after its expiry")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestUseRefusesAnExpiredIDWithoutAskingRedis(t *testing.T) {
	r := enginetest.Redis(t)
	s := open(t, r, nil)
	r.Stop() // an answer from Redis would be an error
	fresh, err := s.Use(t.Context(), id, time.Now().Add(-time.Minute), time.Now().Add(-time.Millisecond))
	if err != nil || fresh {
		t.Fatalf("Use of an expired id = %v, %v; want false, nil", fresh, err)
	}
}

func TestPrefixesAreSeparate(t *testing.T) {
	r := enginetest.Redis(t)
	a := open(t, r, &redisreplay.Options{Prefix: "app-a:"})
	b := open(t, r, &redisreplay.Options{Prefix: "app-b:"})
	expires := time.Now().Add(time.Minute)
	for name, s := range map[string]*redisreplay.Store{"a": a, "b": b} {
		if fresh, err := s.Use(t.Context(), id, time.Now(), expires); err != nil || !fresh {
			t.Errorf("first Use under prefix %s = %v, %v; want true", name, fresh, err)
		}
	}
	if n := raw(t, r).Exists(t.Context(), "app-a:"+id, "app-b:"+id).Val(); n != 2 {
		t.Errorf("%d of the two prefixed keys exist", n)
	}
}

func TestConcurrentUsesOfOneIDHaveOneWinner(t *testing.T) {
	r := enginetest.Redis(t)
	stores := []*redisreplay.Store{open(t, r, nil), open(t, r, nil), open(t, r, nil)}
	sealed, expires := time.Now(), time.Now().Add(time.Minute)
	var wins, errs atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			fresh, err := stores[i%len(stores)].Use(t.Context(), id, sealed, expires)
			if err != nil {
				errs.Add(1)
			}
			if fresh {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 || errs.Load() != 0 {
		t.Fatalf("%d of 30 racing uses won and %d failed; want exactly 1 winner, no failure", wins.Load(), errs.Load())
	}
}

// Redis unable to answer in time, but not restarted (paused here, as a
// partition or an overloaded Redis would be): Use fails (the sealer fails
// closed); once it answers again, the same store works, without being
// rebuilt, and the state refused meanwhile was not used up.
func TestFailsClosedAndRecovers(t *testing.T) {
	r := enginetest.Redis(t)
	s := open(t, r, &redisreplay.Options{Timeout: 500 * time.Millisecond})
	ring := newRing(t)
	sealer, err := requeststate.NewSealer(ring, &requeststate.Options{Replay: s})
	if err != nil {
		t.Fatal(err)
	}
	b := requeststate.Binding{Method: "tools/call", Target: "delete_user"}
	state, err := sealer.Seal(b, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}

	admin := raw(t, r)
	if err := admin.Do(t.Context(), "CLIENT", "PAUSE", 60_000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "CLIENT", "UNPAUSE") })
	_, err = sealer.Open(t.Context(), state, b)
	if !errors.Is(err, requeststate.ErrUnavailable) {
		t.Fatalf("Open with Redis not answering: %v, want ErrUnavailable", err)
	}
	if err.Error() != requeststate.ErrUnavailable.Error() {
		t.Errorf("error %q carries the store's text; callers must see only %q", err, requeststate.ErrUnavailable)
	}

	if err := admin.Do(t.Context(), "CLIENT", "UNPAUSE").Err(); err != nil {
		t.Fatal(err)
	}
	data, err := openRetrying(t, sealer, state, b)
	if err != nil || string(data) != "x" {
		t.Fatalf("Open once Redis answers: %q, %v; want the state (it was never recorded as used)", data, err)
	}
	if _, err := sealer.Open(t.Context(), state, b); !errors.Is(err, requeststate.ErrInvalid) {
		t.Fatalf("replay after recovery: %v, want ErrInvalid", err)
	}
}

// Timeout bounds a Use against a Redis that accepts the command and does
// not answer, whatever the client's own read timeout (a minute here): the
// caller gets its error, not a minute's wait.
func TestTimeoutBoundsAUseRedisDoesNotAnswer(t *testing.T) {
	r := enginetest.Redis(t)
	s, closeFn, err := redisreplay.Open(t.Context(), r.URL()+"?read_timeout=60s", &redisreplay.Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	admin := raw(t, r)
	if err := admin.Do(t.Context(), "CLIENT", "PAUSE", 120_000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	defer admin.Do(context.Background(), "CLIENT", "UNPAUSE")
	done := make(chan error, 1)
	go func() {
		_, err := s.Use(context.Background(), id, time.Now(), time.Now().Add(time.Minute))
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Use with Redis paused: %v, want the Timeout's deadline", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Use with Redis paused did not return within 30 s: the store's Timeout does not reach the connection")
	}
}

// openRetrying opens state, again while the store is unavailable (Redis
// restarting, the client reconnecting), for at most ten seconds.
func openRetrying(t *testing.T, s *requeststate.Sealer, state string, b requeststate.Binding) ([]byte, error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, err := s.Open(t.Context(), state, b)
		if !errors.Is(err, requeststate.ErrUnavailable) || time.Now().After(deadline) {
			return data, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// instance is one server instance: its own store (its own connection to
// the shared Redis) and its own sealer, on the shared key ring.
type instance struct {
	store  *redisreplay.Store
	sealer *requeststate.Sealer
	logs   *syncBuffer
}

func newInstance(t *testing.T, r *enginetest.RedisServer, ring *requeststate.KeyRing) *instance {
	t.Helper()
	logs := &syncBuffer{}
	s := open(t, r, &redisreplay.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	sealer, err := requeststate.NewSealer(ring, &requeststate.Options{Replay: s})
	if err != nil {
		t.Fatal(err)
	}
	return &instance{store: s, sealer: sealer, logs: logs}
}

// Redis loses its memory of used states, in each way it can: every state
// sealed before, the ones already used (the dangerous ones) and the others,
// is refused on both instances, neither of which had seen the loss; states
// sealed after the loss open once.
func TestLostMemoryRefusesEveryStateSealedBefore(t *testing.T) {
	const sealed, used, after = 200, 100, 20
	for _, tc := range []struct {
		name   string
		midway func(r *enginetest.RedisServer) // after half of the uses
		lose   func(t *testing.T, r *enginetest.RedisServer)
	}{
		{name: "killed and restarted empty", lose: func(_ *testing.T, r *enginetest.RedisServer) { r.Kill(); r.Start() }},
		{name: "stopped and restarted empty", lose: func(_ *testing.T, r *enginetest.RedisServer) { r.Stop(); r.Start() }},
		{
			name:   "restarted from a snapshot older than its last uses",
			midway: func(r *enginetest.RedisServer) { r.Snapshot() },
			lose: func(t *testing.T, r *enginetest.RedisServer) {
				before := raw(t, r).Get(t.Context(), epochKey).Val()
				r.Kill()
				r.Start()
				if got := raw(t, r).Get(t.Context(), epochKey).Val(); got != before || got == "" {
					t.Fatalf("the snapshot did not bring back the epoch: %q, was %q", got, before)
				}
			},
		},
		{name: "FLUSHALL", lose: func(t *testing.T, r *enginetest.RedisServer) { raw(t, r).FlushAll(t.Context()) }},
		{name: "FLUSHDB", lose: func(t *testing.T, r *enginetest.RedisServer) { raw(t, r).FlushDB(t.Context()) }},
		{name: "epoch key evicted", lose: func(t *testing.T, r *enginetest.RedisServer) { raw(t, r).Del(t.Context(), epochKey) }},
		{name: "epoch key overwritten", lose: func(t *testing.T, r *enginetest.RedisServer) {
			raw(t, r).Set(t.Context(), epochKey, "not an epoch", 0)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := enginetest.Redis(t)
			ring := newRing(t)
			a, b := newInstance(t, r, ring), newInstance(t, r, ring)
			pair := [2]*instance{a, b}
			bind := requeststate.Binding{Method: "tools/call", Target: "delete_user", PrincipalID: "alice"}
			first, err := a.store.Epoch(t.Context())
			if err != nil {
				t.Fatal(err)
			}

			states := make([]string, sealed)
			for i := range states {
				if states[i], err = pair[i%2].sealer.Seal(bind, []byte("asked")); err != nil {
					t.Fatal(err)
				}
			}
			for i, state := range states[:used] {
				if i == used/2 && tc.midway != nil {
					tc.midway(r)
				}
				if _, err := pair[(i+1)%2].sealer.Open(t.Context(), state, bind); err != nil {
					t.Fatalf("use %d before the loss: %v", i, err)
				}
			}

			tc.lose(t, r)
			accepted := 0
			for i, state := range states {
				data, err := openRetrying(t, pair[(i+1)%2].sealer, state, bind)
				switch {
				case err == nil:
					accepted++
				case !errors.Is(err, requeststate.ErrInvalid) || data != nil:
					t.Fatalf("state %d after the loss: %q, %v; want nil, ErrInvalid", i, data, err)
				}
			}
			if accepted != 0 {
				t.Errorf("after the loss, %d of %d states sealed before it were accepted (%d of them used before): want 0", accepted, sealed, used)
			}

			// The refusals started a new epoch; once it is older than the
			// clock skew, states sealed from then on open once.
			epoch, err := b.store.Epoch(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !epoch.After(first) {
				t.Fatalf("epoch began %v after the loss, %v before it: want a new one", epoch, first)
			}
			time.Sleep(time.Until(epoch.Add(redisreplay.DefaultClockSkew)))
			for i := range after {
				state, err := pair[i%2].sealer.Seal(bind, []byte("asked again"))
				if err != nil {
					t.Fatal(err)
				}
				if data, err := pair[(i+1)%2].sealer.Open(t.Context(), state, bind); err != nil || string(data) != "asked again" {
					t.Fatalf("state %d sealed after the loss: %q, %v", i, data, err)
				}
				for _, in := range pair {
					if _, err := in.sealer.Open(t.Context(), state, bind); !errors.Is(err, requeststate.ErrInvalid) {
						t.Fatalf("replay of state %d sealed after the loss: %v, want ErrInvalid", i, err)
					}
				}
			}
			if logs := a.logs.String() + b.logs.String(); !strings.Contains(logs, "level=WARN") || !strings.Contains(logs, "new epoch") {
				t.Errorf("no instance logged the new epoch:\n%s", logs)
			}
			t.Logf("%s: sealed before the loss %d (used %d), accepted after it %d; sealed after it %d, each opened once", tc.name, sealed, used, accepted, after)
		})
	}
}

// A state stamped less than ClockSkew after the epoch began may come from
// an instance whose clock runs ahead, sealed before the epoch: refused.
func TestStatesSealedWithinClockSkewOfTheEpochAreRefused(t *testing.T) {
	const skew = 400 * time.Millisecond
	r := enginetest.Redis(t)
	s := open(t, r, &redisreplay.Options{ClockSkew: skew})
	epoch, err := s.Epoch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ring := newRing(t)
	bind := requeststate.Binding{Method: "tools/call", Target: "delete_user"}
	for _, tc := range []struct {
		name   string
		sealed time.Time
		want   bool
	}{
		{"a second before the epoch", epoch.Add(-time.Second), false},
		{"at the epoch", epoch, false},
		{"1ms short of the skew", epoch.Add(skew - time.Millisecond), false},
		{"at the skew", epoch.Add(skew), true},
		{"a second past the skew", epoch.Add(skew + time.Second), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sealer, err := requeststate.NewSealer(ring, &requeststate.Options{Replay: s, Now: func() time.Time { return tc.sealed }})
			if err != nil {
				t.Fatal(err)
			}
			state, err := sealer.Seal(bind, []byte("x"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = sealer.Open(t.Context(), state, bind)
			if got := err == nil; got != tc.want || (err != nil && !errors.Is(err, requeststate.ErrInvalid)) {
				t.Errorf("Open of a state sealed %v after the epoch: %v; want accepted %v", tc.sealed.Sub(epoch), err, tc.want)
			}
		})
	}
}

// Open on a Redis with no epoch starts one and waits out the clock skew, so
// the very first state an instance seals opens on another.
func TestFirstStateOnAFreshRedisOpens(t *testing.T) {
	r := enginetest.Redis(t)
	ring := newRing(t)
	a := newInstance(t, r, ring)
	b := newInstance(t, r, ring)
	bind := requeststate.Binding{Method: "tools/call", Target: "delete_user"}
	state, err := a.sealer.Seal(bind, []byte("first"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := b.sealer.Open(t.Context(), state, bind); err != nil || string(data) != "first" {
		t.Fatalf("the first state sealed on a fresh Redis: %q, %v", data, err)
	}
	if !strings.Contains(a.logs.String(), "started a new epoch") {
		t.Errorf("the instance that started the first epoch did not log it:\n%s", a.logs.String())
	}
}

// Two instances (their own sealers and Redis connections, one key ring):
// a state sealed on A opens once on B and is then refused on both.
func TestStateSealedOnOneInstanceOpensOnceOnAnother(t *testing.T) {
	r := enginetest.Redis(t)
	ring := newRing(t)
	instance := func() *requeststate.Sealer {
		s, err := requeststate.NewSealer(ring, &requeststate.Options{Replay: open(t, r, nil)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := instance(), instance()
	bind := requeststate.Binding{Method: "tools/call", Target: "delete_user", PrincipalID: "alice"}
	state, err := a.Seal(bind, []byte("asked"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := b.Open(t.Context(), state, bind); err != nil || string(data) != "asked" {
		t.Fatalf("B opening A's state: %q, %v", data, err)
	}
	for name, s := range map[string]*requeststate.Sealer{"A": a, "B": b} {
		if _, err := s.Open(t.Context(), state, bind); !errors.Is(err, requeststate.ErrInvalid) {
			t.Errorf("replay on %s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestOpenRefusesBadConfiguration(t *testing.T) {
	r := enginetest.Redis(t)
	dead := enginetest.FreePort(t)
	for _, tc := range []struct {
		name, url, want string
	}{
		{"not a URL", "127.0.0.1:6379", "Redis URL"},
		{"wrong scheme", "http://127.0.0.1:6379/0", "Redis URL"},
		{"bad database", "redis://127.0.0.1:6379/x", "Redis URL"},
		{"nobody there", "redis://:s3cr3t-pass@127.0.0.1:" + strconv.Itoa(dead) + "/0", "does not answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := redisreplay.Open(context.Background(), tc.url, nil)
			if err == nil {
				t.Fatalf("Open(%q) succeeded", tc.url)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "s3cr3t-pass") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
	if _, err := redisreplay.New(nil, nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	if _, err := redisreplay.New(raw(t, r), &redisreplay.Options{Timeout: -time.Second}); err == nil {
		t.Error("negative Timeout accepted")
	}
	if _, err := redisreplay.New(raw(t, r), &redisreplay.Options{ClockSkew: -time.Second}); err == nil {
		t.Error("negative ClockSkew accepted")
	}
	for _, o := range []redisreplay.Options{
		{Replicas: -1},
		{Replicas: 1, ReplicaTimeout: -time.Second},
		{Replicas: 1, ReplicaTimeout: time.Second}, // not shorter than the default Timeout
		{Replicas: 1, Timeout: 100 * time.Millisecond, ReplicaTimeout: 200 * time.Millisecond},
	} {
		if _, err := redisreplay.New(raw(t, r), &o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
}

func newRing(t testing.TB) *requeststate.KeyRing {
	t.Helper()
	k, err := requeststate.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := requeststate.NewKeyRing(k)
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

// BenchmarkOpen measures Sealer.Open of a fresh state (decrypt, verify,
// record its single use) with the in-process store and with Redis on
// loopback, in one run: a single Redis, a Sentinel set's master without and
// with WAIT for its replica (the acknowledged write), and a Cluster.
func BenchmarkOpen(b *testing.B) {
	r := enginetest.Redis(b)
	set := enginetest.RedisSentinel(b)
	cluster := enginetest.RedisCluster(b)
	ring := newRing(b)
	store := func(url string, opts *redisreplay.Options) *redisreplay.Store {
		s, closeFn, err := redisreplay.Open(b.Context(), url, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { closeFn() })
		return s
	}
	s := store(r.URL(), nil)
	bind := requeststate.Binding{Method: "tools/call", Target: "delete_user", PrincipalID: "alice"}
	for _, bc := range []struct {
		name  string
		store requeststate.ReplayStore
	}{
		{"store=memory", requeststate.NewMemoryReplayStore()},
		{"store=redis", s},
		{"store=redis-sentinel", store(set.URL(), nil)},
		{"store=redis-sentinel,wait=1", store(set.URL(), &redisreplay.Options{Replicas: 1})},
		{"store=redis-cluster", store(cluster.URL(), nil)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sealer, err := requeststate.NewSealer(ring, &requeststate.Options{Replay: bc.store})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				state, err := sealer.Seal(bind, []byte(`{"asked":["agnara.confirm"]}`))
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := sealer.Open(b.Context(), state, bind); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use, for a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
