package mcpexpose

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RunStdio serves snap over standard input and output, for desktop clients
// that start the server as a subprocess, until ctx is done or the client
// disconnects. Every caller is anonymous: there are no tokens on stdio.
func RunStdio(ctx context.Context, snap *Snapshot, opts *ServerOptions) error {
	return NewServer(snap, opts).Run(ctx, &mcp.StdioTransport{})
}
