package mcpimport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
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

// TestRemoteTaskThatAsks imports two tools of an agnara server that run as
// tasks and ask for a confirmation before they act: one declares it (the
// server asks before the task starts, an input-required answer to
// tools/call), the other asks while its task runs (status input_required,
// answered with tasks/update). The question reaches the gateway's caller (a
// Go SDK client at 2026-07-28, whose elicitation handler answers), the
// answer goes upstream, and the tool then acts, once; a caller who declines
// gets the remote's refusal and nothing is done.
func TestRemoteTaskThatAsks(t *testing.T) {
	type in struct {
		Name string `json:"name"`
	}
	type out struct {
		Done string `json:"done"`
	}
	var mu sync.Mutex
	var acted []string
	act := func(name string) (out, error) {
		mu.Lock()
		acted = append(acted, name)
		mu.Unlock()
		return out{"purged " + name}, nil
	}
	app := agnara.New("ops", nil)
	purge := app.Capability(func(ctx context.Context, i in) (out, error) {
		return act(i.Name)
	}, &agnara.CapabilityOptions{Name: "purge", Description: "Purges a record.", Confirm: "Purge this record for good?"})
	wipe := app.Capability(func(ec *execution.Context, i in) (out, error) {
		ok, err := ec.Confirm("wipe", "Purge this record for good?")
		if err != nil || !ok {
			return out{}, err
		}
		return act(i.Name)
	}, &agnara.CapabilityOptions{Name: "wipe", Description: "Wipes a record."})
	exp := mcpexpose.New(app)
	exp.Tool(purge, &mcpexpose.ToolOptions{Task: mcpexpose.TaskRequired})
	exp.Tool(wipe, &mcpexpose.ToolOptions{Task: mcpexpose.TaskRequired})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev := policy.NewPrincipal("gateway", nil)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev}})
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"tasks/update"`)) {
			mu.Lock()
			updates++
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := mcpimport.Connect(ctx, "ops", &mcp.StreamableClientTransport{Endpoint: srv.URL, MaxRetries: -1}, &mcpimport.ConnectOptions{
		Tasks: true, SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	bind := func(name string) mcpimport.Binding {
		return mcpimport.Binding{Name: name, Title: name, NoScopeValidator: true, Profile: mcpimport.ProfileStandard,
			Task: &mcpimport.TaskOptions{Timeout: 20 * time.Second}}
	}
	cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{"ops.purge": bind("purge"), "ops.wipe": bind("wipe")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	gw := agnara.New("gw", nil)
	gexp := mcpexpose.New(gw)
	for _, c := range cat.Register(gw) {
		gexp.Tool(c, nil)
	}
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
	for _, tc := range []struct {
		tool, name, action string
		wantActed          []string
		want               string
		wantUpdates        int
	}{
		{"purge", "r1", "accept", []string{"r1"}, `purged r1`, 0},
		{"purge", "r2", "decline", []string{"r1"}, `"isError":true`, 0},
		{"wipe", "r3", "accept", []string{"r1", "r3"}, `purged r3`, 1},
		{"wipe", "r4", "decline", []string{"r1", "r3"}, `"isError":true`, 2},
	} {
		var asked []string
		client := mcp.NewClient(&mcp.Implementation{Name: "caller", Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, r.Params.Message)
				if tc.action != "accept" {
					return &mcp.ElicitResult{Action: tc.action}, nil
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			},
		})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: gsrv.URL, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gw." + tc.tool, Arguments: map[string]any{"name": tc.name}})
		cs.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), tc.want) {
			t.Errorf("%s %s (%s): %s", tc.tool, tc.name, tc.action, b)
		}
		if len(asked) != 1 || asked[0] != "Purge this record for good?" {
			t.Errorf("%s %s: asked %q, want the remote's question once", tc.tool, tc.name, asked)
		}
		mu.Lock()
		if !slices.Equal(acted, tc.wantActed) || updates != tc.wantUpdates {
			t.Errorf("after %s %s: acted on %q, %d tasks/update; want %q, %d", tc.tool, tc.name, acted, updates, tc.wantActed, tc.wantUpdates)
		}
		mu.Unlock()
	}
}
