package mcpexpose_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// askedKeys returns the keys of an input-required result's questions.
func askedKeys(t *testing.T, msg map[string]any) []string {
	t.Helper()
	res, _ := msg["result"].(map[string]any)
	reqs, _ := res["inputRequests"].(map[string]any)
	if res == nil || res["resultType"] != "input_required" || reqs == nil {
		t.Fatalf("want an input-required result, got %v", msg)
	}
	var keys []string
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestAnswersToQuestionsNotAskedAreIgnored: a retry's answers count only
// under the keys its sealed state says were asked. ops.notify asks
// "contact", then "send"; an answer to "send" sent before "send" was asked
// must never be used, neither in the round it arrives nor in a later one
// (it must not ride along in the state the server seals next).
func TestAnswersToQuestionsNotAskedAreIgnored(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	contact := map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "email": "ada@example.com"}}
	send := map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	tests := []struct {
		name    string
		retries []map[string]any // the inputResponses of each retry, in order
		want    []string         // the keys the last answer asks
	}{
		{"later question answered with the first", []map[string]any{{"contact": contact, "send": send}}, []string{"send"}},
		{"later question answered alone, then the first", []map[string]any{{"send": send}, {"contact": contact}}, []string{"send"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := notified.Load()
			msg := rawCall(t, url, "", "ops.notify", nil, nil)
			if got := askedKeys(t, msg); !slices.Equal(got, []string{"contact"}) {
				t.Fatalf("first round asks %v, want [contact]", got)
			}
			for _, responses := range tt.retries {
				msg = rawCall(t, url, "", "ops.notify", nil, map[string]any{"requestState": stateOf(t, msg), "inputResponses": responses})
			}
			if got := askedKeys(t, msg); !slices.Equal(got, tt.want) {
				t.Errorf("last round asks %v, want %v", got, tt.want)
			}
			if notified.Load() != before {
				t.Error("the notification was sent on an answer to a question never asked")
			}
		})
	}
}

// TestExpiryBackstop: a verifier that accepts a token without checking its
// expiry is backed up by the handler, which refuses a token past its expiry
// (beyond the clock-skew allowance) or without one, with the invalid_token
// challenge.
func TestExpiryBackstop(t *testing.T) {
	f := newFixture(t)
	careless := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		ti := &auth.TokenInfo{UserID: "eve"}
		switch token {
		case "expired":
			ti.Expiration = time.Now().Add(-time.Hour)
		case "skewed":
			ti.Expiration = time.Now().Add(-time.Minute) // within the allowance
		case "fresh":
			ti.Expiration = time.Now().Add(time.Hour)
		case "no-expiry":
		}
		return ti, nil
	}
	srv := serve(t, f, &mcpexpose.HandlerOptions{Tokens: careless})
	for _, tc := range []struct {
		token     string
		status    int
		challenge string
		body      string
	}{
		{"fresh", 200, "", `"fx.echo"`},
		{"skewed", 200, "", `"fx.echo"`},
		{"expired", 401, `Bearer error="invalid_token"`, "the bearer token has expired"},
		{"no-expiry", 401, `Bearer error="invalid_token"`, "the bearer token has no expiry"},
	} {
		t.Run(tc.token, func(t *testing.T) {
			req := mcptest.Request(t, srv.URL+"/mcp", "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, tc.token)
			resp, body, _ := mcptest.Do(t, req)
			if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge || !strings.Contains(string(body), tc.body) {
				t.Errorf("status %d, challenge %q, body %s; want %d, %q, %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body, tc.status, tc.challenge, tc.body)
			}
		})
	}
}
