package mcpexpose_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
)

// rawCall posts one 2026-07-28 tools/call of fx.echo as token's holder and
// returns the tool result's text and isError.
func rawEchoCall(t *testing.T, url, token string) (string, bool) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"fx.echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "fx.echo")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var msg struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(mcptest.Message(resp.Header.Get("Content-Type"), data), &msg); err != nil || len(msg.Result.Content) != 1 {
		t.Fatalf("not a tool result (%v): %s", err, data)
	}
	return msg.Result.Content[0].Text, msg.Result.IsError
}

// The server-wide default limits a tool without its own, per caller, and
// the refusal reaches the client as the canonical failure with its hint.
func TestRateLimitOnTheWire(t *testing.T) {
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{
		Tokens: tokens,
		Server: mcpexpose.ServerOptions{Identity: mapper, RateLimit: agnara.RateLimit{Rate: 0.01, Burst: 2}},
	})
	for range 2 {
		if text, isErr := rawEchoCall(t, srv.URL, "reader"); isErr {
			t.Fatalf("call within the limit failed: %s", text)
		}
	}
	before := f.calls.Load()
	text, isErr := rawEchoCall(t, srv.URL, "reader")
	var got struct {
		Code    string         `json:"code"`
		Reason  string         `json:"reason"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil || !isErr {
		t.Fatalf("third call: isError %v, text %s (%v)", isErr, text, err)
	}
	ms, _ := got.Details["retry_after_ms"].(float64)
	if got.Code != "unavailable" || got.Reason != "rate_limited" || ms < 90_000 || ms > 100_000 || !strings.Contains(got.Message, "retry in") {
		t.Errorf("third call answered %s; want unavailable, rate_limited, retry_after_ms about 100000", text)
	}
	if f.calls.Load() != before {
		t.Error("the handler ran for a refused call")
	}
	// Another caller has a bucket of its own.
	if text, isErr := rawEchoCall(t, srv.URL, "writer"); isErr {
		t.Errorf("another caller was refused: %s", text)
	}
	// The legacy era's server counts in the same bucket: switching eras is
	// no way around the limit.
	cs := connect(t, srv.URL+"/mcp", "reader", "2025-11-25", nil)
	res, err := cs.CallTool(t.Context(), callParams("fx.echo", map[string]any{"text": "hi"}))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(t, res), `"reason":"rate_limited"`) {
		t.Errorf("legacy-era call answered %s, want the rate-limit failure", textOf(t, res))
	}
}

func TestServerRefusesABadRateLimit(t *testing.T) {
	f := newFixture(t)
	opts := mcpexpose.ServerOptions{RateLimit: agnara.RateLimit{Rate: 1}}
	for ctor, err := range map[string]error{
		"NewServer":  second(mcpexpose.NewServer(f.snap, &opts)),
		"NewHandler": second(mcpexpose.NewHandler(f.snap, &mcpexpose.HandlerOptions{Server: opts})),
		"RunStdio":   mcpexpose.RunStdio(t.Context(), f.snap, policy.Anonymous(), &opts),
	} {
		if err == nil || !strings.Contains(err.Error(), "RateLimit: rate limit: Burst 0 must be at least 1") {
			t.Errorf("%s: %v, want an error naming the bad RateLimit", ctor, err)
		}
	}
}
