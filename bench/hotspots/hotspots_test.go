// Package hotspots holds minimal benchmarks that reproduce the official Go
// SDK's per-call costs, without agnara-go, for an upstream report (see
// README.md in this directory).
package hotspots

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// schemaWith returns an object schema of n string properties.
func schemaWith(n int) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"string","description":"property number %d"}`, i, i)
	}
	b.WriteString(`}}`)
	return json.RawMessage(b.String())
}

// BenchmarkSchemaSizePerCall calls a raw-registered tool (no validation, a
// fixed result) whose input schema has 1 or 30 properties, at both eras,
// over in-memory transports. Arguments are the same small object: any cost
// that grows with the schema is the SDK re-reading the schema per call
// (at 2026-07-28 it re-serializes and re-parses it to look for
// x-mcp-header annotations).
func BenchmarkSchemaSizePerCall(b *testing.B) {
	for _, era := range []struct{ name, version string }{{"modern", ""}, {"legacy", "2025-11-25"}} {
		for _, props := range []int{1, 30} {
			b.Run(fmt.Sprintf("%s/props=%d", era.name, props), func(b *testing.B) {
				s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
				s.AddTool(&mcp.Tool{Name: "t", InputSchema: schemaWith(props)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
				})
				ctx := context.Background()
				ct, st := mcp.NewInMemoryTransports()
				ss, err := s.Connect(ctx, st, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer ss.Close()
				cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: era.version})
				if err != nil {
					b.Fatal(err)
				}
				defer cs.Close()
				params := &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"p0": "x"}}
				b.ReportAllocs()
				for b.Loop() {
					if _, err := cs.CallTool(ctx, params); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkPing measures the SDK's floor per request: a ping carries no
// tool, no schema and no result, so its bytes allocated per call are the
// JSON-RPC machinery alone (the SDK decodes each value with a fresh
// streaming decoder and its ≥32 KiB read buffer).
func BenchmarkPing(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := cs.Ping(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}
