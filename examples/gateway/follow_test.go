package main

import (
	"context"
	"encoding/json"
	"expvar"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	userSchema = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`
	listSchema = `{"type":"object","properties":{"limit":{"type":"integer"}},"additionalProperties":false}`
	// openSchema takes any argument at all: wider than the profile allows.
	openSchema = `{"type":"object","properties":{"id":{"type":"string"}}}`
)

// upstream is an SDK server on loopback HTTP standing in for the users
// example, whose tools the test changes.
type upstream struct {
	server *mcp.Server
	calls  atomic.Int64
}

func (u *upstream) handle(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.calls.Add(1)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
}

func (u *upstream) add(name, description, schema string) {
	u.server.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: json.RawMessage(schema)}, u.handle)
}

// TestGatewayFollowsTheUpstream: the gateway follows upstream changes of
// its bound tools while a handshake-era (2025-11-25) client stays connected
// on one session throughout: a bound tool added appears; a bound tool
// changed is re-imported, and one whose schema turns wider than the profile
// allows is hidden rather than widened; a bound tool removed is hidden
// alone, the other keeps working, and it comes back when restored; an
// unbound tool added changes nothing (no swap).
func TestGatewayFollowsTheUpstream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	up := &upstream{server: mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)}
	up.add("users.list_users", "List.", listSchema) // get_user is bound but not there yet
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up.server }, nil))
	defer upSrv.Close()

	sess, err := mcpimport.Connect(ctx, "users", &mcp.StreamableClientTransport{Endpoint: upSrv.URL, MaxRetries: -1}, &mcpimport.ConnectOptions{
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	logs := &mcptest.Buffer{}
	swaps := new(expvar.Int)
	// At debug level: a re-import that leaves the catalog as it was says
	// so there, and the test waits for that line.
	gw := &gateway{session: sess, logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), principal: policy.NewPrincipal("dev", []string{"directory:read"}),
		swaps: swaps, backoff: backoff{base: 10 * time.Millisecond, max: 200 * time.Millisecond}}
	if err := gw.load(ctx); err != nil {
		t.Fatal(err)
	}
	followed := make(chan struct{})
	go func() { defer close(followed); gw.follow(ctx) }()
	defer func() { cancel(); <-followed }() // follow ends on shutdown
	gwSrv := httptest.NewServer(gw)
	defer gwSrv.Close()

	var notified atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { notified.Add(1) },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gwSrv.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("negotiated %s", v)
	}

	// list lists the gateway's tools on the one session; an error means the
	// session died.
	list := func() []string {
		t.Helper()
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatalf("tools/list on the session opened at the start: %v (the session did not survive); gateway log:\n%s", err, logs)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		return names
	}
	waitList := func(step string, want ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for got := list(); !slices.Equal(got, want); got = list() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: tools %v, want %v", step, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	works := func(step, name, args string) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil || res.IsError {
			t.Fatalf("%s: %s: %v %+v", step, name, err, res)
		}
	}
	// hidden: the tool is out of the list, and a call of it answers
	// mcp_catalog_stale without reaching the upstream.
	hidden := func(step, name, args string) {
		t.Helper()
		before := up.calls.Load()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		if err != nil || !res.IsError {
			t.Fatalf("%s: a call of hidden %s = %+v, %v; want a tool error", step, name, res, err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, `"reason":"mcp_catalog_stale"`) {
			t.Fatalf("%s: a call of hidden %s answered %s, want reason mcp_catalog_stale", step, name, text)
		}
		if up.calls.Load() != before {
			t.Fatalf("%s: a call of hidden %s reached the upstream", step, name)
		}
	}
	waitSwaps := func(step string, want int64) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for swaps.Value() < want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d swaps, want %d", step, swaps.Value(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	if got := list(); !slices.Equal(got, []string{"directory.list_users"}) {
		t.Fatalf("at start: %v, want only list_users (get_user is not upstream yet)", got)
	}
	works("start", "directory.list_users", `{}`)

	// ADD: the bound get_user appears.
	up.add("users.get_user", "Get.", userSchema)
	waitList("add", "directory.get_user", "directory.list_users")
	works("add", "directory.get_user", `{"id":"u1"}`)
	waitSwaps("add", 1)
	if !strings.Contains(logs.String(), "added=[get_user]") {
		t.Errorf("no log line names the added tool:\n%s", logs)
	}

	// CHANGE a description: re-imported (the digest changed), still served.
	up.add("users.get_user", "Get one user.", userSchema)
	waitSwaps("change description", 2)
	if !strings.Contains(logs.String(), "changed=[get_user]") {
		t.Errorf("no log line names the changed tool:\n%s", logs)
	}
	waitList("change description", "directory.get_user", "directory.list_users")
	works("change description", "directory.get_user", `{"id":"u1"}`)

	// CHANGE the schema to an open object: refused, get_user goes stale
	// (hidden) instead of accepting any argument; list_users keeps working.
	up.add("users.get_user", "Get one user.", openSchema)
	waitList("widen schema", "directory.list_users")
	hidden("widen schema", "directory.get_user", `{"id":"u1","anything":true}`)
	works("widen schema", "directory.list_users", `{}`)
	waitSwaps("widen schema", 3) // the list changes before the swap is logged
	if !strings.Contains(logs.String(), "removed=[get_user]") || !strings.Contains(logs.String(), "get_user (mcp_schema_unsupported)") {
		t.Errorf("no log line says get_user left for its schema:\n%s", logs)
	}
	up.add("users.get_user", "Get one user.", userSchema)
	waitList("schema restored", "directory.get_user", "directory.list_users")

	// REMOVE list_users: it alone is hidden, get_user keeps working; then
	// RESTORE it: it comes back.
	up.server.RemoveTools("users.list_users")
	waitList("remove", "directory.get_user")
	hidden("remove", "directory.list_users", `{}`)
	works("remove", "directory.get_user", `{"id":"u1"}`)
	up.add("users.list_users", "List.", listSchema)
	waitList("restore", "directory.get_user", "directory.list_users")
	works("restore", "directory.list_users", `{}`)
	// The list changes before the swap is counted: count from the
	// restore's swap (add, describe, widen, schema restored, remove,
	// restore), not from a moment before it.
	waitSwaps("restore", 6)

	// An unbound tool upstream: never exposed, and no swap at all. The
	// re-import it causes says so in the log: wait for that line, then
	// count.
	n := swaps.Value()
	renewals := func() int { return strings.Count(logs.String(), "what the gateway imports did not") }
	renewed := renewals()
	up.add("users.delete_user", "Delete.", userSchema)
	deadline := time.Now().Add(10 * time.Second)
	for renewals() == renewed {
		if time.Now().After(deadline) {
			t.Fatalf("unbound: the re-import after an unbound tool was added never finished:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if swaps.Value() != n {
		t.Errorf("an unbound upstream tool made the gateway swap (%d swaps, want %d)", swaps.Value(), n)
	}
	waitList("unbound", "directory.get_user", "directory.list_users")
	works("unbound", "directory.get_user", `{"id":"u1"}`)
	if notified.Load() == 0 {
		t.Error("the client was never told that its tool list changed")
	}
}

func TestBackoff(t *testing.T) {
	b := backoff{base: 100 * time.Millisecond, max: time.Second}
	for n, want := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		want *= time.Millisecond
		if n == 5 {
			n = 70 // no overflow for large attempt counts
		}
		for range 20 {
			if d := b.delay(n); d < want/2 || d > want {
				t.Fatalf("delay(%d) = %v, want within [%v, %v]", n, d, want/2, want)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := b.retry(ctx, slog.New(slog.DiscardHandler), "x", func() error { calls++; return context.DeadlineExceeded })
	if err == nil || calls != 1 {
		t.Errorf("retry after shutdown: %v after %d calls, want an error after 1", err, calls)
	}
}
