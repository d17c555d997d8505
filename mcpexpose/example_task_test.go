package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

type ReportInput struct {
	Month string `json:"month" jsonschema:"description=The month (YYYY-MM)"`
}

// BuildReport is an ordinary capability function; that it runs as a task
// is the exposure's business.
func BuildReport(ctx context.Context, in ReportInput) (string, error) {
	select {
	case <-time.After(10 * time.Millisecond): // the long work
		return "report for " + in.Month, nil
	case <-ctx.Done():
		return "", ctx.Err() // tasks/cancel
	}
}

// A tool declared with ToolOptions.Task answers a client that declares the
// tasks extension with a task handle; the client then polls tasks/get.
func ExampleToolOptions_task() {
	app := agnara.New("reports", nil)
	report := app.Capability(BuildReport, &agnara.CapabilityOptions{Description: "Builds a monthly report."})
	exp := mcpexpose.New(app)
	exp.Tool(report, &mcpexpose.ToolOptions{Name: "build_report", Task: mcpexpose.TaskOptional})
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	created := post(srv.URL, "tools/call", "build_report", map[string]any{"name": "build_report", "arguments": map[string]any{"month": "2026-11"}})
	fmt.Println(created["resultType"], created["status"])
	id := created["taskId"].(string)
	for {
		task := post(srv.URL, "tasks/get", id, map[string]any{"taskId": id})
		if task["status"] == "completed" {
			result := task["result"].(map[string]any)
			fmt.Println(task["status"], result["structuredContent"])
			return
		}
		time.Sleep(time.Duration(task["pollIntervalMs"].(float64)) * time.Millisecond / 100)
	}
	// Output:
	// task working
	// completed map[result:report for 2026-11]
}

// post sends a 2026-07-28 request from a client declaring the tasks
// extension and returns its result.
func post(url, method, name string, params map[string]any) map[string]any {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "example", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// One event: its data line is the response.
		for line := range strings.Lines(string(data)) {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var msg struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		log.Fatal(err)
	}
	return msg.Result
}

// Tasks are capped per server and per principal (TaskOptions.MaxTasks,
// MaxTasksPerPrincipal): a call that would start one more is answered with
// the canonical "unavailable" failure, reason "task_limit", before
// anything runs, and its caller retries once one of its tasks has ended.
func ExampleTaskOptions_maxTasks() {
	app := agnara.New("reports", nil)
	hold := make(chan struct{})
	report := app.Capability(func(ctx context.Context, in ReportInput) (string, error) {
		select {
		case <-hold:
			return "report for " + in.Month, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &agnara.CapabilityOptions{Name: "build_report", Description: "Builds a monthly report."})
	exp := mcpexpose.New(app)
	exp.Tool(report, &mcpexpose.ToolOptions{Name: "build_report", Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{
		Tasks: &mcpexpose.TaskOptions{MaxTasksPerPrincipal: 1},
	}})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(hold)

	args := map[string]any{"month": "2026-11"}
	first := post(srv.URL, "tools/call", "build_report", map[string]any{"name": "build_report", "arguments": args})
	fmt.Println(first["resultType"], first["status"])
	second := post(srv.URL, "tools/call", "build_report", map[string]any{"name": "build_report", "arguments": args})
	var failure struct {
		Code, Reason string
		Details      map[string]any
	}
	text := second["content"].([]any)[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &failure); err != nil {
		log.Fatal(err)
	}
	fmt.Println(second["isError"], failure.Code, failure.Reason, failure.Details["limit"])
	// Output:
	// task working
	// true unavailable task_limit MaxTasksPerPrincipal
}
