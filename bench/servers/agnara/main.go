// Command agnara serves the benchmark's tools through agnara-go: echo and
// the realistic workload's quote (internal/realistic), capabilities exposed
// with mcpexpose, both protocol eras on one URL (mcpexpose.NewHandler:
// 2026-07-28 statelessly, the handshake era with sessions). agnara-go
// validates every call's arguments and every structured result against the
// schemas it derives from the Go types.
package main

import (
	"context"
	"net/http"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/bench/internal/realistic"
	"github.com/agnara-go/agnara/bench/internal/serve"
	"github.com/agnara-go/agnara/mcpexpose"
)

type echoIn struct {
	Message string `json:"message"`
}

type echoOut struct {
	Message string `json:"message"`
}

func echo(_ context.Context, in echoIn) (echoOut, error) { return echoOut(in), nil }

func quote(_ context.Context, in realistic.Request) (realistic.Quote, error) {
	return realistic.Compute(in), nil
}

func snapshot() (*mcpexpose.Snapshot, error) {
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	exp.Tool(app.Capability(quote, &agnara.CapabilityOptions{Name: realistic.ToolName, Description: realistic.Description}),
		&mcpexpose.ToolOptions{Name: realistic.ToolName})
	return exp.Compile()
}

func handler() (http.Handler, error) {
	snap, err := snapshot()
	if err != nil {
		return nil, err
	}
	return mcpexpose.NewHandler(snap, nil)
}

func main() { serve.Main(handler) }
