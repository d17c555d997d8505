package redislimit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/execution/redislimit"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/redis/go-redis/v9"
)

// instance returns a limiter with its own connection to r, as one server
// instance would have.
func instance(t *testing.T, r *enginetest.RedisServer, opts *redislimit.Options) *redislimit.Limiter {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	l, err := redislimit.New(c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestInstancesCountTogether(t *testing.T) {
	r := enginetest.Redis(t)
	a, b := instance(t, r, nil), instance(t, r, nil)
	ctx := t.Context()
	limit := agnara.RateLimit{Rate: 2, Burst: 2}
	key := "users.get_user 0:ada"

	if _, ok, err := a.Allow(ctx, key, limit); !ok || err != nil {
		t.Fatalf("first call on a: %v, %v", ok, err)
	}
	if _, ok, err := b.Allow(ctx, key, limit); !ok || err != nil {
		t.Fatalf("second call on b: %v, %v", ok, err)
	}
	for name, l := range map[string]*redislimit.Limiter{"a": a, "b": b} {
		wait, ok, err := l.Allow(ctx, key, limit)
		if ok || err != nil || wait <= 0 || wait > 500*time.Millisecond {
			t.Errorf("third call on %s: wait %v, ok %v, err %v; want refused for at most 500ms", name, wait, ok, err)
		}
	}
	// Another caller is unaffected.
	if _, ok, err := b.Allow(ctx, "users.get_user 0:grace", limit); !ok || err != nil {
		t.Fatalf("another caller: %v, %v", ok, err)
	}

	// Keys are namespaced and expire once the bucket would be full again.
	c := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer c.Close()
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, redislimit.DefaultPrefix) {
			t.Errorf("key %q outside the prefix", k)
		}
		pttl, err := c.PTTL(ctx, k).Result()
		if err != nil || pttl <= 0 || pttl > 1100*time.Millisecond {
			t.Errorf("key %q PTTL %v (%v), want at most the refill time, 1s", k, pttl, err)
		}
	}
	if len(keys) != 2 {
		t.Errorf("Redis holds %q, want one key per caller", keys)
	}
}

func TestRetryHintIsEnough(t *testing.T) {
	r := enginetest.Redis(t)
	l := instance(t, r, &redislimit.Options{Prefix: "test:"})
	ctx := t.Context()
	limit := agnara.RateLimit{Rate: 20, Burst: 1}
	if _, ok, _ := l.Allow(ctx, "k", limit); !ok {
		t.Fatal("first call refused")
	}
	wait, ok, err := l.Allow(ctx, "k", limit)
	if ok || err != nil || wait > 50*time.Millisecond {
		t.Fatalf("second call: %v, %v, %v; want refused for at most 50ms", wait, ok, err)
	}
	time.Sleep(wait) // the hint itself is under test
	if _, ok, err := l.Allow(ctx, "k", limit); !ok || err != nil {
		t.Fatalf("call at the hint: %v, %v; want admitted", ok, err)
	}
}

// With Redis down the limiter fails closed, or counts in the process with a
// fallback, and counts in Redis again once it is back.
func TestRedisDown(t *testing.T) {
	r := enginetest.Redis(t)
	local, _ := execution.NewLocalLimiter(nil)
	closed := instance(t, r, &redislimit.Options{Timeout: 200 * time.Millisecond})
	open := instance(t, r, &redislimit.Options{Timeout: 200 * time.Millisecond, Fallback: local})
	ctx := t.Context()
	limit := agnara.RateLimit{Rate: 0.001, Burst: 1}

	r.Stop()
	if _, ok, err := closed.Allow(ctx, "k", limit); ok || err == nil {
		t.Fatalf("Redis down, no fallback: ok %v, err %v; want refused with an error", ok, err)
	}
	if _, ok, err := open.Allow(ctx, "k", limit); !ok || err != nil {
		t.Fatalf("Redis down, fallback, first call: %v, %v", ok, err)
	}
	if _, ok, err := open.Allow(ctx, "k", limit); ok || err != nil {
		t.Fatalf("Redis down, fallback, second call: %v, %v; want refused by the fallback's count", ok, err)
	}

	r.Start() // empty: it had no persistence
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, ok, err := closed.Allow(ctx, "k", limit)
		if err == nil {
			if !ok {
				t.Fatal("first call after the restart refused")
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limiter did not recover after Redis came back: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // wait for the client to reconnect
	}
	if _, ok, err := open.Allow(ctx, "k", limit); ok || err != nil {
		t.Fatalf("after the restart, the other instance: %v, %v; want refused by the shared count", ok, err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	if _, err := redislimit.New(nil, nil); err == nil {
		t.Error("nil client accepted")
	}
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	if _, err := redislimit.New(c, &redislimit.Options{Timeout: -1}); err == nil {
		t.Error("negative timeout accepted")
	}
	l, _ := redislimit.New(c, nil)
	if _, _, err := l.Allow(t.Context(), "k", agnara.RateLimit{Burst: 1}); err == nil {
		t.Error("a limit without rate accepted")
	}
}
