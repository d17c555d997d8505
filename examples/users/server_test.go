package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/internal/proctest"
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
	node := peers.Node(t)
	client := filepath.Join("..", "..", "conformance", "ts-client.mjs")
	peers.NPM(t, "@modelcontextprotocol/sdk")
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

// inProcess compiles the example as run does with cfg (a development
// principal with cfg.devScopes, no tokens) and connects a client to it.
func inProcess(t *testing.T, cfg config, stdout io.Writer, opts agnaratest.Options) (*application, *agnaratest.Client) {
	t.Helper()
	a, err := newApplication(t.Context(), cfg, stdout, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.close) // after the client's, registered next
	opts.Server = a.opts.Server
	return a, agnaratest.NewClient(t, a.snap, &opts)
}

// TestTraceToStdout checks that with -otel-stdout a call's trace, with its
// stages, is printed.
func TestTraceToStdout(t *testing.T) {
	out := &mcptest.Buffer{}
	a, c := inProcess(t, config{devScopes: "users:read", otelStdout: true}, out, agnaratest.Options{})
	c.Call(t, "users.list_users", nil)
	a.close() // flushes the trace
	for _, want := range []string{`"Name": "tools/call users.list_users"`, `"Name": "handler"`, `"Name": "dependencies"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("stdout lacks %s:\n%.2000s", want, out.String())
		}
	}
}

// TestAuditToWriter checks that with an audit writer (-audit) a call's
// record is written as JSON.
func TestAuditToWriter(t *testing.T) {
	audit := &mcptest.Buffer{}
	_, c := inProcess(t, config{devScopes: "users:read", audit: audit}, io.Discard, agnaratest.Options{})
	c.CallFailure(t, "users.get_user", map[string]any{"id": "no-such-user"})
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
