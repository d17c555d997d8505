// Package wire reads and writes the MCP streamable HTTP transport's bytes
// exactly as the MCP Go SDK reads and writes them, for the requests the
// HTTP edge of package mcpexpose answers itself: the strict reading of a
// body (Call.Read, the meta readers, PlainID), the checks the SDK makes of
// a request's headers (ModernHeaders, LegacyHeaders, Rebound, Accepts),
// origins (ParseOrigin), and the encoding and framing of answers (Encoder,
// WriteError). It holds no state and knows no tool: what is answered is
// mcpexpose's; how it looks on the wire is this package's, proved equal to
// the SDK's by mcpexpose's differential tests.
//
// Every reader here reports false for anything it does not read exactly
// as the SDK's decoder would; the edge then leaves the request to the SDK.
package wire
