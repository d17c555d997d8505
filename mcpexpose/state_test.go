package mcpexpose_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
)

// rawCall posts one 2026-07-28 tools/call and returns the decoded
// JSON-RPC response.
func rawCall(t *testing.T, url, token, tool string, args, extra map[string]any) map[string]any {
	t.Helper()
	params := map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		},
	}
	for k, v := range extra {
		params[k] = v
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	data := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(d, `"id"`) {
				data = []byte(d)
			}
		}
	}
	var msg map[string]any
	if err := json.Unmarshal(data, &msg); err != nil {
		t.Fatalf("response %q: %v", raw, err)
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

var yes = map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}

func TestBadRequestStateIsRefused(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: mcpexpose.ServerOptions{StateTTL: time.Millisecond}})
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
