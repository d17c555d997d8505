package main

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
)

// clockSkew is redisreplay's default Options.ClockSkew, which the servers
// here leave zero: a state sealed sooner after an epoch began is refused.
// redisreplay's TestDefaultClockSkewOfTheClusterTests holds the two equal.
const clockSkew = time.Second

// instance serves the fixture handler with st, as one replica would.
func instance(t testing.TB, st sharedState) string {
	t.Helper()
	opts, release, err := st.options(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { release() })
	opts.Logger = slog.New(slog.DiscardHandler)
	h, err := newHandler(opts, true)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// roundTrip sends round 1 of the request-state fixture to first and its
// retry to second, and returns the retry's response.
func roundTrip(t testing.TB, first, second string) (state string, retry map[string]any) {
	t.Helper()
	state = ask(t, first)
	return state, retryOn(t, second, state)
}

// ask sends round 1 of the request-state fixture to url and returns the
// state of its confirmation question.
func ask(t testing.TB, url string) string {
	t.Helper()
	const tool = "test_input_required_result_request_state"
	meta := mcptest.Meta(map[string]any{"elicitation": map[string]any{}})
	_, _, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": meta}, ""))
	res, _ := msg["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("round 1 = %v, want input_required with a requestState", msg)
	}
	return state
}

// completed reports whether a retry's response is the fixture's result:
// the handler ran past its confirmation.
func completed(msg map[string]any) bool {
	res, _ := msg["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		return false
	}
	text, _ := content[0].(map[string]any)["text"].(string)
	return strings.Contains(text, "state-ok")
}

// keyFile writes a fresh request-state key file, as agnara keys generate
// does, and returns its path.
func keyFile(t testing.TB) string {
	t.Helper()
	keys, err := requeststate.NewKeyFile(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "state.keys")
	if err := requeststate.WriteKeyFile(file, keys); err != nil {
		t.Fatal(err)
	}
	return file
}

func retryOn(t testing.TB, url, state string) map[string]any {
	t.Helper()
	yes := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
	_, _, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", map[string]any{
		"name": "test_input_required_result_request_state", "arguments": map[string]any{},
		"_meta": mcptest.Meta(map[string]any{"elicitation": map[string]any{}}), "requestState": state, "inputResponses": yes,
	}, ""))
	return msg
}

// retryUntilAnswered retries state on url again while the replica
// answers -32603 (its replay store reconnecting), for at most ten seconds.
func retryUntilAnswered(t *testing.T, url, state string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg := retryOn(t, url, state)
		e, _ := msg["error"].(map[string]any)
		if e == nil || e["code"] != float64(-32603) || time.Now().After(deadline) {
			return msg
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantStale reports whether msg is the refusal of a stale requestState,
// and fails the test when it is anything but that or a result.
func wantStale(t *testing.T, msg map[string]any) bool {
	t.Helper()
	e, _ := msg["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32602) || e["message"] != "invalid requestState" {
		t.Errorf("retry = %v, want -32602 invalid requestState", msg)
		return false
	}
	return true
}

func wantCode(t *testing.T, msg map[string]any, code float64) {
	t.Helper()
	e, _ := msg["error"].(map[string]any)
	if e == nil || e["code"] != code {
		t.Errorf("response = %v, want JSON-RPC error %v", msg, code)
	}
}

// Two replicas of the fixture server, as behind a round-robin balancer:
// without shared state, a retry that reaches the other replica is refused
// (the bug that made confirmations fail behind a load balancer); with one
// key file and one Redis, it completes there, and its replay is refused on
// both.
func TestReplicasShareRequestState(t *testing.T) {
	t.Run("per process", func(t *testing.T) {
		a, b := instance(t, sharedState{}), instance(t, sharedState{})
		_, retry := roundTrip(t, a, b)
		wantCode(t, retry, -32602)
	})
	t.Run("key file and Redis", func(t *testing.T) {
		st := sharedState{keys: keyFile(t), redis: enginetest.Redis(t).URL()}
		a, b := instance(t, st), instance(t, st)
		state, retry := roundTrip(t, a, b)
		if !completed(retry) {
			t.Fatalf("retry on the other replica = %v, want the fixture's state-ok text", retry)
		}
		wantCode(t, retryOn(t, a, state), -32602)
		wantCode(t, retryOn(t, b, state), -32602)
	})
	t.Run("Redis restarted empty", func(t *testing.T) {
		// Completed confirmations (round 1 on A, the retry on B) and
		// pending ones (round 1 only); then Redis is killed and comes back
		// empty on the same port, neither replica restarted. Every retry
		// of a state sealed before is refused on both replicas, and the
		// handler ran once per confirmation; one asked afterwards
		// completes once.
		const done, pending = 50, 10
		r := enginetest.Redis(t)
		st := sharedState{keys: keyFile(t), redis: r.URL()}
		a, b := instance(t, st), instance(t, st)
		runs := map[string]int{} // handler runs past the confirmation, per state
		var states []string
		for i := range done + pending {
			state := ask(t, a)
			states = append(states, state)
			runs[state] = 0
			if i < done {
				if retry := retryOn(t, b, state); completed(retry) {
					runs[state]++
				} else {
					t.Fatalf("confirmation %d before the restart = %v", i, retry)
				}
			}
		}

		r.Kill()
		r.Start()
		refused := 0
		for _, state := range states {
			for _, url := range []string{a, b} {
				msg := retryUntilAnswered(t, url, state)
				switch {
				case completed(msg):
					runs[state]++
				case wantStale(t, msg):
					refused++
				}
			}
		}
		hist := map[int]int{} // handler runs → confirmations that many
		for i, state := range states {
			want := 0
			if i < done {
				want = 1
				hist[runs[state]]++
			}
			if runs[state] != want {
				t.Errorf("confirmation %d: the handler ran %d times, want %d", i, runs[state], want)
			}
		}
		t.Logf("Redis restarted empty: %d confirmations completed and %d pending before it; %d of %d retries after it refused; completed confirmations by handler runs: %v",
			done, pending, refused, 2*len(states), hist)

		// The refused retries started a new epoch. A confirmation asked
		// once it is older than the clock skew completes, once.
		store, release, err := redisreplay.Open(t.Context(), r.URL(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		epoch, err := store.Epoch(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(epoch.Add(clockSkew)))
		state, retry := roundTrip(t, a, b)
		if !completed(retry) {
			t.Fatalf("a confirmation asked after the restart = %v, want the fixture's state-ok text", retry)
		}
		wantCode(t, retryOn(t, a, state), -32602)
		wantCode(t, retryOn(t, b, state), -32602)
	})
	t.Run("Redis without a key file", func(t *testing.T) {
		_, _, err := sharedState{redis: "redis://127.0.0.1:1/0"}.options(t.Context())
		if err == nil || !strings.Contains(err.Error(), "-replay-redis needs -state-keys") {
			t.Errorf("options = %v, want the -state-keys error", err)
		}
	})
}

// BenchmarkConfirmationRound measures one whole confirmation (round 1 and
// its retry, over loopback HTTP) with request state single-use in this
// process and in Redis (single, Sentinel without and with WAIT for one
// replica, Cluster), in one run, so docs/scaling.md can give the cost of
// each as a ratio.
func BenchmarkConfirmationRound(b *testing.B) {
	file := keyFile(b)
	redis := enginetest.Redis(b)
	set := enginetest.RedisSentinel(b)
	cluster := enginetest.RedisCluster(b)
	for _, bc := range []struct {
		name string
		st   sharedState
	}{
		{"store=memory", sharedState{keys: file}},
		{"store=redis", sharedState{keys: file, redis: redis.URL()}},
		{"store=redis-sentinel", sharedState{keys: file, redis: set.URL()}},
		{"store=redis-sentinel,wait=1", sharedState{keys: file, redis: set.URL(), replicas: 1}},
		{"store=redis-cluster", sharedState{keys: file, redis: cluster.URL()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			url := instance(b, bc.st)
			b.ReportAllocs()
			for b.Loop() {
				_, retry := roundTrip(b, url, url)
				if retry["result"] == nil {
					b.Fatalf("retry = %v", retry)
				}
			}
		})
	}
}
