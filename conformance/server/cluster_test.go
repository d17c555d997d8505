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
)

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
	const tool = "test_input_required_result_request_state"
	meta := mcptest.Meta(map[string]any{"elicitation": map[string]any{}})
	_, _, msg := mcptest.Do(t, mcptest.Request(t, first, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}, "_meta": meta}, ""))
	res, _ := msg["result"].(map[string]any)
	state, _ = res["requestState"].(string)
	if res["resultType"] != "input_required" || state == "" {
		t.Fatalf("round 1 = %v, want input_required with a requestState", msg)
	}
	return state, retryOn(t, second, state)
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
		keys, err := requeststate.NewKeyFile(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "state.keys")
		if err := requeststate.WriteKeyFile(file, keys); err != nil {
			t.Fatal(err)
		}
		st := sharedState{keys: file, redis: enginetest.Redis(t).URL()}
		a, b := instance(t, st), instance(t, st)
		state, retry := roundTrip(t, a, b)
		res, _ := retry["result"].(map[string]any)
		content, _ := res["content"].([]any)
		if len(content) != 1 || !strings.Contains(content[0].(map[string]any)["text"].(string), "state-ok") {
			t.Fatalf("retry on the other replica = %v, want the fixture's state-ok text", retry)
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
// process and in Redis, in one run, so docs/scaling.md can give the cost of
// Redis as a ratio.
func BenchmarkConfirmationRound(b *testing.B) {
	keys, err := requeststate.NewKeyFile(time.Now())
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "state.keys")
	if err := requeststate.WriteKeyFile(file, keys); err != nil {
		b.Fatal(err)
	}
	redis := enginetest.Redis(b)
	for _, bc := range []struct {
		name string
		st   sharedState
	}{
		{"store=memory", sharedState{keys: file}},
		{"store=redis", sharedState{keys: file, redis: redis.URL()}},
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
