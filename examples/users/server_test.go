package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startExample builds and starts the example as a user would run it, on a
// free loopback port, and returns its MCP URL.
func startExample(t *testing.T, args ...string) string {
	t.Helper()
	url := proctest.Start(t, proctest.Build(t, "."), append([]string{"-addr", "127.0.0.1:0"}, args...)...)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("example printed %q, want its MCP URL", url)
	}
	return url
}

// TestTypeScriptClientThroughTheExample starts the example and has the
// TypeScript SDK client list its tools and call one.
func TestTypeScriptClientThroughTheExample(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is required: the TypeScript SDK client runs on it")
	}
	client := filepath.Join("..", "..", "conformance", "ts-client.mjs")
	if _, err := os.Stat(filepath.Join("..", "..", "conformance", "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Fatal("the TypeScript SDK is not installed: run 'make deps' (npm ci in conformance/)")
	}
	url := startExample(t)

	resp, err := http.Get(strings.TrimSuffix(url, "/mcp") + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("/healthz: %d", resp.StatusCode)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, client, url, "users.list_users", `{"limit":5}`).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	var got struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Tools           []string `json:"tools"`
		Result          struct {
			IsError           bool           `json:"isError"`
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("TypeScript client printed %q", out)
	}
	// The development principal holds users:read only (the default
	// -dev-scopes), so it sees the read tools.
	if got.ProtocolVersion != "2025-11-25" || strings.Join(got.Tools, ",") != "users.get_user,users.list_users" {
		t.Errorf("TypeScript client: version %s, tools %v", got.ProtocolVersion, got.Tools)
	}
	if got.Result.IsError || got.Result.StructuredContent == nil {
		t.Errorf("call result = %+v", got.Result)
	}

	// With more scopes, the development principal sees more.
	url = startExample(t, "-dev-scopes", "users:read users:write users:admin")
	out, err = exec.CommandContext(ctx, node, client, url, "users.create_user", `{"name":"Ada","email":"ada@example.com"}`).Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != 4 || got.Result.IsError {
		t.Errorf("admin development principal: tools %v, result %+v", got.Tools, got.Result)
	}
}

func TestLocalTrialRefusesNonLoopback(t *testing.T) {
	err := run(context.Background(), config{addr: "0.0.0.0:0", devScopes: "users:read"}, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("run on 0.0.0.0 without -issuer = %v, want a refusal naming loopback", err)
	}
}

func TestBadIssuerFailsAtStart(t *testing.T) {
	err := run(context.Background(), config{addr: "127.0.0.1:0", issuer: "http://127.0.0.1:1"}, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "discovering issuer") {
		t.Errorf("run with an unreachable issuer = %v", err)
	}
}

// TestTraceToStdout runs the example with -otel-stdout and checks that a
// call's trace, with its stages, is printed.
func TestTraceToStdout(t *testing.T) {
	out := &mcptest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", devScopes: "users:read", otelStdout: true}, out, slog.New(slog.DiscardHandler))
	}()
	var url string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		if line, _, ok := strings.Cut(out.String(), "\n"); ok {
			url = line
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The client's own transport, so that its idle connections can be
	// closed: the server's graceful shutdown waits up to 5 s for a
	// connection the client dialed but never used (net/http treats a new
	// connection as active that long).
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.list_users", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	hc.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Name": "tools/call users.list_users"`, `"Name": "handler"`, `"Name": "dependencies"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %s:\n%.2000s", want, out.String())
		}
	}
}

// TestAuditToWriter runs the example with an audit writer (-audit) and
// checks that a call's record is written as JSON.
func TestAuditToWriter(t *testing.T) {
	out, audit := &mcptest.Buffer{}, &mcptest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, config{addr: "127.0.0.1:0", devScopes: "users:read", audit: audit}, out, slog.New(slog.DiscardHandler))
	}()
	var url string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		if line, _, ok := strings.Cut(out.String(), "\n"); ok {
			url = line
		}
		time.Sleep(5 * time.Millisecond)
	}
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "users.get_user", Arguments: map[string]any{"id": "no-such-user"}}); err != nil {
		t.Fatal(err)
	}
	cs.Close()
	hc.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(audit.String()), &rec); err != nil {
		t.Fatalf("audit output %q is not one JSON record: %v", audit.String(), err)
	}
	if rec["msg"] != "audit" || rec["capability"] != "users.get_user" || rec["outcome"] != "not_found" || rec["principal"] != "developer" {
		t.Errorf("audit record = %v", rec)
	}
	if strings.Contains(audit.String(), "no-such-user") {
		t.Errorf("audit record holds an argument value: %s", audit.String())
	}
}
