// Package cluster tests haproxy.cfg: several instances of the users
// example behind HAProxy, sharing a request-state key file and a Redis
// replay store, as README.md tells an operator to run them.
package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// clockSkew is redisreplay's default Options.ClockSkew, which the servers
// here leave zero: a state sealed sooner after an epoch began is refused.
// redisreplay's TestDefaultClockSkewOfTheClusterTests holds the two equal.
const clockSkew = time.Second

// The JSON-RPC errors a retry can get instead of its result.
const (
	codeInvalidParams = -32602 // a requestState used, expired, forged, or sealed under an unknown key
	codeInternal      = -32603
	msgUnavailable    = "requestState cannot be verified now; retry later"
)

// TestConfigIsValid checks the committed haproxy.cfg, unchanged, as an
// operator would before using it.
func TestConfigIsValid(t *testing.T) {
	out, err := exec.Command("haproxy", "-c", "-f", "haproxy.cfg").CombinedOutput()
	if err != nil {
		t.Fatalf("haproxy -c -f haproxy.cfg: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Configuration file is valid") || strings.Contains(string(out), "WARNING") {
		t.Errorf("haproxy -c printed %q, want a valid config without warnings", out)
	}
}

func TestCluster(t *testing.T) {
	p := build(t)
	keys := p.newKeyFile(t)
	redis := enginetest.Redis(t)

	t.Run("confirmation crosses instances, and is single use on all", func(t *testing.T) {
		c := startCluster(t, p, 3, keys, redis.URL())
		a, b := c.instances[0], c.instances[1]

		// Directly: round 1 on one instance, the retry on another.
		id := seedAll(t, c.instances)
		state := ask(t, a.url, id)
		wantDeleted(t, confirm(t, b.url, id, state))
		if got := holders(t, c.instances, id); !slices.Equal(got, []string{a.name, c.instances[2].name}) {
			t.Fatalf("after the retry on %s, user %s is on %v: want it deleted there only", b.name, id, got)
		}
		// The same retry again, on every instance: refused, nothing deleted.
		for _, in := range c.instances {
			wantRPCError(t, confirm(t, in.url, id, state), codeInvalidParams, "invalid requestState")
		}
		if got := holders(t, c.instances, id); len(got) != 2 {
			t.Errorf("a replay deleted user %s: now on %v", id, got)
		}

		// Through the proxy: round-robin sends the two rounds to two
		// instances. Exactly one instance deletes.
		id = seedAll(t, c.instances)
		state = ask(t, c.proxy, id)
		wantDeleted(t, confirm(t, c.proxy, id, state))
		if got := holders(t, c.instances, id); len(got) != 2 {
			t.Fatalf("after the retry through the proxy, user %s is on %v: want it deleted on one instance", id, got)
		}
		for range c.instances { // round-robin: each instance gets one replay
			wantRPCError(t, confirm(t, c.proxy, id, state), codeInvalidParams, "invalid requestState")
		}
		if got := holders(t, c.instances, id); len(got) != 2 {
			t.Errorf("a replay through the proxy deleted user %s: now on %v", id, got)
		}
	})

	t.Run("rotated keys: retired keys open until dropped, states expire", func(t *testing.T) {
		const ttl = 3 * time.Second
		file := p.newKeyFile(t)
		first := readKeys(t, file)
		old := startInstance(t, p, "old", file, redis.URL(), "-state-ttl", ttl.String())
		createUser(t, old.url) // id 1
		createUser(t, old.url) // id 2
		inFlight := ask(t, old.url, "1")
		late := ask(t, old.url, "2")
		minted := time.Now()

		// Rotate (retired keys kept an hour, the default) and replace the
		// instance, as a rolling restart does.
		p.keys(t, "rotate", file)
		rotated := readKeys(t, file)
		if len(rotated) != 2 || rotated[0].ID == first[0].ID || rotated[1].ID != first[0].ID || rotated[1].Retired.IsZero() {
			t.Fatalf("after keys rotate the file holds %v, want a new current key and %s retired", ids(rotated), first[0].ID)
		}
		next := startInstance(t, p, "next", file, redis.URL(), "-state-ttl", ttl.String())
		old.stop()
		createUser(t, next.url) // id 1
		createUser(t, next.url) // id 2

		// A state sealed under the retired key, within its TTL: completes.
		if time.Since(minted) >= ttl {
			t.Fatalf("the instance took %v to replace: the state expired before the test could use it", time.Since(minted))
		}
		wantDeleted(t, confirm(t, next.url, "1", inFlight))
		// Another one, after its TTL: refused, though its key still opens.
		time.Sleep(time.Until(minted.Add(ttl + 200*time.Millisecond)))
		wantRPCError(t, confirm(t, next.url, "2", late), codeInvalidParams, "invalid requestState")
		if !hasUser(t, next.url, "2") {
			t.Error("an expired state deleted user 2")
		}
		// A fresh state, sealed under the new key, works.
		wantDeleted(t, confirm(t, next.url, "2", ask(t, next.url, "2")))

		// Rotate with -keep 0: the retired keys go at once, and a state
		// sealed under them is refused even within its TTL.
		createUser(t, next.url) // id 3
		sealedUnderDropped := ask(t, next.url, "3")
		minted = time.Now()
		p.keys(t, "rotate", "-keep", "0", file)
		if now := readKeys(t, file); len(now) != 1 || now[0].ID == rotated[0].ID {
			t.Fatalf("after keys rotate -keep 0 the file holds %v, want one new key", ids(now))
		}
		last := startInstance(t, p, "last", file, redis.URL(), "-state-ttl", ttl.String())
		next.stop()
		for range 3 {
			createUser(t, last.url) // ids 1 to 3
		}
		if time.Since(minted) >= ttl {
			t.Fatalf("the instance took %v to replace: the state expired, and the test could not tell why it is refused", time.Since(minted))
		}
		wantRPCError(t, confirm(t, last.url, "3", sealedUnderDropped), codeInvalidParams, "invalid requestState")
		if !hasUser(t, last.url, "3") {
			t.Error("a state sealed under a dropped key deleted user 3")
		}
		wantDeleted(t, confirm(t, last.url, "3", ask(t, last.url, "3")))
	})

	t.Run("replay store down: retries fail closed, then recover", func(t *testing.T) {
		own := enginetest.Redis(t) // stopped here: not the one the other subtests share
		c := startCluster(t, p, 2, keys, own.URL())
		a, b := c.instances[0], c.instances[1]

		id := seedAll(t, c.instances)
		state := ask(t, a.url, id)
		own.Stop()
		wantRPCError(t, confirm(t, b.url, id, state), codeInternal, msgUnavailable)
		wantRPCError(t, confirm(t, c.proxy, id, state), codeInternal, msgUnavailable)
		if got := holders(t, c.instances, id); len(got) != 2 {
			t.Fatalf("with Redis down, a retry deleted user %s: now on %v", id, got)
		}
		// Only opening a state needs Redis: round 1 and calls without
		// state still answer.
		ask(t, c.proxy, id)
		result(t, call(t, c.proxy, "users.list_users", nil, nil))

		// Redis back on the same port, empty: it cannot tell which states
		// were used, so the retry refused during the outage, sent again,
		// is refused as stale (and starts Redis's new epoch); the client
		// asks again. No instance restarted.
		own.Start()
		wantRPCError(t, confirmWhileReconnecting(t, a.url, id, state), codeInvalidParams, "invalid requestState")
		if got := holders(t, c.instances, id); len(got) != 2 {
			t.Fatalf("a state sealed before Redis lost its memory deleted user %s: now on %v", id, got)
		}
		waitEpochPastSkew(t, own.URL())
		wantDeleted(t, confirm(t, a.url, id, ask(t, a.url, id)))
		if got := holders(t, c.instances, id); !slices.Equal(got, []string{b.name}) {
			t.Errorf("the confirmation asked again left user %s on %v, want deleted on %s", id, got, a.name)
		}
		// A fresh confirmation completes across instances, once.
		other := seedAll(t, c.instances)
		fresh := ask(t, a.url, other)
		wantDeleted(t, confirm(t, b.url, other, fresh))
		if got := holders(t, c.instances, other); !slices.Equal(got, []string{a.name}) {
			t.Errorf("after Redis returned, user %s is on %v, want deleted on %s", other, got, b.name)
		}
		wantRPCError(t, confirm(t, a.url, other, fresh), codeInvalidParams, "invalid requestState")
	})

	t.Run("SDK clients through the proxy", func(t *testing.T) {
		c := startCluster(t, p, 3, keys, redis.URL())

		t.Run("TypeScript, handshake era", func(t *testing.T) {
			// One session: initialize, listTools, then a delete whose
			// confirmation the instance asks as a server-to-client
			// elicitation; the answer is a separate POST that must reach
			// the instance holding the session.
			id := seedAll(t, c.instances)
			got := tsClient(t, c.proxy, "users.delete_user", `{"id":"`+id+`"}`, `[{"confirm":true}]`)
			if got.ProtocolVersion != "2025-11-25" || len(got.Tools) != 4 {
				t.Errorf("TypeScript client: version %s, tools %v", got.ProtocolVersion, got.Tools)
			}
			if len(got.Elicited) != 1 || got.Result.IsError {
				t.Errorf("TypeScript client: elicited %v, result %+v", got.Elicited, got.Result)
			}
			if h := holders(t, c.instances, id); len(h) != 2 {
				t.Errorf("after the TypeScript client's delete, user %s is on %v: want deleted on one instance", id, h)
			}
		})

		t.Run("Go, 2026-07-28", func(t *testing.T) {
			var elicited atomic.Int32
			cs := connect(t, c.proxy, "", &elicited)
			tools := listTools(t, cs)
			if len(tools) != 4 {
				t.Errorf("tools = %v", tools)
			}
			callTool(t, cs, "users.list_users", nil)
			// The SDK answers input_required itself: round 1 and the retry
			// are two stateless requests, balanced independently.
			id := seedAll(t, c.instances)
			callTool(t, cs, "users.delete_user", map[string]any{"id": id})
			if elicited.Load() != 1 {
				t.Errorf("the client was asked %d times, want once", elicited.Load())
			}
			if h := holders(t, c.instances, id); len(h) != 2 {
				t.Errorf("after the Go client's delete, user %s is on %v: want deleted on one instance", id, h)
			}
		})

		t.Run("Go, handshake era, sticky", func(t *testing.T) {
			var elicited atomic.Int32
			cs := connect(t, c.proxy, "2025-11-25", &elicited)
			if cs.ID() == "" {
				t.Fatal("a handshake-era session without Mcp-Session-Id")
			}
			// Six creates in one session. Balanced round-robin, they would
			// land two on each instance (and two thirds of the requests
			// would reach an instance that does not know the session).
			var made []string
			for range 6 {
				_, email := sessionCreate(t, cs)
				made = append(made, email)
			}
			home := owner(t, c.instances, made[0])
			for _, in := range c.instances {
				on := emailsOn(t, in.url)
				for _, email := range made {
					if on[email] != (in == home) {
						t.Errorf("%s on %s: %v; want all six on %s only", email, in.name, on[email], home.name)
					}
				}
			}
			seen := listed(t, callTool(t, cs, "users.list_users", map[string]any{"limit": 100}))
			for _, email := range made {
				if !seen[email] {
					t.Errorf("the session's list_users lacks %s", email)
				}
			}
			// A confirmation bridged to a real elicitation round trip.
			id, _ := sessionCreate(t, cs)
			callTool(t, cs, "users.delete_user", map[string]any{"id": id})
			if elicited.Load() != 1 || hasUser(t, home.url, id) {
				t.Errorf("delete in the session: elicited %d, user %s still on %s: %v", elicited.Load(), id, home.name, hasUser(t, home.url, id))
			}
		})
	})

	t.Run("an instance dies", func(t *testing.T) {
		c := startCluster(t, p, 3, keys, redis.URL())

		// Three handshake-era sessions: round-robin starts one on each
		// instance.
		type legacy struct {
			cs    *mcp.ClientSession
			email string
			home  *instance
		}
		var sessions []legacy
		for range 3 {
			var none atomic.Int32
			cs := connect(t, c.proxy, "2025-11-25", &none)
			_, email := sessionCreate(t, cs)
			sessions = append(sessions, legacy{cs: cs, email: email, home: owner(t, c.instances, email)})
		}
		homes := map[*instance]bool{}
		for _, s := range sessions {
			homes[s.home] = true
		}
		if len(homes) != 3 {
			t.Fatalf("three sessions landed on %d instances, want one each", len(homes))
		}
		victim := sessions[0].home
		var live []*instance
		for _, in := range c.instances {
			if in != victim {
				live = append(live, in)
			}
		}
		// A confirmation in flight: round 1 answered by the instance that
		// is about to die.
		id := seedAll(t, c.instances)
		state := ask(t, victim.url, id)

		victim.kill(t)

		// 2026-07-28 clients notice nothing, at once (a refused connection
		// is retried on another instance) and once health checks have
		// taken the instance out.
		for range 6 {
			result(t, call(t, c.proxy, "users.list_users", nil, nil))
		}
		c.waitStatus(t, victim, "DOWN")
		for _, in := range live {
			if got := c.status(t)[in.name]; got != "UP" {
				t.Errorf("HAProxy reports %s %q, want UP", in.name, got)
			}
		}
		for range 6 {
			result(t, call(t, c.proxy, "users.list_users", nil, nil))
		}
		// The confirmation completes on a live instance.
		wantDeleted(t, confirm(t, c.proxy, id, state))
		if h := holders(t, live, id); len(h) != 1 {
			t.Errorf("after the retry, user %s is on %v of the live instances, want one", id, h)
		}

		for _, s := range sessions {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.list_users", Arguments: map[string]any{"limit": 100}})
			cancel()
			if s.home != victim {
				// Sessions on live instances go on, with their data.
				if err != nil || res.IsError || !listed(t, res)[s.email] {
					t.Errorf("session on %s after %s died: %v %v", s.home.name, victim.name, err, res)
				}
				continue
			}
			// The dead instance's session is gone: the proxy sends its
			// requests to a live instance, which answers 404.
			if err == nil {
				t.Errorf("the session on the dead %s still answers: %v", victim.name, res)
			} else if !errors.Is(err, mcp.ErrSessionMissing) {
				t.Logf("call in the dead session: %v (not ErrSessionMissing)", err)
			}
			if code := rawLegacyStatus(t, c.proxy, s.cs.ID()); code != http.StatusNotFound {
				t.Errorf("a request in the dead session got HTTP %d, want 404", code)
			}
		}
		// The client initializes again, through the same URL.
		var none atomic.Int32
		cs := connect(t, c.proxy, "2025-11-25", &none)
		_, email := sessionCreate(t, cs)
		owner(t, live, email) // exactly one live instance holds it
		if !listed(t, callTool(t, cs, "users.list_users", map[string]any{"limit": 100}))[email] {
			t.Error("the new session does not see its own user")
		}
	})
}

// readKeys parses the key file as the instances do.
func readKeys(t *testing.T, file string) []requeststate.FileKey {
	t.Helper()
	keys, err := requeststate.ReadKeyFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func ids(keys []requeststate.FileKey) []string {
	var out []string
	for _, k := range keys {
		out = append(out, k.ID)
	}
	return out
}

func listTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names
}

// rawLegacyStatus sends a handshake-era tools/list in session id and
// returns the HTTP status.
func rawLegacyStatus(t *testing.T, url, id string) int {
	t.Helper()
	req := mcptest.Request(t, url, "tools/list", map[string]any{}, "")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Del("Mcp-Method")
	req.Header.Set("Mcp-Session-Id", id)
	resp, _, _ := mcptest.Do(t, req)
	return resp.StatusCode
}

// tsOutput is what conformance/ts-client.mjs prints.
type tsOutput struct {
	ProtocolVersion string   `json:"protocolVersion"`
	Tools           []string `json:"tools"`
	Elicited        []string `json:"elicited"`
	Result          struct {
		IsError bool `json:"isError"`
	} `json:"result"`
}

// tsClient runs the TypeScript SDK client against url.
func tsClient(t *testing.T, url string, args ...string) tsOutput {
	t.Helper()
	node := peers.Node(t)
	conformance := filepath.Join("..", "..", "conformance")
	peers.NPM(t, "@modelcontextprotocol/sdk")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join(conformance, "ts-client.mjs"), url}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v\n%s", err, stderr.String())
	}
	var got tsOutput
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("TypeScript client printed %q", out)
	}
	return got
}

// confirmWhileReconnecting sends confirm again while the instance answers
// that its replay store is unavailable (reconnecting to a restarted
// Redis), for at most ten seconds.
func confirmWhileReconnecting(t *testing.T, url, id, state string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		msg := confirm(t, url, id, state)
		if code, _ := rpcError(msg); code != codeInternal || time.Now().After(deadline) {
			return msg
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitEpochPastSkew waits until the replay store's epoch in the Redis at
// url is older than the default clock skew: states sealed from then on
// are not refused as possibly older than the epoch.
func waitEpochPastSkew(t *testing.T, url string) {
	t.Helper()
	store, release, err := redisreplay.Open(t.Context(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	epoch, err := store.Epoch(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(epoch.Add(clockSkew)))
}
