package mcpexpose_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool with an MCP App view: the tool's definition links a ui://
// resource, which a host reads and renders beside the tool's results; the
// server declares the io.modelcontextprotocol/ui extension.
func ExampleToolOptions_uI() {
	app := agnara.New("weather", nil)
	forecast := app.Capability(func() (string, error) { return "sunny", nil },
		&agnara.CapabilityOptions{Name: "forecast", Description: "Tomorrow's weather."})
	exp := mcpexpose.New(app)
	exp.Tool(forecast, &mcpexpose.ToolOptions{UI: &mcpexpose.UI{
		HTML: `<!doctype html><title>Forecast</title><p id="sky">…</p>`,
		CSP:  mcpexpose.UICSP{ConnectDomains: []string{"https://api.weather.example"}},
	}})
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	cs := connectInMemory(snap)
	defer cs.Close()
	ctx := context.Background()
	_, declared := cs.InitializeResult().Capabilities.Extensions["io.modelcontextprotocol/ui"]
	tools, _ := cs.ListTools(ctx, nil)
	view := tools.Tools[0].Meta["ui"].(map[string]any)["resourceUri"].(string)
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: view})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Contents[0]
	fmt.Println("extension declared:", declared)
	fmt.Println(view, c.MIMEType)
	fmt.Println(c.Text)
	fmt.Println(c.Meta["ui"])
	// Output:
	// extension declared: true
	// ui://weather.forecast text/html;profile=mcp-app
	// <!doctype html><title>Forecast</title><p id="sky">…</p>
	// map[csp:map[connectDomains:[https://api.weather.example]]]
}
