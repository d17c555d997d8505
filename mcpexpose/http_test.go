package mcpexpose_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskMcpNameMustBeTheTaskID sends tasks/get, tasks/update and
// tasks/cancel of a live task with an Mcp-Name header that does not name
// the task the body names (SEP-2663 routes tasks by that header): each is
// refused with 400 and -32020 before it reaches the task, and the task is
// still working afterwards. The same requests with the header right are
// answered.
func TestTaskMcpNameMustBeTheTaskID(t *testing.T) {
	w := newTaskWorld(t)
	url := w.instance(t, mcpexpose.TaskOptions{})
	id := startTask(t, url, "alice", "work", map[string]any{"label": "m"})
	send := func(method, header string, set bool) (*http.Response, map[string]any) {
		t.Helper()
		params := map[string]any{"taskId": id, "_meta": mcptest.Meta(map[string]any{"extensions": map[string]any{mcpexpose.TasksExtension: map[string]any{}}})}
		if method == "tasks/update" {
			params["inputResponses"] = map[string]any{}
		}
		req := mcptest.Request(t, url, method, params, "alice")
		if set {
			req.Header.Set("Mcp-Name", header)
		}
		resp, _, msg := mcptest.Do(t, req)
		return resp, msg
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		for _, tc := range []struct {
			name   string
			header string
			set    bool
		}{
			{"absent", "", false},
			{"empty", "", true},
			{"another id", "no-such-task-id-at-all-xx", true},
			{"a prefix", id[:len(id)-1], true},
			{"other case", strings.ToUpper(id), true},
		} {
			t.Run(method+"/"+tc.name, func(t *testing.T) {
				if tc.name == "other case" && strings.ToUpper(id) == id {
					t.Fatalf("task id %q has no letters to re-case", id)
				}
				resp, msg := send(method, tc.header, tc.set)
				e, _ := msg["error"].(map[string]any)
				if resp.StatusCode != http.StatusBadRequest || e == nil || e["code"] != float64(mcp.CodeHeaderMismatch) {
					t.Fatalf("HTTP %d, %v: want 400 with JSON-RPC %d", resp.StatusCode, msg, mcp.CodeHeaderMismatch)
				}
			})
		}
	}
	if res, e := getTask(t, url, "alice", id); e != nil || res["status"] != "working" {
		t.Fatalf("after the refused requests the task is %v %v, want working", res, e)
	}
	if resp, msg := send("tasks/get", id, true); resp.StatusCode != http.StatusOK || msg["result"] == nil {
		t.Fatalf("tasks/get with Mcp-Name the task id: HTTP %d %v", resp.StatusCode, msg)
	}
	if resp, msg := send("tasks/cancel", id, true); resp.StatusCode != http.StatusOK || msg["result"] == nil {
		t.Fatalf("tasks/cancel with Mcp-Name the task id: HTTP %d %v", resp.StatusCode, msg)
	}
	waitStatus(t, url, "alice", id, "cancelled")
}
