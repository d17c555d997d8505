package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpimport"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestGatewaySwapsItsHandlerWhenTheUpstreamChanges: a tools/list_changed
// from the upstream makes the gateway import again and replace its handler
// whole. The upstream here is an SDK server in memory with the two tools
// the gateway binds.
func TestGatewaySwapsItsHandlerWhenTheUpstreamChanges(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream := mcp.NewServer(&mcp.Implementation{Name: "users", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"limit":{"type":"integer"}},"additionalProperties":false}`)
	echo := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	}
	upstream.AddTool(&mcp.Tool{Name: "users.get_user", Description: "Get.", InputSchema: schema}, echo)
	upstream.AddTool(&mcp.Tool{Name: "users.list_users", Description: "List.", InputSchema: schema}, echo)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := upstream.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()

	sess, err := mcpimport.Connect(ctx, "users", ct, &mcpimport.ConnectOptions{
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()

	gw := &gateway{session: sess, logger: slog.New(slog.DiscardHandler), principal: policy.NewPrincipal("dev", nil)}
	stale, err := gw.load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first := gw.handler.Load()
	go gw.follow(ctx, stale)

	upstream.AddTool(&mcp.Tool{Name: "users.delete_user", Description: "Delete.", InputSchema: schema}, echo)
	deadline := time.Now().Add(10 * time.Second)
	for gw.handler.Load() == first {
		if time.Now().After(deadline) {
			t.Fatal("the gateway kept its old handler after the upstream catalog changed")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
