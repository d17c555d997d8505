// Command agnara is the operator's tool for an agnara host. It has three
// command groups. keys writes and rotates the key file that every instance
// of a server shares to seal request state (package
// mcpexpose/requeststate; see docs/scaling.md):
//
//	agnara keys generate -o FILE [-force]
//	agnara keys rotate   FILE [-keep 1h]
//	agnara keys list     FILE
//
// approvals reads and decides the durable approvals that gate imported
// remote write tools (package approval):
//
//	agnara approvals list      DB [-state pending] [-limit 50]
//	agnara approvals show      DB ID
//	agnara approvals approve   DB ID -as APPROVER [-issuer ISS] [-note TEXT]
//	agnara approvals reject    DB ID -as APPROVER [-issuer ISS] [-note TEXT]
//	agnara approvals cancel    DB ID -as APPROVER [-issuer ISS] [-note TEXT]
//	agnara approvals reconcile DB ID -as APPROVER [-issuer ISS] -effect committed|not_started -evidence TEXT
//	agnara approvals serve     DB [-addr HOST:PORT] (-dev-approver ID | -issuer URL -client-id ID)
//
// where DB is the host's approval database, exactly one of
//
//	-db PATH          its SQLite file
//	-postgres DSN     its PostgreSQL database, e.g. postgres://approver@db.internal:5432/agnara
//
// The command never creates or migrates a database: the host does (it runs
// approval.MigratePostgres at start), and a PostgreSQL schema the host has
// not migrated is refused with what to run. Keep a PostgreSQL password out
// of the command line (PGPASSWORD, ~/.pgpass); errors never print it.
//
// Whoever runs it is trusted host staff: with -as it acts as that principal
// holding the approver scope. The store still refuses a decision by the
// requester (the same id ignoring case, accents and look-alike letters,
// from any issuer or none; ADR 0066)
// and records every decision with its actor. -as, -issuer and IDs with
// control characters or surrounding spaces are refused, and every value
// printed that came from a requester, a remote tool or the database is
// escaped when it is not printable.
// See docs/approvals.md.
//
// gateway serves a governed gateway (package gateway) from a YAML config:
//
//	agnara gateway -config gateway.yaml [-check] [-log-level info]
//	agnara gateway -sample
//
// See docs/gateway.md.
//
// tools talks to any MCP server over streamable HTTP, at either protocol
// era, with a bearer token or the OAuth client-credentials grant:
//
//	agnara tools list URL [-era modern|legacy] [-json]
//	agnara tools call URL NAME [JSON] [-task] [-yes] [-answers JSON] [-json]
//
// resources, prompts and complete read the other features of any MCP
// server the same way:
//
//	agnara resources list URL
//	agnara resources read URL URI
//	agnara prompts list URL
//	agnara prompts get URL NAME [ARG=VALUE...]
//	agnara complete URL prompt NAME ARG[=TYPED] [ARG=VALUE...]
//	agnara complete URL resource TEMPLATE VAR[=TYPED] [VAR=VALUE...]
//	agnara tasks get|cancel URL ID
//
// See docs/getting-started.md.
package main

import (
	"fmt"
	"os"

	framework "github.com/agnara-go/agnara/agnara" // the tests name a helper agnara
)

func main() {
	os.Exit((&cli{stdout: os.Stdout, stderr: os.Stderr}).main(os.Args[1:]))
}

const mainUsage = `usage: agnara <group> <command> [flags]

Groups:
  keys       the request-state key file shared by a server's instances
  approvals  the durable approvals of imported write tools
  gateway    serve a governed gateway from a config file
  tools      list and call the tools of any MCP server
  resources  list and read the resources of any MCP server
  prompts    list and get the prompts of any MCP server
  complete   ask any MCP server to complete a prompt or template argument
  tasks      get or cancel a task of any MCP server
  version    print agnara-go's version

Run 'agnara keys help', 'agnara approvals help', 'agnara tools help' or
'agnara resources help' for their commands.
`

// main runs one invocation (args without the program name) and returns the
// exit code.
func (c *cli) main(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, mainUsage)
		return 1
	}
	switch args[0] {
	case "keys":
		return c.keys(args[1:])
	case "approvals":
		return c.run(args)
	case "gateway":
		return c.gateway(args[1:])
	case "tools":
		return c.tools(args[1:])
	case "resources", "prompts", "complete", "tasks":
		return c.catalog(args[0], args[1:])
	case "version":
		fmt.Fprintln(c.stdout, "agnara-go", framework.Version)
		return 0
	case "-h", "-help", "--help", "help":
		fmt.Fprint(c.stdout, mainUsage)
		return 0
	}
	fmt.Fprintf(c.stderr, "agnara: unknown command group %q\n\n%s", args[0], mainUsage)
	return 1
}
