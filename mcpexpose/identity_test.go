package mcpexpose_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/internal/tasktest"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// twoIssuers is a verifier that trusts several issuers: a token
// "subject@name" is subject, vouched for by https://name.example, and so is
// "subject@name;anything", another token of the same caller. The same
// subject from two issuers is two callers (policy.Principal.Key).
func twoIssuers(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	token, _, _ = strings.Cut(token, ";")
	subject, issuer, ok := strings.Cut(token, "@")
	if !ok || subject == "" {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: subject, Expiration: time.Now().Add(time.Hour),
		Extra: map[string]any{mcpexpose.ExtraIssuer: "https://" + issuer + ".example"}}, nil
}

// sessionAsk sends a bodiless request (GET, DELETE) about the session as
// authz and returns its status and body; a stream the GET opens is not
// read, only its status.
func sessionAsk(t *testing.T, c *sessionConn, method, authz, lastEventID string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", authz)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	resp, err := c.client.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK && method == http.MethodGet && lastEventID == "" {
		return resp.StatusCode, "" // the session's own stream: it stays open
	}
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestSessionBelongsToIssuerAndSubject: a handshake-era session belongs to
// the issuer and subject of the token that opened it. With a verifier that
// trusts two issuers, the same subject from the other issuer is another
// caller: it cannot use the session (POST), resume its streams or open
// its stream (GET), or end it (DELETE), with the edge answering sessions'
// calls or without (DisableFastPath); each is refused as the SDK refuses
// another user, 403 "session user mismatch", and runs nothing. Another
// token of the owner's own issuer and subject is the owner.
func TestSessionBelongsToIssuerAndSubject(t *testing.T) {
	const rev = "2025-11-25"
	for _, fast := range []bool{true, false} {
		name := "edge"
		if !fast {
			name = "sdk"
		}
		t.Run(name, func(t *testing.T) {
			app := newDiffApp(t)
			h, err := mcpexpose.NewHandler(app.snap, &mcpexpose.HandlerOptions{Tokens: twoIssuers, DisableFastPath: !fast})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			t.Cleanup(srv.Close)
			client := &http.Client{}
			owner := openSession(t, client, srv.URL+"/mcp", "Bearer sam@a", rev)
			echo := wireRequest{name: "echo", header: sessionHeader(rev), body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`}
			x := owner.send(t, echo)
			first := firstEvent.FindStringSubmatch(x.raw)
			if x.status != http.StatusOK || first == nil {
				t.Fatalf("the owner's call: %d %s, want a primed stream", x.status, x.raw)
			}
			calls := app.calls.Load()

			other := *owner
			other.authz = "Bearer sam@b"
			const refused = "session user mismatch\n"
			list := wireRequest{name: "list", header: sessionHeader(rev), body: `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`}
			for _, r := range []wireRequest{echo, list} {
				if got := other.send(t, r); got.status != http.StatusForbidden || got.raw != refused {
					t.Errorf("POST %s by the other issuer's sam: %d %q, want 403 %q", r.name, got.status, trim(got.raw), refused)
				}
			}
			if n := app.calls.Load(); n != calls {
				t.Errorf("the other issuer's call ran the handler (%d runs, want %d)", n, calls)
			}
			for _, c := range []struct{ method, lastEventID string }{
				{http.MethodGet, first[1] + "_0"}, // resume the owner's call stream
				{http.MethodGet, ""},              // the session's own stream
				{http.MethodDelete, ""},
			} {
				if status, body := sessionAsk(t, &other, c.method, other.authz, c.lastEventID); status != http.StatusForbidden || body != refused {
					t.Errorf("%s (Last-Event-ID %q) by the other issuer's sam: %d %q, want 403 %q", c.method, c.lastEventID, status, trim(body), refused)
				}
			}

			again := *owner
			again.authz = "Bearer sam@a;second" // another token of the same caller
			if got := again.send(t, list); got.status != http.StatusOK {
				t.Errorf("the owner's tools/list after the other's attempts: %d %s", got.status, got.raw)
			}
			if status, body := sessionAsk(t, owner, http.MethodGet, owner.authz, first[1]+"_0"); status != http.StatusOK || !strings.Contains(body, `"hi"`) {
				t.Errorf("the owner resuming its stream: %d %q, want the call's answer replayed", status, body)
			}
			if status, body := sessionAsk(t, owner, http.MethodDelete, owner.authz, ""); status/100 != 2 {
				t.Errorf("the owner's DELETE: %d %q", status, body)
			}
		})
	}
}

// TestSessionCapCountsIssuerAndSubject: MaxSessionsPerPrincipal counts
// per issuer and subject: the same subject from another issuer is another
// principal, with slots of its own.
func TestSessionCapCountsIssuerAndSubject(t *testing.T) {
	app := newDiffApp(t)
	h, err := mcpexpose.NewHandler(app.snap, &mcpexpose.HandlerOptions{Tokens: twoIssuers, Limits: &mcpexpose.Limits{MaxSessionsPerPrincipal: 1}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	url, client := srv.URL+"/mcp", &http.Client{}
	openSession(t, client, url, "Bearer sam@a", "2025-11-25")
	openSession(t, client, url, "Bearer sam@b", "2025-11-25") // fatal when refused
	init := wireRequest{name: "initialize", header: sessionHeader(""), body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`}
	if x := send(t, client, url, "Bearer sam@a", init); x.status != http.StatusServiceUnavailable {
		t.Errorf("a second session of sam@a: %d %s, want 503: one session per principal", x.status, x.raw)
	}
}

// TestRequestStateIsBoundToIssuerAndSubject: a tools/call's sealed
// requestState opens only for the issuer and subject it was sealed for:
// the same subject from another issuer, and another subject of the same
// issuer, are refused as for any bad state, and run nothing; the caller
// it was sealed for then uses it.
func TestRequestStateIsBoundToIssuerAndSubject(t *testing.T) {
	var purged, notified atomic.Int32
	snap := interactiveApp(t, &purged, &notified)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Tokens: twoIssuers})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	args := map[string]any{"id": "r1"}
	state := stateOf(t, rawCall(t, url, "sam@a", "ops.purge", args, nil))
	for _, token := range []string{"sam@b", "kim@a"} {
		msg := rawCall(t, url, token, "ops.purge", args, map[string]any{"requestState": state, "inputResponses": yes})
		if e, _ := msg["error"].(map[string]any); e == nil || e["code"] != float64(-32602) || e["message"] != "invalid requestState" {
			t.Errorf("%s presenting sam@a's state: %v, want -32602 invalid requestState", token, msg)
		}
	}
	if purged.Load() != 0 {
		t.Fatal("another caller's retry ran the capability")
	}
	if msg := rawCall(t, url, "sam@a", "ops.purge", args, map[string]any{"requestState": state, "inputResponses": yes}); msg["result"] == nil || purged.Load() != 1 {
		t.Errorf("sam@a's own retry: %v (purged %d), want it run", msg, purged.Load())
	}
}

// TestTaskNotificationsOfTheSameSubjectFromAnotherIssuer: a listen for a
// task is agreed to for its owner only, by issuer and subject: the same
// subject from another issuer is left out, as for an unknown task.
func TestTaskNotificationsOfTheSameSubjectFromAnotherIssuer(t *testing.T) {
	w := tasktest.NewWorld(t)
	h, err := mcpexpose.NewHandler(w.Snap, &mcpexpose.HandlerOptions{Tokens: twoIssuers})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)
	id := tasktest.StartTask(t, url, "alice@a", "ask", map[string]any{})
	other, e := tasktest.Listen(t, url, "alice@b", true, []string{id})
	if e != nil {
		t.Fatal(e)
	}
	if got := other.Agreed(); len(got) != 0 {
		t.Errorf("the other issuer's alice was agreed %v, want none", got)
	}
	owner, e := tasktest.Listen(t, url, "alice@a", true, []string{id})
	if e != nil {
		t.Fatal(e)
	}
	if got := owner.Agreed(); len(got) != 1 || got[0] != id {
		t.Errorf("the owner was agreed %v, want [%s]", got, id)
	}
}

// trim shortens a body quoted in a failure.
func trim(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
