package mcpimport_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRemoteTaskOfAnAgnaraServer imports a long-running tool that an
// agnara server runs as a task (mcpexpose, ToolOptions.Task) over
// loopback HTTP at 2026-07-28, and calls it through the import as a
// gateway would: the call follows the task to its result.
func TestRemoteTaskOfAnAgnaraServer(t *testing.T) {
	type in struct {
		Month string `json:"month"`
	}
	type out struct {
		Report string `json:"report"`
	}
	app := agnara.New("reports", nil)
	build := app.Capability(func(ctx context.Context, i in) (out, error) {
		select {
		case <-time.After(300 * time.Millisecond): // long enough to need polls
			return out{"report for " + i.Month}, nil
		case <-ctx.Done():
			return out{}, ctx.Err()
		}
	}, &agnara.CapabilityOptions{Name: "build_report", Description: "Builds a monthly report."})
	exp := mcpexpose.New(app)
	exp.Tool(build, &mcpexpose.ToolOptions{Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev := policy.NewPrincipal("gateway", nil)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := mcpimport.Connect(ctx, "reports", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, &mcpimport.ConnectOptions{
		Tasks: true, SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{"reports.build_report": {
		Name: "build_report", Title: "Build a report", NoScopeValidator: true, Profile: mcpimport.ProfileStandard,
		Task: &mcpimport.TaskOptions{Timeout: 20 * time.Second},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gw := agnara.New("gw", nil)
	caps := cat.Register(gw)
	gexp := mcpexpose.New(gw)
	gexp.Tool(caps[0], nil)
	gsnap, err := gexp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	gh, err := mcpexpose.NewHandler(gsnap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev}})
	if err != nil {
		t.Fatal(err)
	}
	gsrv := httptest.NewServer(gh)
	defer gsrv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gsrv.URL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gw.build_report", Arguments: map[string]any{"month": "2026-11"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if res.IsError || !strings.Contains(string(b), `report for 2026-11`) {
		t.Errorf("through the gateway: %s", b)
	}
}
