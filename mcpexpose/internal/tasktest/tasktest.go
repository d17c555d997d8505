// Package tasktest holds the task worlds, the raw task requests and the
// task scenarios that mcpexpose's tests run on the in-memory task store
// and redistasks' tests run on Redis. Sharing them here, rather than in
// mcpexpose's own test files, keeps Redis out of mcpexpose's test
// imports: a module that imports mcpexpose carries in its go.sum what
// mcpexpose's tests import (STYLE.md, ADR 71).
package tasktest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// World is an application with task tools: work blocks until released
// or cancelled and holds a per-invocation dependency whose cleanup is
// counted; ask asks a name; confirmed needs a confirmation.
type World struct {
	Snap     *mcpexpose.Snapshot
	Release  chan struct{}
	Leases   atomic.Int32 // a running handler's dependency, made
	Cleanups atomic.Int32 // and cleaned up
}

// WorkInput is the work tool's input.
type WorkInput struct {
	Label string `json:"label"`
}

// Lease is the work tool's per-invocation dependency.
type Lease struct{}

// NameAnswer is the answer to the ask tool's question.
type NameAnswer struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

var nameQuestion = execution.NewForm[NameAnswer]("Your name?")

// NewWorld compiles a World.
func NewWorld(t *testing.T) *World {
	t.Helper()
	w := &World{Release: make(chan struct{})}
	deps := di.NewRegistry()
	di.ProvidePerInvocation(deps, func() (*Lease, func()) { w.Leases.Add(1); return &Lease{}, func() { w.Cleanups.Add(1) } })
	app := agnara.New("jobs", &agnara.Options{Dependencies: deps})
	work := app.Capability(func(ctx context.Context, in WorkInput, _ *Lease) (string, error) {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-w.Release:
			return "done " + in.Label, nil
		}
	}, &agnara.CapabilityOptions{Name: "work", Description: "Works until released."})
	ask := app.Capability(func(ec *execution.Context) (string, error) {
		v, err := execution.Ask(ec, "name", nameQuestion)
		if err != nil {
			return "", err
		}
		return "hi " + v.Name, nil
	}, &agnara.CapabilityOptions{Name: "ask", Description: "Asks a name.", Forms: []agnara.Form{nameQuestion}})
	confirmed := app.Capability(func() (string, error) { return "ok", nil },
		&agnara.CapabilityOptions{Name: "confirmed", Description: "Needs a yes.", Confirm: "Sure?"})
	exp := mcpexpose.New(app)
	exp.Tool(work, &mcpexpose.ToolOptions{Name: "work", Task: mcpexpose.TaskOptional})
	exp.Tool(ask, &mcpexpose.ToolOptions{Name: "ask", Task: mcpexpose.TaskRequired})
	exp.Tool(confirmed, &mcpexpose.ToolOptions{Name: "confirmed", Task: mcpexpose.TaskOptional})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	w.Snap = snap
	return w
}

// People verifies the tokens "alice" and "bob", each its own principal.
func People(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	switch token {
	case "alice", "bob":
		return &auth.TokenInfo{UserID: token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	return nil, auth.ErrInvalidToken
}

// Instance serves w with the task options on a loopback server, and
// returns its URL.
func (w *World) Instance(t *testing.T, o mcpexpose.TaskOptions) string {
	t.Helper()
	h, err := mcpexpose.NewHandler(w.Snap, &mcpexpose.HandlerOptions{Tokens: People, Server: &mcpexpose.ServerOptions{Tasks: &o}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// Running waits until the "work" handler of the latest task has its
// dependency, so that ending the task then has a handler to cancel and a
// cleanup to run.
func (w *World) Running(t *testing.T) {
	t.Helper()
	n := w.Cleanups.Load() + 1
	WaitUntil(t, "the handler to run", func() bool { return w.Leases.Load() >= n })
}

// RPC sends one 2026-07-28 request as token, declaring the tasks
// extension when ext, and returns its result or its error.
func RPC(t *testing.T, url, token string, ext bool, method string, params map[string]any) (result, rpcErr map[string]any) {
	t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{mcpversion.TasksExtension: map[string]any{}}
	}
	params["_meta"] = mcptest.Meta(caps)
	req := mcptest.Request(t, url, method, params, token)
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	_, body, msg := mcptest.Do(t, req)
	if msg == nil {
		t.Fatalf("%s: no JSON-RPC response in %s", method, body)
	}
	r, _ := msg["result"].(map[string]any)
	e, _ := msg["error"].(map[string]any)
	return r, e
}

// Call is RPC of tools/call of tool with args.
func Call(t *testing.T, url, token string, ext bool, tool string, args map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	return RPC(t, url, token, ext, "tools/call", map[string]any{"name": tool, "arguments": args})
}

// StartTask calls tool as a task and returns the task's id.
func StartTask(t *testing.T, url, token, tool string, args map[string]any) string {
	t.Helper()
	res, e := Call(t, url, token, true, tool, args)
	if e != nil || res["resultType"] != "task" {
		t.Fatalf("%s: want a task, got %v %v", tool, res, e)
	}
	id, _ := res["taskId"].(string)
	if len(id) < 24 { // 144 random bits, base64url
		t.Fatalf("task id %q is too short to be unguessable", id)
	}
	return id
}

// GetTask is RPC of tasks/get of task id.
func GetTask(t *testing.T, url, token, id string) (map[string]any, map[string]any) {
	t.Helper()
	return RPC(t, url, token, true, "tasks/get", map[string]any{"taskId": id})
}

// WaitStatus polls tasks/get until the task has status, within a deadline.
func WaitStatus(t *testing.T, url, token, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, e := GetTask(t, url, token, id)
		if e != nil {
			t.Fatalf("tasks/get: %v", e)
		}
		if res["status"] == status {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: status %v, want %s", id, res["status"], status)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitUntil polls cond until it holds, within a deadline.
func WaitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
