package mcpimport_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSessionServerID(t *testing.T) {
	d := newDocs(nil)
	cs, mon := connect(t, d.server, "2025-11-25")
	for _, tc := range []struct {
		name, id string
		ok       bool
	}{
		{"plain", "docs", true},
		{"128 bytes", strings.Repeat("a", 128), true},
		{"empty", "", false},
		{"control character", "do\ncs", false},
		{"DEL", "do\x7fcs", false},
		{"129 bytes", strings.Repeat("a", 129), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := mcpimport.NewSession(tc.id, cs, mon)
			if tc.ok {
				if err != nil || s.ServerID() != tc.id || s.ClientSession() != cs || s.Monitor() != mon {
					t.Fatalf("NewSession = %v, %v", s, err)
				}
				return
			}
			if execution.ReasonOf(err) != mcpimport.BindingInvalid || !strings.Contains(err.Error(), "server id") {
				t.Fatalf("NewSession err = %v, want %s naming the server id", err, mcpimport.BindingInvalid)
			}
			ct, _ := mcp.NewInMemoryTransports()
			if _, err := mcpimport.Connect(context.Background(), tc.id, ct, nil); execution.ReasonOf(err) != mcpimport.BindingInvalid {
				t.Fatalf("Connect err = %v, want %s", err, mcpimport.BindingInvalid)
			}
		})
	}
	if _, err := mcpimport.NewSession("docs", nil, mon); execution.ReasonOf(err) != mcpimport.BindingInvalid {
		t.Errorf("NewSession without a client session: %v", err)
	}
}

// Connect wires the monitor in: a tools/list_changed notification from the
// remote server makes the catalog stale without the host routing anything,
// and the host's own handler still runs.
func TestConnectWiresTheMonitor(t *testing.T) {
	ctx := context.Background()
	remote := mcp.NewServer(&mcp.Implementation{Name: "docs", Version: "1"}, nil)
	mcp.AddTool(remote, &mcp.Tool{Name: "search", Description: "Search."},
		func(context.Context, *mcp.CallToolRequest, struct {
			Q string `json:"q"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	ss, err := remote.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	hostSaw := make(chan struct{}, 1)
	sess, err := mcpimport.Connect(ctx, "docs", ct, &mcpimport.ConnectOptions{
		ClientOptions: &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case hostSaw <- struct{}{}:
			default:
			}
		}},
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{
		"search": {Name: "search", Title: "Search", NoScopeValidator: true},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := cat.Snapshot().ProtocolVersion(); got != "2025-11-25" {
		t.Errorf("protocol version %s, want the negotiated 2025-11-25", got)
	}
	select {
	case <-cat.Stale():
		t.Fatal("stale before any change")
	default:
	}
	remote.AddTool(&mcp.Tool{Name: "other", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	timeout := time.After(10 * time.Second)
	select {
	case <-cat.Stale():
	case <-timeout:
		t.Fatal("the catalog did not go stale after tools/list_changed")
	}
	select {
	case <-hostSaw:
	case <-timeout:
		t.Fatal("the host's own ToolListChangedHandler did not run")
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
}
