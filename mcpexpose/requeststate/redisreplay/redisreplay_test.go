package redisreplay_test

import (
	"context"
	"errors"
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

	fresh, err := s.Use(ctx, id, time.Now(), expires)
	if err != nil || !fresh {
		t.Fatalf("first Use = %v, %v; want true", fresh, err)
	}
	fresh, err = s.Use(ctx, id, time.Now(), expires)
	if err != nil || fresh {
		t.Fatalf("second Use = %v, %v; want false", fresh, err)
	}
	// Another store (another instance's connection) sees the same use.
	if fresh, err := open(t, r, nil).Use(ctx, id, time.Now(), expires); err != nil || fresh {
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
	if len(keys) != 1 || keys[0] != redisreplay.DefaultPrefix+id {
		t.Errorf("Redis holds %q, want only %q", keys, redisreplay.DefaultPrefix+id)
	}

	// Redis forgets an id once the state has expired.
	soon := time.Now().Add(150 * time.Millisecond)
	if fresh, err := s.Use(ctx, "ff"+id[2:], time.Now(), soon); err != nil || !fresh {
		t.Fatalf("Use with a short expiry = %v, %v", fresh, err)
	}
	deadline := time.Now().Add(5 * time.Second)
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
	expires := time.Now().Add(time.Minute)
	var wins, errs atomic.Int32
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			fresh, err := stores[i%len(stores)].Use(t.Context(), id, time.Now(), expires)
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

// Redis down: Use fails (the sealer fails closed); Redis back on the same
// address: the same store works again, without being rebuilt.
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

	r.Stop()
	start := time.Now()
	_, err = sealer.Open(t.Context(), state, b)
	if !errors.Is(err, requeststate.ErrUnavailable) {
		t.Fatalf("Open with Redis down: %v, want ErrUnavailable", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Open with Redis down took %v", took)
	}
	if err.Error() != requeststate.ErrUnavailable.Error() {
		t.Errorf("error %q carries the store's text; callers must see only %q", err, requeststate.ErrUnavailable)
	}

	r.Start()
	deadline := time.Now().Add(10 * time.Second)
	var data []byte
	for {
		data, err = sealer.Open(t.Context(), state, b)
		if !errors.Is(err, requeststate.ErrUnavailable) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil || string(data) != "x" {
		t.Fatalf("Open after Redis came back: %q, %v; want the state (it was never recorded as used)", data, err)
	}
	if _, err := sealer.Open(t.Context(), state, b); !errors.Is(err, requeststate.ErrInvalid) {
		t.Fatalf("replay after recovery: %v, want ErrInvalid", err)
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
// loopback, in one run.
func BenchmarkOpen(b *testing.B) {
	r := enginetest.Redis(b)
	ring := newRing(b)
	s, closeFn, err := redisreplay.Open(b.Context(), r.URL(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer closeFn()
	bind := requeststate.Binding{Method: "tools/call", Target: "delete_user", PrincipalID: "alice"}
	for _, bc := range []struct {
		name  string
		store requeststate.ReplayStore
	}{
		{"store=memory", requeststate.NewMemoryReplayStore()},
		{"store=redis", s},
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
