package mcpexpose_test

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

type RemoveInput struct {
	ID string `json:"id" jsonschema_description:"The item to remove."`
}

func Remove(ctx context.Context, in RemoveInput) error { return nil }

// Dumping the compiled snapshot for review instead of serving it: the
// application's main offers a flag of its own, and a pull request carries
// the output (go run . -dump-snapshot > snapshot.json), so that a change of
// a scope, a schema or a confirmation shows in the diff.
func ExampleSnapshot_WriteJSON() {
	flags := flag.NewFlagSet("inventory", flag.ContinueOnError)
	dump := flags.Bool("dump-snapshot", false, "print the compiled tools as JSON and exit")
	flags.Parse([]string{"-dump-snapshot"}) // as if run with it

	app := agnara.New("inventory", &agnara.Options{Version: "1.2.0"})
	remove := app.Capability(Remove, &agnara.CapabilityOptions{
		Description: "Remove an item.",
		Scopes:      []string{"inventory:write"},
		Confirm:     "Remove this item for good?",
		Annotations: agnara.Destructive,
	})
	exp := mcpexpose.New(app)
	exp.Tool(remove, nil)
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	if *dump {
		if err := snap.WriteJSON(os.Stdout); err != nil {
			fmt.Println(err)
		}
		return
	}
	// ... mcpexpose.NewHandler(snap, opts) and serve.

	// Output:
	// {
	//   "app": {
	//     "name": "inventory",
	//     "version": "1.2.0"
	//   },
	//   "format": "agnara.snapshot/v1",
	//   "prompts": [],
	//   "resourceTemplates": [],
	//   "resources": [],
	//   "scopes": [
	//     "inventory:write"
	//   ],
	//   "tools": [
	//     {
	//       "annotations": [
	//         "destructive"
	//       ],
	//       "confirm": "Remove this item for good?",
	//       "description": "Remove an item.",
	//       "inputSchema": {
	//         "additionalProperties": false,
	//         "properties": {
	//           "id": {
	//             "description": "The item to remove.",
	//             "type": "string"
	//           }
	//         },
	//         "required": [
	//           "id"
	//         ],
	//         "type": "object"
	//       },
	//       "name": "inventory.remove",
	//       "outputSchema": {
	//         "additionalProperties": false,
	//         "properties": {
	//           "result": {
	//             "type": "null"
	//           }
	//         },
	//         "required": [
	//           "result"
	//         ],
	//         "type": "object"
	//       },
	//       "scopes": [
	//         "inventory:write"
	//       ]
	//     }
	//   ]
	// }
}
