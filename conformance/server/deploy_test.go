package main

import (
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
)

// The cross-instance confirmation on each Redis deployment: asked on one
// replica and retried on the other, it completes there, and its replay is
// refused on both.
func TestReplicasShareRequestStateOnEachDeployment(t *testing.T) {
	for _, tc := range []struct {
		name     string
		url      func(t *testing.T) string
		replicas int
	}{
		{"sentinel", func(t *testing.T) string { return enginetest.RedisSentinel(t).URL() }, 0},
		{"sentinel, WAIT 1", func(t *testing.T) string { return enginetest.RedisSentinel(t).URL() }, 1},
		{"cluster", func(t *testing.T) string { return enginetest.RedisCluster(t).URL() }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := sharedState{keys: keyFile(t), redis: tc.url(t), replicas: tc.replicas}
			a, b := instance(t, st), instance(t, st)
			for range 5 {
				state, retry := roundTrip(t, a, b)
				if !completed(retry) {
					t.Fatalf("retry on the other replica = %v, want the fixture's state-ok text", retry)
				}
				wantCode(t, retryOn(t, a, state), -32602)
				wantCode(t, retryOn(t, b, state), -32602)
			}
		})
	}
}

// TestSentinelFailoverReplaysNothing: confirmations run across two
// replicas on a Sentinel set (WAIT 1); the Redis replica stops replicating
// for a few of them (what it misses is what asynchronous replication loses),
// then the master is killed with SIGKILL. Every retry completes or fails closed (-32603 while no master
// answers, or while the promoted replica has no replica of its own to
// acknowledge; -32602 for a state the new master cannot vouch for); the
// sentinels promote the replica; once the killed node is restarted (and
// made a replica by the sentinels) confirmations complete again; and no
// state used before the failover is accepted after it.
func TestSentinelFailoverReplaysNothing(t *testing.T) {
	const before, stalled, after = 30, 5, 10 // confirmations before the replica stops, while it has, and completed after the failover
	set := enginetest.RedisSentinel(t)
	st := sharedState{keys: keyFile(t), redis: set.URL(), replicas: 1}
	a, b := instance(t, st), instance(t, st)

	var usedBefore, usedAfter []string // states whose retry completed
	outcomes := map[string]int{}       // retry outcomes during the load
	var old, promoted string
	var reattach func(string)
	var replica string
	detached := 0
	failedOver := make(chan string, 1)
	deadline := time.Now().Add(90 * time.Second)
	for i := 0; len(usedAfter) < after; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("after 90s: %d completed before the kill, %d after the failover (promoted: %q); outcomes %v", len(usedBefore), len(usedAfter), promoted, outcomes)
		}
		if len(usedBefore) >= before && reattach == nil {
			replica = set.Replica()
			reattach = set.Detach(replica)
		}
		if detached == stalled && old == "" {
			old = set.KillMaster()
			reattach(old)
			go func() { failedOver <- set.WaitFailover(old) }()
		}
		if reattach != nil && old == "" {
			detached++
		}
		select {
		case promoted = <-failedOver:
			set.Restart(old) // the operator brings the crashed node back: a replica to acknowledge
		default:
		}
		first, second := a, b
		if i%2 == 1 {
			first, second = b, a
		}
		state := ask(t, first)
		retry := retryOn(t, second, state)
		e, _ := retry["error"].(map[string]any)
		switch {
		case completed(retry) && old == "":
			usedBefore = append(usedBefore, state)
			outcomes["completed"]++
		case completed(retry):
			outcomes["completed"]++
			usedAfter = append(usedAfter, state)
		case e != nil && e["code"] == float64(-32603):
			outcomes["failed closed: unavailable"]++
		case e != nil && e["code"] == float64(-32602):
			outcomes["failed closed: stale"]++
		default:
			t.Fatalf("retry during the load = %v, want a result or a -32603/-32602 error", retry)
		}
	}
	if promoted == "" || promoted == old {
		t.Fatalf("confirmations completed after the kill of %s without a promotion (%q)", old, promoted)
	}
	replayed := 0
	for _, state := range append(append([]string{}, usedBefore...), usedAfter...) {
		for _, url := range []string{a, b} {
			if completed(retryUntilAnswered(t, url, state)) {
				replayed++
			}
		}
	}
	t.Logf("Sentinel failover (master %s killed, %s promoted): retries during the load %v; states replayed after failover = %d (of %d used before it and %d after, each retried on both replicas)",
		old, promoted, outcomes, replayed, len(usedBefore), len(usedAfter))
	if replayed != 0 {
		t.Errorf("%d replays of used states were accepted, want 0", replayed)
	}
}
