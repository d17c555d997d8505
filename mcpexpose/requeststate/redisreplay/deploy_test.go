package redisreplay_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/redisconn"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
)

// TestSingleUseOnEachDeployment: on Sentinel and on a Cluster a state's
// id is accepted once, through this store and through another instance's;
// with WAIT for one replica on Sentinel too.
func TestSingleUseOnEachDeployment(t *testing.T) {
	sentinel := enginetest.RedisSentinel(t)
	cluster := enginetest.RedisCluster(t)
	for _, tc := range []struct {
		name string
		url  string
		opts *redisreplay.Options
	}{
		{"sentinel", sentinel.URL(), nil},
		{"sentinel, WAIT 1", sentinel.URL(), &redisreplay.Options{Replicas: 1}},
		{"cluster", cluster.URL(), nil},
		{"cluster, own prefix", cluster.URL(), &redisreplay.Options{Prefix: "app:{replay}:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, closeA, err := redisreplay.Open(t.Context(), tc.url, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer closeA()
			b, closeB, err := redisreplay.Open(t.Context(), tc.url, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer closeB()
			for i := range 20 {
				id := fmt.Sprintf("%032x", time.Now().UnixNano()+int64(i))
				sealed, expires := time.Now(), time.Now().Add(time.Minute)
				if fresh, err := a.Use(t.Context(), id, sealed, expires); err != nil || !fresh {
					t.Fatalf("first Use = %v, %v; want true", fresh, err)
				}
				for name, s := range map[string]*redisreplay.Store{"this": a, "another": b} {
					if fresh, err := s.Use(t.Context(), id, sealed, expires); err != nil || fresh {
						t.Fatalf("Use again on %s instance = %v, %v; want false", name, fresh, err)
					}
				}
			}
		})
	}
	t.Run("cluster refuses a prefix without a hash tag", func(t *testing.T) {
		c, err := redisconn.Dial(t.Context(), "test", cluster.URL(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_, err = redisreplay.New(c, &redisreplay.Options{Prefix: "app:replay:"})
		if err == nil || !strings.Contains(err.Error(), "hash tag") {
			t.Errorf("New with a tagless prefix on a cluster = %v, want the hash tag error", err)
		}
	})
}

// TestUnacknowledgedUseFailsClosed: with Replicas 1 and no replica to
// acknowledge (a lone Redis, a Cluster's master without one, or a master
// whose replica stopped replicating),
// a fresh state is refused as Redis unavailable, not accepted, and it is
// not accepted afterwards either: its marker is on the master.
func TestUnacknowledgedUseFailsClosed(t *testing.T) {
	r := enginetest.Redis(t)
	s, closeFn, err := redisreplay.Open(t.Context(), r.URL(), &redisreplay.Options{Replicas: 1, ReplicaTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	sealed, expires := time.Now(), time.Now().Add(time.Minute)
	fresh, err := s.Use(t.Context(), id, sealed, expires)
	if err == nil || fresh || !strings.Contains(err.Error(), "acknowledged by 0 of the 1 replicas") {
		t.Fatalf("Use without a replica = %v, %v; want an acknowledgement error", fresh, err)
	}
	if fresh, err := s.Use(t.Context(), id, sealed, expires); fresh {
		t.Fatalf("Use again = %v, %v; want refused", fresh, err)
	}

	// A Cluster's masters have no replica here: the WAIT, sent with the
	// script to the master of the keys' slot, is acknowledged by none.
	cluster := enginetest.RedisCluster(t)
	cs, closeCS, err := redisreplay.Open(t.Context(), cluster.URL(), &redisreplay.Options{Replicas: 1, ReplicaTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeCS()
	sealed = time.Now() // after the new Cluster's epoch began
	fresh, err = cs.Use(t.Context(), "cc"+id[2:], sealed, expires)
	if err == nil || fresh || !strings.Contains(err.Error(), "acknowledged by 0 of the 1 replicas") {
		t.Fatalf("Use on a Cluster without replicas = %v, %v; want an acknowledgement error", fresh, err)
	}
	if fresh, err := cs.Use(t.Context(), "cc"+id[2:], sealed, expires); fresh {
		t.Fatalf("Use again on the Cluster = %v, %v; want refused", fresh, err)
	}

	// Sentinel's replica stalls (SIGSTOP): its link stays up, but it
	// acknowledges nothing.
	set := enginetest.RedisSentinel(t)
	ss, closeSS, err := redisreplay.Open(t.Context(), set.URL(), &redisreplay.Options{Replicas: 1, ReplicaTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer closeSS()
	if fresh, err := ss.Use(t.Context(), "aa"+id[2:], time.Now(), expires); err != nil || !fresh {
		t.Fatalf("Use with a replica = %v, %v; want true", fresh, err)
	}
	thaw := set.Freeze(set.Replica())
	fresh, err = ss.Use(t.Context(), "bb"+id[2:], time.Now(), expires)
	thaw()
	if err == nil || fresh || !strings.Contains(err.Error(), "acknowledged by 0 of the 1 replicas") {
		t.Fatalf("Use while the replica is stalled = %v, %v; want an acknowledgement error", fresh, err)
	}
}
