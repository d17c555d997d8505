// Command stdio serves the users example's capabilities over standard input
// and output, for desktop MCP clients that start their servers as
// subprocesses. There are no tokens on stdio: the process acts for the one
// local user who started it, as a fixed principal whose scopes come from
// -scopes. Logs go to standard error, never to standard output (which
// carries the protocol).
//
//	go build -o users-stdio ./examples/stdio
//
// See README.md for a desktop-client configuration.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/examples/internal/userservice"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
)

func main() {
	scopes := flag.String("scopes", "users:read", "scopes of the local user, space separated")
	flag.Parse()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, strings.Fields(*scopes), logger); err != nil {
		fmt.Fprintln(os.Stderr, "users-stdio:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, scopes []string, logger *slog.Logger) error {
	app, caps := userservice.NewApp(userservice.NewStore(), &agnara.Options{Version: "0.1.0", Logger: logger})
	defer app.Close()
	exp := mcpexpose.New(app)
	for _, c := range []*agnara.Capability{caps.Get, caps.List, caps.Create, caps.Delete} {
		exp.Tool(c, nil)
	}
	snap, err := exp.Compile()
	if err != nil {
		return err
	}
	local := policy.NewPrincipal("local-user", scopes)
	return mcpexpose.RunStdio(ctx, snap, local, &mcpexpose.ServerOptions{Logger: logger})
}
