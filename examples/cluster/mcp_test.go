package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// call posts one raw 2026-07-28 tools/call, from a client that declares
// elicitation, and returns the JSON-RPC response.
func call(t *testing.T, url, tool string, args map[string]any, extra map[string]any) map[string]any {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args, "_meta": mcptest.Meta(map[string]any{"elicitation": map[string]any{}})}
	for k, v := range extra {
		params[k] = v
	}
	resp, body, msg := mcptest.Do(t, mcptest.Request(t, url, "tools/call", params, ""))
	if msg == nil {
		t.Fatalf("%s %s: HTTP %d, not a JSON-RPC message: %.300q", url, tool, resp.StatusCode, body)
	}
	return msg
}

// result returns the result of a response, failing the test on a JSON-RPC
// error or a tool error.
func result(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	res, _ := msg["result"].(map[string]any)
	if res == nil || res["isError"] == true {
		t.Fatalf("want a successful result, got %v", msg)
	}
	return res
}

// rpcError returns the code and message of a JSON-RPC error response.
func rpcError(msg map[string]any) (int, string) {
	e, _ := msg["error"].(map[string]any)
	if e == nil {
		return 0, ""
	}
	code, _ := e["code"].(float64)
	message, _ := e["message"].(string)
	return int(code), message
}

var emails atomic.Int64

// createUser creates a user on the instance at url and returns its id and
// email (unique in the test).
func createUser(t *testing.T, url string) (id, email string) {
	t.Helper()
	email = fmt.Sprintf("user%d@example.com", emails.Add(1))
	res := result(t, call(t, url, "users.create_user", map[string]any{"name": "Ada", "email": email}, nil))
	var out struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	b, _ := json.Marshal(res["structuredContent"])
	if json.Unmarshal(b, &out) != nil || out.Result.ID == "" {
		t.Fatalf("create_user result %v has no id", res)
	}
	return out.Result.ID, email
}

// hasUser reports whether the instance at url has the user id.
func hasUser(t *testing.T, url, id string) bool {
	t.Helper()
	res, _ := call(t, url, "users.get_user", map[string]any{"id": id}, nil)["result"].(map[string]any)
	if res == nil {
		t.Fatalf("get_user %s on %s: no result", id, url)
	}
	return res["isError"] != true
}

// holders returns the names of the instances that have the user id.
func holders(t *testing.T, ins []*instance, id string) []string {
	t.Helper()
	var out []string
	for _, in := range ins {
		if hasUser(t, in.url, id) {
			out = append(out, in.name)
		}
	}
	return out
}

// seedAll creates a user with the same id on every instance (each has its
// own in-memory store, ids counting from 1) and returns the id. A call
// that reaches any of them can then delete it, and the test can tell where
// it was deleted.
func seedAll(t *testing.T, ins []*instance) string {
	t.Helper()
	ids := make([]int, len(ins))
	top := 0
	for i, in := range ins {
		id, _ := createUser(t, in.url)
		ids[i], _ = strconv.Atoi(id)
		top = max(top, ids[i])
	}
	for i, in := range ins {
		for ids[i] < top {
			id, _ := createUser(t, in.url)
			ids[i], _ = strconv.Atoi(id)
		}
	}
	return strconv.Itoa(top)
}

// ask sends round 1 of deleting user id: the answer must be input_required,
// asking for confirmation, with a requestState, which it returns.
func ask(t *testing.T, url, id string) string {
	t.Helper()
	msg := call(t, url, "users.delete_user", map[string]any{"id": id}, nil)
	res, _ := msg["result"].(map[string]any)
	state, _ := res["requestState"].(string)
	reqs, _ := res["inputRequests"].(map[string]any)
	if res["resultType"] != "input_required" || state == "" || reqs[execution.ConfirmKey] == nil {
		t.Fatalf("delete_user round 1 on %s = %v, want input_required asking %s", url, msg, execution.ConfirmKey)
	}
	return state
}

// confirm sends the retry of deleting user id: the confirmation, and the
// state of round 1.
func confirm(t *testing.T, url, id, state string) map[string]any {
	t.Helper()
	yes := map[string]any{execution.ConfirmKey: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	return call(t, url, "users.delete_user", map[string]any{"id": id}, map[string]any{"requestState": state, "inputResponses": yes})
}

// wantDeleted checks that a retry completed the delete.
func wantDeleted(t *testing.T, msg map[string]any) {
	t.Helper()
	res := result(t, msg)
	if rt := res["resultType"]; rt != nil && rt != "complete" {
		t.Fatalf("retry = %v, want a complete result", msg)
	}
}

// wantRPCError checks that msg is the JSON-RPC error code (and message,
// when not empty).
func wantRPCError(t *testing.T, msg map[string]any, code int, message string) {
	t.Helper()
	got, gotMsg := rpcError(msg)
	if got != code || (message != "" && gotMsg != message) {
		t.Errorf("response = %v, want JSON-RPC error %d %q", msg, code, message)
	}
}

// connect opens a Go SDK client session to url. version "" negotiates
// (2026-07-28 through server/discover); "2025-11-25" pins the handshake
// era. The client confirms every elicitation and counts them. The session
// is closed when the test ends, before the servers stop.
func connect(t *testing.T, url, version string, elicited *atomic.Int32) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			elicited.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-test", Version: "1"}, opts).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: 1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect %s (version %q): %v", url, version, err)
	}
	t.Cleanup(func() {
		cs.Close()
		hc.CloseIdleConnections()
	})
	want := version
	if want == "" {
		want = "2026-07-28"
	}
	if got := cs.InitializeResult().ProtocolVersion; got != want {
		t.Fatalf("session speaks %s, want %s", got, want)
	}
	return cs
}

// callTool calls a tool in a Go SDK session and fails the test unless it
// succeeds.
func callTool(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %v", tool, res.Content)
	}
	return res
}

// sessionCreate creates a user in a Go SDK session and returns its id and
// email.
func sessionCreate(t *testing.T, cs *mcp.ClientSession) (id, email string) {
	t.Helper()
	email = fmt.Sprintf("user%d@example.com", emails.Add(1))
	res := callTool(t, cs, "users.create_user", map[string]any{"name": "Grace", "email": email})
	var out struct {
		Result struct {
			ID string `json:"id"`
		} `json:"result"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if json.Unmarshal(b, &out) != nil || out.Result.ID == "" {
		t.Fatalf("create_user result %s has no id", b)
	}
	return out.Result.ID, email
}

// listed returns the emails list_users shows (at most 100).
func listed(t *testing.T, res *mcp.CallToolResult) map[string]bool {
	t.Helper()
	var out struct {
		Result []struct {
			Email string `json:"email"`
		} `json:"result"`
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("list_users result %s: %v", b, err)
	}
	m := map[string]bool{}
	for _, u := range out.Result {
		m[u.Email] = true
	}
	return m
}

// emailsOn returns the emails of the users of the instance at url, asked
// directly in 2026-07-28.
func emailsOn(t *testing.T, url string) map[string]bool {
	t.Helper()
	res := result(t, call(t, url, "users.list_users", map[string]any{"limit": 100}, nil))
	b, _ := json.Marshal(res["structuredContent"])
	return listed(t, &mcp.CallToolResult{StructuredContent: json.RawMessage(b)})
}

// owner returns the instance whose store holds email: the instance that
// served the call that created it.
func owner(t *testing.T, ins []*instance, email string) *instance {
	t.Helper()
	var found []*instance
	for _, in := range ins {
		if emailsOn(t, in.url)[email] {
			found = append(found, in)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s is on %d instances, want exactly one", email, len(found))
	}
	return found[0]
}
