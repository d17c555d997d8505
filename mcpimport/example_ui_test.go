package mcpimport_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agnara-go/agnara/mcpimport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A remote tool with an MCP App view is imported with it: discovery reads
// the ui:// resource the tool links and keeps the page, byte for byte,
// and its policy in the tool's entry, whose identity covers them. A host
// serves the view from there (the gateway, from its lock file), never
// from the remote server.
func ExampleEntry_view() {
	ctx := context.Background()
	remote := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1"}, nil)
	remote.AddResource(&mcp.Resource{URI: "ui://forecast/view.html", Name: "forecast"},
		func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: "ui://forecast/view.html", MIMEType: mcpimport.UIMIMEType, Text: "<p>Sunny</p>\n",
				Meta: mcp.Meta{"ui": map[string]any{"csp": map[string]any{"connectDomains": []any{"https://api.weather.example"}}}},
			}}}, nil
		})
	type In struct {
		City string `json:"city"`
	}
	mcp.AddTool(remote, &mcp.Tool{Name: "forecast", Description: "The forecast.",
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": "ui://forecast/view.html"}}},
		func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := remote.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	sess, err := mcpimport.Connect(ctx, "weather", ct, &mcpimport.ConnectOptions{
		Client:         &mcp.Implementation{Name: "host", Version: "1"},
		SessionOptions: &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	cat, err := mcpimport.Discover(ctx, sess, map[string]mcpimport.Binding{
		"forecast": {Name: "forecast", Title: "Forecast", NoScopeValidator: true},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	ui := cat.Snapshot().Entries()[0].UI
	fmt.Printf("%s %q %v\n", ui.URI, ui.HTML, ui.CSP.ConnectDomains)
	// Output:
	// ui://forecast/view.html "<p>Sunny</p>\n" [https://api.weather.example]
}
