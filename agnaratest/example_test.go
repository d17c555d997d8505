package agnaratest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/agnaratest"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type GreetInput struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

// greeter compiles an application with one tool, hello.greet, that needs
// the scope hello:use.
func greeter() *mcpexpose.Snapshot {
	app := agnara.New("hello", nil)
	greet := app.Capability(func(ctx context.Context, in GreetInput) (string, error) {
		if in.Name == "nobody" {
			return "", execution.Fail(execution.NotFound, "nobody is here", nil)
		}
		return "Hello, " + in.Name + "!", nil
	}, &agnara.CapabilityOptions{Name: "greet", Description: "Greet someone.", Scopes: []string{"hello:use"}})
	exp := mcpexpose.New(app)
	exp.Tool(greet, nil)
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}
	return snap
}

// In a test, NewClient(t, snap, opts) does this and closes the client when
// the test ends; Connect is for code without a testing.TB.
func Example() {
	ctx := context.Background()
	c, err := agnaratest.Connect(ctx, greeter(), &agnaratest.Options{
		Principal: policy.NewPrincipal("ada", []string{"hello:use"}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	tools, err := c.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ProtocolVersion(), tools[0].Name)

	for _, name := range []string{"Ada", "nobody"} {
		out, err := c.CallTool(ctx, "hello.greet", map[string]any{"name": name})
		if err != nil {
			log.Fatal(err)
		}
		switch out := out.(type) {
		case execution.Success:
			fmt.Printf("success %s\n", out.Value)
		case *execution.Failure:
			fmt.Printf("failure %v: %s\n", out.Code, out.Message)
		}
	}
	// Output:
	// 2026-07-28 hello.greet
	// success "Hello, Ada!"
	// failure not_found: nobody is here
}

// A handshake-era client, anonymous: it holds no scope, so it is shown no
// tool.
func ExampleOptions_handshake() {
	ctx := context.Background()
	c, err := agnaratest.Connect(ctx, greeter(), &agnaratest.Options{ProtocolVersion: agnaratest.Handshake})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ProtocolVersion(), len(tools))
	// Output:
	// 2025-11-25 0
}

// A client that answers a capability's confirmation yes, and what it was
// asked.
func ExampleConfirm() {
	app := agnara.New("files", nil)
	wipe := app.Capability(func(context.Context) (string, error) { return "wiped", nil },
		&agnara.CapabilityOptions{Name: "wipe", Description: "Wipe the disk.", Confirm: "Wipe the disk?"})
	exp := mcpexpose.New(app)
	exp.Tool(wipe, nil)
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c, err := agnaratest.Connect(ctx, snap, &agnaratest.Options{Answer: agnaratest.Confirm()})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, err := c.CallTool(ctx, "files.wipe", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s after %q\n", out.(execution.Success).Value, c.Questions()[0].Message)
	// Output:
	// "wiped" after "Wipe the disk?"
}

type ImportInput struct {
	Rows int `json:"rows"`
}

// A tool exposed with mcpexpose.TaskOptional runs as a task for CallTask,
// which follows it to its end and reports what it went through; CallTool
// runs the same tool directly.
func ExampleClient_CallTask() {
	app := agnara.New("batch", nil)
	imp := app.Capability(func(ec *execution.Context, in ImportInput) (string, error) {
		select {
		case <-time.After(20 * time.Millisecond): // the long work
			return fmt.Sprintf("imported %d rows", in.Rows), nil
		case <-ec.Done():
			return "", ec.Err() // tasks/cancel
		}
	}, &agnara.CapabilityOptions{Name: "import", Description: "Import rows."})
	exp := mcpexpose.New(app)
	exp.Tool(imp, &mcpexpose.ToolOptions{Task: mcpexpose.TaskOptional})
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c, err := agnaratest.Connect(ctx, snap, &agnaratest.Options{Server: &mcpexpose.ServerOptions{
		Tasks: &mcpexpose.TaskOptions{PollInterval: 10 * time.Millisecond},
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	run, err := c.CallTask(ctx, "batch.import", ImportInput{Rows: 3}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(run.ID != "", run.Statuses, string(run.Outcome.(execution.Success).Value.(json.RawMessage)))
	// Output:
	// true [working completed] "imported 3 rows"
}

// A tool's MCP App view, as a host sees it: UIOf names the view a listed
// tool links; Client.ToolUI reads it in a test.
func ExampleUIOf() {
	app := agnara.New("shop", nil)
	cart := app.Capability(func() (string, error) { return "2 items", nil },
		&agnara.CapabilityOptions{Name: "cart", Description: "The cart."})
	exp := mcpexpose.New(app)
	exp.Tool(cart, &mcpexpose.ToolOptions{UI: &mcpexpose.UI{HTML: "<p>Your cart</p>"}})
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c, err := agnaratest.Connect(ctx, snap, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tools, err := c.ListTools(ctx)
	if err != nil {
		log.Fatal(err)
	}
	uri := agnaratest.UIOf(tools[0])
	res, err := c.Session().ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(uri, res.Contents[0].MIMEType, res.Contents[0].Text)
	// Output:
	// ui://shop.cart text/html;profile=mcp-app <p>Your cart</p>
}
