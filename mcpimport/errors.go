package mcpimport

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agnara-go/agnara/execution"
)

// Code is an mcpimport error code: a closed set of stable, caller-safe
// names. Discovery returns them in an [*Error]; a failed call of an imported
// tool ends in a canonical [execution.Failure] whose details carry the code
// under "error_code".
type Code string

// Discovery error codes. Discovery either returns a complete catalog or
// fails with one or more of these; it never returns part of a catalog.
const (
	// BindingInvalid: a host declaration is incomplete or contradictory
	// (no local name, no title, neither or both of a scope validator and
	// NoScopeValidator, a duplicated local name), or the limits are out of
	// range.
	BindingInvalid Code = "mcp_binding_invalid"
	// ProtocolUnsupported: the monitor has not accepted a supported protocol
	// version, disagrees with the session's negotiated version, or is
	// closed.
	ProtocolUnsupported Code = "mcp_protocol_unsupported"
	// DiscoveryFailed: a tools/list request failed.
	DiscoveryFailed Code = "mcp_discovery_failed"
	// CatalogTooLarge: the remote catalog needs more pages, holds more
	// tools or more bytes than the limits allow.
	CatalogTooLarge Code = "mcp_catalog_too_large"
	// ToolMissing: a bound tool is not in the remote catalog.
	ToolMissing Code = "mcp_tool_missing"
	// ToolDuplicate: the remote catalog lists a tool name twice.
	ToolDuplicate Code = "mcp_tool_duplicate"
	// SchemaUnsupported: a selected tool's input or output schema is
	// outside the schema profile or larger than the schema limit.
	SchemaUnsupported Code = "mcp_schema_unsupported"
	// DescriptionTooLarge: a selected tool's description is larger than the
	// description limit.
	DescriptionTooLarge Code = "mcp_description_too_large"
)

// Call failure codes. Each maps to one canonical failure code (see
// [Code.Canonical]).
const (
	// InvalidArguments: the arguments are larger than the object limit, or
	// the remote server refused them (JSON-RPC -32602).
	InvalidArguments Code = "mcp_invalid_arguments"
	// ScopeDenied: the binding's scope validator refused the call.
	ScopeDenied Code = "mcp_scope_denied"
	// CatalogStale: the remote catalog changed after discovery; the host
	// must discover again.
	CatalogStale Code = "mcp_catalog_stale"
	// ConnectionClosed: the session is closed (or the host closed the
	// monitor).
	ConnectionClosed Code = "mcp_connection_closed"
	// Timeout: the remote server did not answer within the call timeout.
	Timeout Code = "mcp_timeout"
	// ProtocolError: the remote server answered with a JSON-RPC error, or
	// with a result this adapter cannot read.
	ProtocolError Code = "mcp_protocol_error"
	// TransportError: the request or its response was lost in transport.
	TransportError Code = "mcp_transport_error"
	// ToolError: the remote tool reported an error (isError).
	ToolError Code = "mcp_tool_error"
	// ResultInvalid: the result does not match the tool's output schema, or
	// lacks the structured content an output schema requires.
	ResultInvalid Code = "mcp_result_invalid"
	// ResultUnsupported: the result holds content other than text (images,
	// audio, resources, links), or asks for input.
	ResultUnsupported Code = "mcp_result_unsupported"
	// ResultTooLarge: the result is larger than the object limit or has
	// more content blocks than the content limit.
	ResultTooLarge Code = "mcp_result_too_large"
)

// callFailure is what a call failure code stands for: its canonical code
// and the fixed message a caller sees.
type callFailure struct {
	canonical execution.Code
	message   string
}

var callFailures = map[Code]callFailure{
	InvalidArguments:  {execution.InvalidInput, "the remote tool did not accept these arguments"},
	ScopeDenied:       {execution.Forbidden, "this call is outside the caller's scope"},
	CatalogStale:      {execution.Unavailable, "the remote tool catalog changed; the tool is unavailable until it is discovered again"},
	ConnectionClosed:  {execution.Unavailable, "the connection to the remote server is closed"},
	Timeout:           {execution.Timeout, "the remote tool did not answer in time"},
	ProtocolError:     {execution.Unavailable, "the remote server answered with a protocol error"},
	TransportError:    {execution.Unavailable, "the remote server could not be reached"},
	ToolError:         {execution.Unavailable, "the remote tool reported an error"},
	ResultInvalid:     {execution.Unavailable, "the remote tool's result does not match its declared output"},
	ResultUnsupported: {execution.Unavailable, "the remote tool returned content that cannot be passed on"},
	ResultTooLarge:    {execution.Unavailable, "the remote tool's result is too large"},

	// Write calls (write.go).
	ApprovalPending:        {execution.InteractionRequired, "this call needs an approval by an authorized approver; call again with the same arguments once it is approved"},
	ApprovalRejected:       {execution.Forbidden, "an approver rejected this call"},
	ApprovalInProgress:     {execution.Conflict, "this approved call is already being dispatched, or its outcome is unknown"},
	ApprovalBindingChanged: {execution.Conflict, "the tool changed after this call was approved; it was not dispatched"},
	ApprovalUnavailable:    {execution.Unavailable, "the approval store is unavailable; nothing was dispatched"},
}

// Canonical returns the canonical failure code a call failure with code c
// ends in: invalid_input, forbidden, timeout, or unavailable. Discovery codes
// have none and return execution.InternalFailure.
func (c Code) Canonical() execution.Code {
	if f, ok := callFailures[c]; ok {
		return f.canonical
	}
	return execution.InternalFailure
}

// failure returns the canonical failure of a call failure code: a fixed
// caller-safe message, and the code in the details under "error_code".
// Nothing the remote server said reaches it.
func failure(c Code) *execution.Failure {
	f := callFailures[c]
	return execution.Fail(f.canonical, f.message, map[string]any{"error_code": string(c)})
}

// Error is a discovery error. Its message is built from this package's own
// words plus the remote tool's name (quoted and truncated); the underlying
// cause, when there is one (a transport error, say), is available through
// errors.Unwrap for the host's own logs and is not part of the message.
type Error struct {
	// Code is the error's code.
	Code Code
	// Tool names the remote tool concerned, or is empty.
	Tool string

	msg   string
	cause error
}

// Error returns "mcpimport: <code>: [tool "<name>": ]<message>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mcpimport: ")
	b.WriteString(string(e.Code))
	if e.Tool != "" {
		fmt.Fprintf(&b, ": tool %s", quote(e.Tool))
	}
	if e.msg != "" {
		b.WriteString(": ")
		b.WriteString(e.msg)
	}
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// CodeOf returns the code of the first [*Error] err is or wraps, or of the
// canonical failure of a failed call ("error_code" in its details), or "".
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if f, ok := execution.AsFailure(err); ok {
		if s, ok := f.Details["error_code"].(string); ok {
			return Code(s)
		}
	}
	return ""
}

func newError(code Code, tool string, format string, args ...any) *Error {
	return &Error{Code: code, Tool: tool, msg: fmt.Sprintf(format, args...)}
}

// quote quotes a string that came from the remote server for a message,
// truncated to 64 bytes so that a hostile name cannot flood a log.
func quote(s string) string {
	const max = 64
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q...", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
