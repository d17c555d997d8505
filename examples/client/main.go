// Command client calls one MCP tool with an OAuth access token, the way a
// machine-to-machine agent would.
//
// It discovers the issuer's token endpoint from
// <issuer>/.well-known/openid-configuration, gets a token with the OAuth 2.1
// client_credentials grant (golang.org/x/oauth2/clientcredentials), naming
// the MCP server as the RFC 8707 resource so that the token's audience is
// that server, then connects with the official MCP Go SDK, lists the tools it
// may see and calls one. It prints the negotiated protocol version, the tool
// names and the text of the result.
//
// When the MCP server refuses a request with HTTP 401 or 403, it prints the
// status and the WWW-Authenticate challenge of that response and exits with
// status 1; so does any other failure, with a message saying what to fix.
//
// With a local issuer and the users example:
//
//	go run ./examples/devissuer
//	go run ./examples/users -issuer http://127.0.0.1:9000
//	go run ./examples/client -scope users:read -tool users.list_users
//
// Flags:
//
//	-issuer         issuer URL (default http://127.0.0.1:9000)
//	-mcp            MCP endpoint, also the token's resource (default http://127.0.0.1:8080/mcp)
//	-client-id      client id (default demo)
//	-client-secret  client secret (default demo-secret)
//	-scope          space-separated scopes to ask for (default users:read)
//	-tool           tool to call (default users.list_users)
//	-args           the tool's arguments, a JSON object (default {})
//	-timeout        bound on the whole run (default 30s)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	fs := flag.NewFlagSet("client", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: client [flags]\n\nGets a token with client_credentials and calls one MCP tool with it.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var cfg config
	fs.StringVar(&cfg.Issuer, "issuer", "http://127.0.0.1:9000", "issuer `URL`; its /.well-known/openid-configuration names the token endpoint")
	fs.StringVar(&cfg.MCP, "mcp", "http://127.0.0.1:8080/mcp", "MCP endpoint `URL`, also sent as the token's RFC 8707 resource")
	fs.StringVar(&cfg.ClientID, "client-id", "demo", "OAuth client `id`")
	fs.StringVar(&cfg.ClientSecret, "client-secret", "demo-secret", "OAuth client `secret`")
	fs.StringVar(&cfg.Scope, "scope", "users:read", "space-separated `scopes` to ask for; empty asks for the issuer's default")
	fs.StringVar(&cfg.Tool, "tool", "users.list_users", "`name` of the tool to call")
	fs.StringVar(&cfg.Args, "args", "{}", "the tool's arguments, a `JSON object` such as '{\"id\":\"1\"}'")
	timeout := fs.Duration("timeout", 30*time.Second, "bound on the whole run")
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		os.Exit(2)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "client: unexpected arguments %q: every setting is a flag, e.g. -args '{\"id\":\"1\"}' (see -help)\n", fs.Args())
		os.Exit(2)
	}
	if *timeout <= 0 {
		fmt.Fprintf(os.Stderr, "client: -timeout %v must be positive, such as 30s\n", *timeout)
		os.Exit(2)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if err := run(ctx, cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		os.Exit(1)
	}
}
