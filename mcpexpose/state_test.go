package mcpexpose_test

import (
	"encoding/base64"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
)

// rawCall posts one 2026-07-28 tools/call, from a client that declares
// elicitation, and returns the decoded JSON-RPC response.
func rawCall(t *testing.T, url, token, tool string, args, extra map[string]any) map[string]any {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": mcptest.Meta(map[string]any{"elicitation": map[string]any{}})}
	for k, v := range extra {
		params[k] = v
	}
	_, body, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", params, token))
	if msg == nil {
		t.Fatalf("response %q is not a JSON-RPC message", body)
	}
	return msg
}

func stateOf(t *testing.T, msg map[string]any) string {
	t.Helper()
	res, _ := msg["result"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" {
		t.Fatalf("want an input-required result, got %v", msg)
	}
	s, _ := res["requestState"].(string)
	return s
}

var yes = map[string]any{execution.ConfirmKey: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}

func TestBadRequestStateIsRefused(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{StateTTL: time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	other, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	otherURL := httptestServer(t, other)
	args := map[string]any{"id": "r1"}
	fresh := func(t *testing.T, url string) string {
		return stateOf(t, rawCall(t, url, "writer", "ops.purge", args, nil))
	}
	flip := func(s string) string {
		b, _ := base64.RawURLEncoding.DecodeString(s)
		b[len(b)/2] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct {
		name  string
		state func(t *testing.T) string
		token string
		tool  string
		args  map[string]any
		wait  time.Duration
	}{
		{"tampered", func(t *testing.T) string { return flip(fresh(t, url)) }, "writer", "ops.purge", args, 0},
		{"truncated", func(t *testing.T) string { s := fresh(t, url); return s[:len(s)-4] }, "writer", "ops.purge", args, 0},
		{"garbage", func(t *testing.T) string { return "not-a-state" }, "writer", "ops.purge", args, 0},
		{"expired", func(t *testing.T) string { return fresh(t, url) }, "writer", "ops.purge", args, 20 * time.Millisecond},
		{"foreign principal", func(t *testing.T) string { return fresh(t, url) }, "reader", "ops.purge", args, 0},
		{"other tool", func(t *testing.T) string { return fresh(t, url) }, "writer", "ops.notify", nil, 0},
		{"other arguments", func(t *testing.T) string { return fresh(t, url) }, "writer", "ops.purge", map[string]any{"id": "r2"}, 0},
		{"another server's state", func(t *testing.T) string { return fresh(t, otherURL) }, "writer", "ops.purge", args, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := tt.state(t)
			time.Sleep(tt.wait)
			before := purged.Load() + notified.Load()
			msg := rawCall(t, url, tt.token, tt.tool, tt.args, map[string]any{"requestState": state, "inputResponses": yes})
			e, _ := msg["error"].(map[string]any)
			if e == nil || e["code"] != float64(-32602) || e["message"] != "invalid requestState" {
				t.Errorf("response = %v, want -32602 invalid requestState", msg)
			}
			if purged.Load()+notified.Load() != before {
				t.Error("a handler ran")
			}
		})
	}
}

func TestRequestStateIsSingleUse(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tokens})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	args := map[string]any{"id": "r1"}
	state := stateOf(t, rawCall(t, url, "writer", "ops.purge", args, nil))
	first := rawCall(t, url, "writer", "ops.purge", args, map[string]any{"requestState": state, "inputResponses": yes})
	if fmt.Sprint(first["result"]) == "<nil>" || purged.Load() != 1 {
		t.Fatalf("first use = %v (purged %d)", first, purged.Load())
	}
	second := rawCall(t, url, "writer", "ops.purge", args, map[string]any{"requestState": state, "inputResponses": yes})
	if e, _ := second["error"].(map[string]any); e == nil || e["code"] != float64(-32602) {
		t.Errorf("second use = %v, want -32602", second)
	}
	if purged.Load() != 1 {
		t.Error("the replayed state ran the capability again")
	}
	// Answers without any state answer nothing: the question is asked again.
	again := rawCall(t, url, "writer", "ops.purge", args, map[string]any{"inputResponses": yes})
	stateOf(t, again)
	if purged.Load() != 1 {
		t.Error("answers without state ran the capability")
	}
}
