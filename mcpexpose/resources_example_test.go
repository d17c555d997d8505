package mcpexpose_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type BookIn struct {
	ISBN string `json:"isbn"`
}

type Book struct {
	ISBN  string `json:"isbn"`
	Title string `json:"title"`
}

// A capability read as a resource template: the template's variables are
// the input's fields, and the value it returns is the contents, as JSON.
func ExampleExposure_ResourceTemplate() {
	app := agnara.New("library", nil)
	book := app.Capability(func(in BookIn) (Book, error) {
		return Book{ISBN: in.ISBN, Title: "Gophers"}, nil
	}, &agnara.CapabilityOptions{Name: "book", Description: "One book by ISBN."})
	exp := mcpexpose.New(app)
	exp.ResourceTemplate(book, &mcpexpose.ResourceTemplateOptions{URITemplate: "books://{isbn}"})
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	cs := connectInMemory(snap)
	defer cs.Close()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "books://978-0"})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := res.Contents[0]
	fmt.Println(snap.ResourceTemplates()[0].URITemplate, c.MIMEType, c.Text)
	// Output:
	// books://{isbn} application/json {"isbn":"978-0","title":"Gophers"}
}

type ReviewIn struct {
	Title string `json:"title" jsonschema:"description=The book to review"`
}

// A capability as a prompt: its input fields are the arguments, its result
// the messages; a Completer suggests argument values.
func ExampleExposure_Prompt() {
	app := agnara.New("library", nil)
	review := app.Capability(func(in ReviewIn) ([]execution.Message, error) {
		return []execution.Message{{Role: execution.User, Content: execution.Text{Text: "Review " + in.Title + " in three sentences."}}}, nil
	}, &agnara.CapabilityOptions{Name: "review", Description: "Ask for a short review."})
	titles := func(_ context.Context, req mcpexpose.CompletionRequest) ([]string, error) {
		var out []string
		for _, t := range []string{"Gophers", "Go in Practice", "Rust"} {
			if strings.HasPrefix(t, req.Value) {
				out = append(out, t)
			}
		}
		return out, nil
	}
	exp := mcpexpose.New(app)
	exp.Prompt(review, &mcpexpose.PromptOptions{Complete: map[string]mcpexpose.Completer{"title": titles}})
	snap, err := exp.Compile()
	if err != nil {
		fmt.Println(err)
		return
	}
	cs := connectInMemory(snap)
	defer cs.Close()
	ctx := context.Background()
	p, _ := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "library.review", Arguments: map[string]string{"title": "Gophers"}})
	c, _ := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "library.review"}, Argument: mcp.CompleteParamsArgument{Name: "title", Value: "Go"}})
	fmt.Println(snap.Prompts()[0].Arguments[0].Name, p.Messages[0].Role, p.Messages[0].Content.(*mcp.TextContent).Text)
	fmt.Println(c.Completion.Values)
	// Output:
	// title user Review Gophers in three sentences.
	// [Gophers Go in Practice]
}

// connectInMemory connects a Go SDK client to a server for snap.
func connectInMemory(snap *mcpexpose.Snapshot) *mcp.ClientSession {
	srv, err := mcpexpose.NewServer(snap, nil)
	if err != nil {
		panic(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		panic(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		panic(err)
	}
	return cs
}
