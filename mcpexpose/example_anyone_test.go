package mcpexpose_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

// ResetSandbox wipes a demo's scratch data.
func ResetSandbox(ctx context.Context) error { return nil }

// A capability annotated Destructive must say who may run it: Scopes, a
// policy or Confirm. A demo whose reset anyone may run says so in so many
// words, with AnyoneMayCall, and the snapshot's review form shows it to
// whoever reviews the application.
func Example_anyoneMayCall() {
	compile := func(opts *agnara.CapabilityOptions) *mcpexpose.Snapshot {
		app := agnara.New("sandbox", nil)
		exp := mcpexpose.New(app)
		exp.Tool(app.Capability(ResetSandbox, opts), nil)
		snap, err := exp.Compile()
		if err != nil {
			fmt.Println(err)
		}
		return snap
	}

	// Destructive, and nothing says who may run it: refused.
	compile(&agnara.CapabilityOptions{
		Description: "Wipe the sandbox's scratch data.",
		Annotations: agnara.Destructive,
	})

	// Anyone may, and the registration says so.
	snap := compile(&agnara.CapabilityOptions{
		Description:   "Wipe the sandbox's scratch data.",
		Annotations:   agnara.Destructive,
		AnyoneMayCall: true,
	})
	if snap == nil {
		return
	}
	b, _ := snap.MarshalJSON()
	var doc struct {
		Tools []struct {
			Name          string   `json:"name"`
			Annotations   []string `json:"annotations"`
			AnyoneMayCall bool     `json:"anyoneMayCall"`
		} `json:"tools"`
	}
	json.Unmarshal(b, &doc)
	fmt.Printf("%+v\n", doc.Tools[0])
	// Output:
	// mcpexpose/example_anyone_test.go:23: sandbox.reset_sandbox: annotated Destructive, but any caller, anonymous ones included, may run it: declare who may (Scopes: []string{"<scope>"}, a policy in Policies, or Confirm: "<question>"), or set AnyoneMayCall: true if anyone may
	// {Name:sandbox.reset_sandbox Annotations:[destructive] AnyoneMayCall:true}
}
