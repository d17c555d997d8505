// Command hello is the smallest agnara-go server: one capability, served
// over MCP at http://127.0.0.1:8080/mcp. README.md shows it whole.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
)

type GreetInput struct {
	Name string `json:"name" jsonschema:"minLength=1" jsonschema_description:"Who to greet."`
}

func Greet(ctx context.Context, in GreetInput) (string, error) {
	return "Hello, " + in.Name + "!", nil
}

func main() {
	app := agnara.New("hello", nil)
	greet := app.Capability(Greet, &agnara.CapabilityOptions{Description: "Greet someone by name."})

	exp := mcpexpose.New(app)
	exp.Tool(greet, nil) // the tool "hello.greet"
	snap, err := exp.Compile()
	if err != nil {
		log.Fatal(err) // every mistake at once, each with its file:line
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/mcp", h)
	ln, err := net.Listen("tcp", "127.0.0.1:8080")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("serving MCP at http://%s/mcp\n", ln.Addr())
	srv := mcpexpose.NewHTTPServer(http.DefaultServeMux, nil) // timeouts against slow clients
	log.Fatal(srv.Serve(ln))
}
