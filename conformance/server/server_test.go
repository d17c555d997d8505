package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTwoClientsOneServer runs the Go SDK client (which negotiates
// 2026-07-28) and the TypeScript SDK client (which speaks the handshake
// era, 2025-11-25) against the same running server; both call the same
// tool.
func TestTwoClientsOneServer(t *testing.T) {
	node := peers.Node(t)
	peers.NPM(t, "@modelcontextprotocol/sdk")
	h, err := newHandler(mcpexpose.ServerOptions{Logger: slog.New(slog.DiscardHandler)}, true)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	url := srv.URL + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Go SDK client.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-peer", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("Go client negotiated %s, want 2026-07-28", v)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil {
		t.Fatal(err)
	}
	goText := res.Content[0].(*mcp.TextContent).Text

	// TypeScript SDK client, same server, same tool.
	cmd := exec.CommandContext(ctx, node, filepath.Join("..", "ts-client.mjs"), url, "test_simple_text", "{}")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript client: %v", err)
	}
	var ts struct {
		ProtocolVersion string   `json:"protocolVersion"`
		Tools           []string `json:"tools"`
		Result          struct {
			Content []struct{ Type, Text string } `json:"content"`
			IsError bool                          `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &ts); err != nil {
		t.Fatalf("TypeScript client printed %q: %v", out, err)
	}
	if ts.ProtocolVersion != "2025-11-25" {
		t.Errorf("TypeScript client negotiated %q, want 2025-11-25", ts.ProtocolVersion)
	}
	if want := len(fixtures()) + 2; len(ts.Tools) != want { // and the two triggers
		t.Errorf("TypeScript client listed %d tools, want %d", len(ts.Tools), want)
	}
	if ts.Result.IsError || len(ts.Result.Content) != 1 || ts.Result.Content[0].Text != goText {
		t.Errorf("TypeScript client got %+v, Go client got %q", ts.Result, goText)
	}
}
