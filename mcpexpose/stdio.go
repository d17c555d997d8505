package mcpexpose

import (
	"context"

	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunStdio serves snap over standard input and output, for desktop clients
// that start the server as a subprocess, until ctx is done or the client
// disconnects. There are no tokens on stdio: every request acts as local,
// the principal of the user who started the process (policy.Anonymous()
// sees only tools that declare no scopes). Nothing but the protocol may be
// written to standard output while it runs.
func RunStdio(ctx context.Context, snap *Snapshot, local policy.Principal, opts *ServerOptions) error {
	s, err := newServerFor(snap, opts, true, &local)
	if err != nil {
		return err
	}
	return s.mcp.Run(ctx, &mcp.StdioTransport{})
}
