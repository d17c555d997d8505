package mcpexpose

import (
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProjectResult converts a canonical outcome into a tool result. It is the
// only place outcomes become MCP results:
//
//   - Success with a value: structuredContent {"result": value}, and the same
//     JSON (compact, object keys sorted) in one text block; a nil value stays
//     null inside the envelope.
//   - Success with content: the content blocks, no structuredContent.
//   - Failure: isError true and one text block holding the JSON object
//     {"code", "reason", "message", "details"} (reason omitted when the
//     failure has none, details when empty). An internal failure carries
//     only its code and fixed message.
//
// A value that cannot be encoded as JSON (non-finite numbers, cycles,
// unsupported types), holds a map whose keys are not of a string kind, or
// nests objects and arrays more than 128 levels deep is an error whose
// message reveals nothing about the value; the server turns it into
// internal_failure.
func ProjectResult(out execution.Outcome) (*mcp.CallToolResult, error) {
	return projection.Project(out)
}
