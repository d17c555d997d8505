package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHTTPUpstreamWithTheGatewaysOwnCredentials: an HTTP upstream that
// requires a bearer token gets the gateway's own, from the client
// credentials grant with the secret from the environment and the upstream
// URL as the resource (RFC 8707). The token endpoint is a minimal one on
// loopback: it stands for the upstream's authorization server.
func TestHTTPUpstreamWithTheGatewaysOwnCredentials(t *testing.T) {
	t.Setenv("GATEWAY_TEST_CLIENT_SECRET", "s3cret")
	var mu sync.Mutex
	var grants []string
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		id, secret, _ := r.BasicAuth()
		mu.Lock()
		grants = append(grants, r.Form.Get("grant_type")+" "+id+":"+secret+" resource="+r.Form.Get("resource")+" scope="+r.Form.Get("scope"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "gateway-token", "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(tokens.Close) // after the gateway's own cleanup, which closes its streams

	server := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami", Description: "who called"}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{req.Extra.Header.Get("Authorization")}, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer gateway-token" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(upstream.Close)

	_, url, _ := started(t, gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "protected",
		HTTP: &gateway.HTTPUpstream{URL: upstream.URL, OAuth: &gateway.ClientCredentials{
			TokenURL: tokens.URL, ClientID: "agnara-gateway", ClientSecretEnv: "GATEWAY_TEST_CLIENT_SECRET", Scopes: []string{"tools:read"},
		}},
		Tools: []gateway.Tool{readTool("whoami")},
	}}}, nil)
	text, isErr := call(t, connect(t, url, ""), "gateway.whoami", map[string]any{})
	if isErr || !strings.Contains(text, "Bearer gateway-token") {
		t.Fatalf("whoami through the gateway: %s", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(grants) == 0 || grants[0] != "client_credentials agnara-gateway:s3cret resource="+upstream.URL+" scope=tools:read" {
		t.Errorf("token requests: %q", grants)
	}
}

// TestHTTPUpstreamReconnects: when the connection to an HTTP upstream is
// lost, the gateway makes a new session and imports again.
func TestHTTPUpstreamReconnects(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ping", Description: "answers"}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, textOut, error) {
		return nil, textOut{"pong"}, nil
	})
	upstream := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(upstream.Close)
	g, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "flaky", HTTP: &gateway.HTTPUpstream{URL: upstream.URL, Protocol: "2025-11-25"},
		Restart: gateway.Restart{Min: gateway.Duration(20 * time.Millisecond), Max: gateway.Duration(100 * time.Millisecond)},
		Tools:   []gateway.Tool{readTool("ping")},
	}}}, nil)
	upstream.CloseClientConnections()
	eventually(t, "a new session", func() bool {
		s := state(g, "flaky")
		return s.State == gateway.StateUp && s.Connections >= 2
	})
	if text, isErr := call(t, connect(t, url, ""), "gateway.ping", map[string]any{}); isErr || !strings.Contains(text, "pong") {
		t.Errorf("after reconnecting: %s\n%s", text, log)
	}
}

// TestHTTPUpstreamTask: a read bound with task: true, on an agnara
// upstream that runs it as a task, is followed to its result.
func TestHTTPUpstreamTask(t *testing.T) {
	type in struct {
		Month string `json:"month"`
	}
	app := agnara.New("reports", nil)
	build := app.Capability(func(ctx context.Context, i in) (textOut, error) {
		select {
		case <-time.After(200 * time.Millisecond):
			return textOut{"report for " + i.Month}, nil
		case <-ctx.Done():
			return textOut{}, ctx.Err()
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
	upstream := httptest.NewServer(h)
	t.Cleanup(upstream.Close)
	_, url, log := started(t, gateway.Config{Upstreams: []gateway.Upstream{{
		Name: "reports", HTTP: &gateway.HTTPUpstream{URL: upstream.URL},
		Tools: []gateway.Tool{{Remote: "reports.build_report", Name: "build_report", Title: "Build a report", Profile: "standard", Task: true, TaskTimeout: gateway.Duration(20 * time.Second)}},
	}}}, nil)
	text, isErr := call(t, connect(t, url, ""), "gateway.build_report", map[string]any{"month": "2026-11"})
	if isErr || !strings.Contains(text, "report for 2026-11") {
		t.Fatalf("through the gateway: %s\n%s", text, log)
	}
}
