package enginetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisCluster: the URL reaches a cluster whose three masters share
// the slots, and keys in different slots are written on different nodes.
func TestRedisCluster(t *testing.T) {
	c := RedisCluster(t)
	o, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClusterClient(o)
	defer rc.Close()
	ctx := context.Background()
	for i := range 30 {
		if err := rc.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	holding := 0
	for _, addr := range c.Addrs() {
		n := redis.NewClient(&redis.Options{Addr: addr})
		if size, _ := n.DBSize(ctx).Result(); size > 0 {
			holding++
		}
		n.Close()
	}
	if holding != 3 {
		t.Errorf("30 keys are on %d of 3 nodes, want all 3", holding)
	}
}

// TestRedisSentinelFailover: a write through the sentinels reaches the
// replica; killing the master promotes the replica, which keeps the write.
func TestRedisSentinelFailover(t *testing.T) {
	s := RedisSentinel(t)
	o, err := redis.ParseFailoverURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewFailoverClient(o)
	defer rc.Close()
	ctx := context.Background()
	if err := rc.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := rc.Wait(ctx, 1, 10*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v, want 1 replica", n, err)
	}
	old := s.KillMaster()
	master := s.WaitFailover(old)
	if master == old {
		t.Fatalf("no failover: the master is still %s", old)
	}
	n := redis.NewClient(&redis.Options{Addr: master})
	defer n.Close()
	if got, err := n.Get(ctx, "kept").Result(); err != nil || got != "1" {
		t.Errorf("on the promoted replica, GET kept = %q, %v, want 1", got, err)
	}
}
