package mcpexpose_test

import (
	"context"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

type FindInput struct {
	Query string `json:"query" jsonschema:"minLenght=1"`
	Limit int    `json:"limit,omitempty" jsonschema:"minimum=10,maximum=1"`
}

type ItemRef struct {
	ID string `json:"id"`
}

// Compile reports every mistake of the application and of its exposure in
// one round, one per line, each with the file:line that made it, what it
// concerns (a capability, a tool, a template) and what to fix. Its error
// lists them, one error each.
func ExampleExposure_Compile() {
	app := agnara.New("shop", nil)
	exp := mcpexpose.New(app)
	find := app.Capability(func(context.Context, FindInput) ([]string, error) { return nil, nil },
		&agnara.CapabilityOptions{Name: "find", Description: "Finds items."})
	item := app.Capability(func(context.Context, ItemRef) (string, error) { return "", nil },
		&agnara.CapabilityOptions{Name: "item"})
	exp.Tool(find, &mcpexpose.ToolOptions{Name: "search"})
	exp.Tool(item, &mcpexpose.ToolOptions{Name: "search"})
	exp.ResourceTemplate(item, &mcpexpose.ResourceTemplateOptions{URITemplate: "items://{item}"})

	_, err := exp.Compile()
	fmt.Println(err)
	fmt.Println(len(err.(interface{ Unwrap() []error }).Unwrap()), "mistakes")
	// Output:
	// mcpexpose/example_mistakes_test.go:27: shop.find: input FindInput.Query: unknown jsonschema tag key "minLenght" (did you mean "minLength"?)
	// mcpexpose/example_mistakes_test.go:27: shop.find: input FindInput.Limit: minimum: minimum 10 is greater than maximum 1: no value satisfies both
	// mcpexpose/example_mistakes_test.go:32: search: duplicate tool name (first declared at mcpexpose/example_mistakes_test.go:31)
	// mcpexpose/example_mistakes_test.go:32: search: a tool needs a description: set CapabilityOptions.Description of shop.item (registered at mcpexpose/example_mistakes_test.go:29)
	// mcpexpose/example_mistakes_test.go:33: items://{item}: template variable {item} is not a field of the input of shop.item
	// 5 mistakes
}
