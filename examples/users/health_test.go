package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// get returns the status and body of a GET of url.
func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

// waitFor gets url until its status is want, for at most a minute, and
// returns the body that had it.
func waitFor(t *testing.T, url string, want int) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, body := get(t, url)
		if code == want {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s = %d %q for a minute, want %d", url, code, body, want)
		}
		time.Sleep(50 * time.Millisecond) // polling, as a load balancer does
	}
}

// TestReadinessFollowsRedis runs the example as one instance of a cluster
// (shared keys, Redis replay store): /readyz answers 200 naming redis while
// Redis runs, 503 naming it (and not its URL) once it is stopped, and 200
// again once it is back, while /healthz answers 200 throughout.
func TestReadinessFollowsRedis(t *testing.T) {
	r := enginetest.Redis(t)
	keys, err := requeststate.NewKeyFile(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "state.keys")
	if err := requeststate.WriteKeyFile(keyFile, keys); err != nil {
		t.Fatal(err)
	}
	url := startExample(t, "-state-keys", keyFile, "-replay-redis", r.URL(), "-metrics-addr", "off")
	base := strings.TrimSuffix(url, "/mcp")

	if body := waitFor(t, base+"/readyz", http.StatusOK); body != "ready\nredis: ok\n" {
		t.Errorf("/readyz with Redis up = %q", body)
	}
	r.Stop()
	body := waitFor(t, base+"/readyz", http.StatusServiceUnavailable)
	if body != "not ready\nredis: unreachable\n" {
		t.Errorf("/readyz with Redis stopped = %q, want redis named", body)
	}
	if strings.Contains(body, r.Addr()) {
		t.Errorf("/readyz names Redis's address: %q", body)
	}
	if code, body := get(t, base+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz with Redis stopped = %d %q, want 200: the process serves", code, body)
	}
	r.Start()
	waitFor(t, base+"/readyz", http.StatusOK)
}

// TestMetricsOnTheirOwnAddress runs the example with -metrics-addr: a call
// is counted at /metrics there, which the MCP listener does not serve, and
// only the series the example has are exported.
func TestMetricsOnTheirOwnAddress(t *testing.T) {
	metrics := "127.0.0.1:" + strconv.Itoa(enginetest.FreePort(t))
	url := startExample(t, "-metrics-addr", metrics)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "metrics-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.list_users", Arguments: map[string]any{"limit": 1}}); err != nil {
		t.Fatal(err)
	}
	code, body := get(t, "http://"+metrics+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`agnara_mcp_calls_total{outcome="ok",reason="",tool="users.list_users"} 1`,
		`agnara_mcp_sessions_max 1000`,
		`go_goroutines `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The example serves MCP: it has neither approvals nor tasks, and
	// exports no series of theirs.
	var got []string
	for line := range strings.Lines(body) {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" && strings.HasPrefix(f[2], "agnara_") {
			got = append(got, f[2])
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"agnara_build_info", "agnara_mcp_call_duration_seconds", "agnara_mcp_calls_total",
		"agnara_mcp_rate_limited_total", "agnara_mcp_refused_total", "agnara_mcp_replay_store_errors_total",
		"agnara_mcp_request_state_refused_total", "agnara_mcp_sessions", "agnara_mcp_sessions_max", "agnara_mcp_streams",
		"agnara_mcp_streams_max"}, got); diff != "" {
		t.Errorf("the example's series (-want +got):\n%s", diff)
	}
	if code, _ := get(t, strings.TrimSuffix(url, "/mcp")+"/metrics"); code != http.StatusNotFound {
		t.Errorf("the MCP listener answers /metrics with %d, want 404: metrics have their own address", code)
	}
}
