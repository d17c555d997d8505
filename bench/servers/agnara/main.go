// Command agnara serves the benchmark's echo tool through agnara-go:
// a capability exposed with mcpexpose, both protocol eras on one URL
// (mcpexpose.NewHandler: 2026-07-28 statelessly, the handshake era with
// sessions).
package main

import (
	"context"
	"net/http"

	"github.com/agnara-go/agnara/agnara"
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

func handler() (http.Handler, error) {
	app := agnara.New("bench", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(echo, &agnara.CapabilityOptions{Name: "echo", Description: "Echo."}), &mcpexpose.ToolOptions{Name: "echo"})
	snap, err := exp.Compile()
	if err != nil {
		return nil, err
	}
	return mcpexpose.NewHandler(snap, nil)
}

func main() { serve.Main(handler) }
