package mcpexpose_test

import (
	"testing"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestProjectFailureReason(t *testing.T) {
	tests := []struct {
		name string
		f    *execution.Failure
		want string
	}{
		{"no reason", execution.Fail(execution.Conflict, "busy", nil), `{"code":"conflict","message":"busy"}`},
		{"reason", execution.Fail(execution.Timeout, "late", nil).WithReason("mcp_timeout"), `{"code":"timeout","message":"late","reason":"mcp_timeout"}`},
		{"reason and details", execution.Fail(execution.Conflict, "busy", map[string]any{"id": "a"}).WithReason("approval_in_progress"),
			`{"code":"conflict","details":{"id":"a"},"message":"busy","reason":"approval_in_progress"}`},
		{"reason with details that do not encode", execution.Fail(execution.Conflict, "busy", map[string]any{"c": make(chan int)}).WithReason("x_y"),
			`{"code":"conflict","message":"busy","reason":"x_y"}`},
		{"internal failure says nothing more", &execution.Failure{Code: execution.InternalFailure, Reason: "db_down", Message: "secret"}, `{"code":"internal_failure","message":"internal failure"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := mcpexpose.ProjectResult(tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; !res.IsError || got != tt.want {
				t.Errorf("projection = %s, want %s", got, tt.want)
			}
		})
	}
}
