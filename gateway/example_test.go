package gateway_test

import (
	"fmt"

	"github.com/agnara-go/agnara/gateway"
)

// Parse reports every mistake of a config at once, each with its line.
func ExampleParse() {
	_, err := gateway.Parse("gateway.yaml", []byte(`
auth:
  development: {scopes: [files:read]}
upstreams:
  - name: files
    stdio: {comand: npx, args: [-y, "@modelcontextprotocol/server-filesystem", "."]}
    tools:
      - {remote: read_text_file, profile: standard}
      - {remote: write_file, title: Write a file, write: write}
`))
	fmt.Println(err)
	// Output:
	// gateway.yaml:6: upstreams[0].stdio: unknown key "comand" (did you mean "command"?)
	// gateway.yaml:6: upstreams[0].stdio.command: name the program to run
	// gateway.yaml:8: upstreams[0].tools[0].title: give the tool a title: it is published, and shown to approvers
	// gateway.yaml:9: upstreams[0].tools[1].write: a write needs approvals: configure approvals (sqlite or postgres_env)
}

// A config built in Go is checked by New; local names must be unique
// across upstreams.
func ExampleNew() {
	_, err := gateway.New(gateway.Config{
		Auth: gateway.Auth{Development: &gateway.Development{Scopes: []string{"docs:read"}}},
		Lock: "gateway.lock",
		Upstreams: []gateway.Upstream{
			{Name: "wiki", Stdio: &gateway.StdioUpstream{Command: "wiki-mcp"},
				Tools: []gateway.Tool{{Remote: "search", Title: "Search the wiki", Scopes: []string{"docs:read"}}}},
			{Name: "tickets", HTTP: &gateway.HTTPUpstream{URL: "http://127.0.0.1:9000/mcp"},
				Tools: []gateway.Tool{{Remote: "search", Title: "Search tickets", Scopes: []string{"docs:read"}}}},
		},
	}, nil)
	fmt.Println(err)
	// Output:
	// upstreams[1].tools[0]: local name "search" is also given to upstreams[0].tools[0]: set a prefix or a name
}
