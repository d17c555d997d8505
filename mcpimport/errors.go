package mcpimport

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/execution"
)

// Discovery reasons: the [execution.Reason] of an [*Error], which
// [execution.ReasonOf] reads (as it reads every other failure's reason).
// Connecting or discovery either succeeds completely or fails with one or
// more of these; discovery never returns part of a catalog, except that
// with [Options.AllowAbsent] a bound tool with [ToolMissing],
// [SchemaUnsupported], [DescriptionTooLarge] or [UIUnsupported] is left
// out alone (see [Catalog.Absent]).
const (
	// BindingInvalid: a host declaration is incomplete or contradictory
	// (no local name, no title, neither or both of a scope validator and
	// NoScopeValidator, a duplicated local name), or the limits are out of
	// range.
	BindingInvalid execution.Reason = "mcp_binding_invalid"
	// ConnectFailed: [Connect]'s handshake failed: the transport could not
	// reach the remote server, or the server refused or did not answer
	// initialize. The transport's error is the [*Error]'s cause.
	ConnectFailed execution.Reason = "mcp_connect_failed"
	// ProtocolUnsupported: the monitor has not accepted a supported protocol
	// version, disagrees with the session's negotiated version, or is
	// closed.
	ProtocolUnsupported execution.Reason = "mcp_protocol_unsupported"
	// DiscoveryFailed: a tools/list request failed.
	DiscoveryFailed execution.Reason = "mcp_discovery_failed"
	// CatalogTooLarge: the remote catalog needs more pages, holds more
	// tools or more bytes than the limits allow.
	CatalogTooLarge execution.Reason = "mcp_catalog_too_large"
	// ToolMissing: a bound tool is not in the remote catalog.
	ToolMissing execution.Reason = "mcp_tool_missing"
	// ToolDuplicate: the remote catalog lists a tool name twice.
	ToolDuplicate execution.Reason = "mcp_tool_duplicate"
	// SchemaUnsupported: a selected tool's input or output schema is
	// outside the schema profile or larger than the schema limit.
	SchemaUnsupported execution.Reason = "mcp_schema_unsupported"
	// DescriptionTooLarge: a selected tool's description is larger than the
	// description limit.
	DescriptionTooLarge execution.Reason = "mcp_description_too_large"
	// UIUnsupported: a selected tool links an MCP App view ([UI]) that
	// cannot be imported: its URI is not a ui:// URI of the shape [UI.URI]
	// documents, the server offers no resources or has none at that URI,
	// or the resource is not one text content of [UIMIMEType] within
	// [Limits.UIBytes] with a policy of origins ([UICSP]). The tool is
	// never imported without its view.
	UIUnsupported execution.Reason = "mcp_ui_unsupported"
)

// Call failure reasons: the [execution.Reason] of the canonical failure a
// call of an imported tool ends in. Each comes with one canonical code (see
// [Canonical]), given in parentheses.
const (
	// ReasonInvalidArguments: the arguments are larger than the object
	// limit, are not I-JSON, or the remote server refused them (JSON-RPC
	// -32602) (invalid_input).
	ReasonInvalidArguments execution.Reason = "mcp_invalid_arguments"
	// ReasonScopeDenied: the binding's scope validator refused the call
	// (forbidden).
	ReasonScopeDenied execution.Reason = "mcp_scope_denied"
	// ReasonCatalogStale: the remote catalog changed after discovery; the
	// host must discover again (unavailable).
	ReasonCatalogStale execution.Reason = "mcp_catalog_stale"
	// ReasonConnectionClosed: the session is closed (or the host closed the
	// monitor) (unavailable).
	ReasonConnectionClosed execution.Reason = "mcp_connection_closed"
	// ReasonTimeout: the remote server did not answer within the call
	// timeout (timeout).
	ReasonTimeout execution.Reason = "mcp_timeout"
	// ReasonProtocolError: the remote server answered with a JSON-RPC
	// error, or with a result this adapter cannot read (unavailable).
	ReasonProtocolError execution.Reason = "mcp_protocol_error"
	// ReasonTransportError: the request or its response was lost in
	// transport (unavailable).
	ReasonTransportError execution.Reason = "mcp_transport_error"
	// ReasonToolError: the remote tool reported an error (isError)
	// (unavailable).
	ReasonToolError execution.Reason = "mcp_tool_error"
	// ReasonResultInvalid: the result does not match the tool's output
	// schema, lacks the structured content an output schema requires, or
	// holds a content block that is not what it says (a MIME type that is
	// not one, an image that is not image/*, a URI that is not absolute,
	// annotations outside the protocol's ranges) (unavailable).
	ReasonResultInvalid execution.Reason = "mcp_result_invalid"
	// ReasonResultUnsupported: the result holds a kind of content block
	// this adapter does not pass on (unavailable). Text, images, audio,
	// resource links and embedded resources all pass.
	ReasonResultUnsupported execution.Reason = "mcp_result_unsupported"
	// ReasonResultTooLarge: a content block is larger than the block
	// limit, the whole result larger than the result limit, its structured
	// content larger than the object limit, or it has more content blocks
	// than the content limit (unavailable).
	ReasonResultTooLarge execution.Reason = "mcp_result_too_large"
	// ReasonTaskInputRequired: the remote tool's task asked for input
	// (status input_required) that is not relayed to the caller (roots, a
	// URL elicitation, non-text sampling, a form outside the subset); the
	// task was cancelled (unavailable). Questions that pass are the
	// caller's (docs/import.md, "Questions").
	ReasonTaskInputRequired execution.Reason = "mcp_task_input_required"
	// ReasonQuestionRefused: the remote tool asked its caller a question
	// that is not relayed — a URL elicitation, a non-text sampling
	// message, one over the limits or outside the elicitation form subset,
	// more than 16 questions in one round of a call, or a question that came on a
	// handshake-era session while several calls were out on it — and the
	// remote tool gave up (unavailable). docs/import.md, "Questions".
	ReasonQuestionRefused execution.Reason = "mcp_question_refused"
	// ReasonQuestionDeclined: the caller declined (or cancelled) the
	// question a remote write tool asked; the write was not sent again
	// and its approval is finished, effect unknown: the call that asked
	// was sent (forbidden). ADR 41, ADR 62.
	ReasonQuestionDeclined execution.Reason = "mcp_question_declined"
	// ReasonTaskCancelled: the remote server cancelled the task itself
	// (unavailable).
	ReasonTaskCancelled execution.Reason = "mcp_task_cancelled"
	// ReasonTaskLost: the remote server no longer knows the task (tasks/get
	// answered -32602: it expired, or the server forgot it) (unavailable).
	ReasonTaskLost execution.Reason = "mcp_task_lost"
)

// callFailure is what a call failure reason stands for: its canonical code
// and the fixed message a caller sees.
type callFailure struct {
	canonical execution.Code
	message   string
}

var callFailures = map[execution.Reason]callFailure{
	ReasonInvalidArguments:  {execution.InvalidInput, "the remote tool did not accept these arguments"},
	ReasonScopeDenied:       {execution.Forbidden, "this call is outside the caller's scope"},
	ReasonCatalogStale:      {execution.Unavailable, "the remote tool catalog changed; the tool is unavailable until it is discovered again"},
	ReasonConnectionClosed:  {execution.Unavailable, "the connection to the remote server is closed"},
	ReasonTimeout:           {execution.Timeout, "the remote tool did not answer in time"},
	ReasonProtocolError:     {execution.Unavailable, "the remote server answered with a protocol error"},
	ReasonTransportError:    {execution.Unavailable, "the remote server could not be reached"},
	ReasonToolError:         {execution.Unavailable, "the remote tool reported an error"},
	ReasonResultInvalid:     {execution.Unavailable, "the remote tool's result does not match its declared output"},
	ReasonResultUnsupported: {execution.Unavailable, "the remote tool returned content that cannot be passed on"},
	ReasonResultTooLarge:    {execution.Unavailable, "the remote tool's result is too large"},
	ReasonTaskInputRequired: {execution.Unavailable, "the remote tool asked for input that cannot be relayed; its task was cancelled"},
	ReasonQuestionRefused:   {execution.Unavailable, "the remote tool asked a question that cannot be relayed to the caller"},
	ReasonQuestionDeclined:  {execution.Forbidden, "the caller declined the remote tool's question; the call was not sent again"},
	ReasonTaskCancelled:     {execution.Unavailable, "the remote server cancelled the tool's task"},
	ReasonTaskLost:          {execution.Unavailable, "the remote server no longer knows the tool's task"},

	// Requests made for a caller with the caller's own credential
	// (credential.go).
	ReasonCredentialRefused:     {execution.Forbidden, credentialRefusedMessage},
	ReasonCredentialUnavailable: {execution.Unavailable, credentialUnavailableMessage},

	// Reads of imported resources (features.go).
	ReasonResourceNotFound: {execution.NotFound, "the remote server has no such resource"},

	// Write calls (write.go): the approval's state.
	approval.ReasonPending:        {execution.InteractionRequired, "this call needs an approval by an authorized approver; call again with the same arguments once it is approved"},
	approval.ReasonRejected:       {execution.Forbidden, "an approver rejected this call"},
	approval.ReasonInProgress:     {execution.Conflict, "this approved call is already being dispatched, or its outcome is unknown"},
	approval.ReasonBindingChanged: {execution.Conflict, "the tool changed after this call was approved; it was not dispatched"},
	approval.ReasonUnavailable:    {execution.Unavailable, "the approval store is unavailable; nothing was dispatched"},
}

// Canonical returns the canonical failure code a call failure with reason r
// ends in: invalid_input, forbidden, timeout, conflict,
// interaction_required, not_found (a read, [ReasonResourceNotFound]) or
// unavailable. A reason this package does not
// produce returns execution.InternalFailure.
func Canonical(r execution.Reason) execution.Code {
	if f, ok := callFailures[r]; ok {
		return f.canonical
	}
	return execution.InternalFailure
}

// failure returns the canonical failure of a call failure reason: its
// canonical code, a fixed caller-safe message and the reason. Nothing the
// remote server said reaches it.
func failure(r execution.Reason) *execution.Failure {
	f := callFailures[r]
	return execution.Fail(f.canonical, f.message, nil).WithReason(r)
}

// Error is a connection or discovery error. Its message is built from this
// package's own words plus the remote tool's name (quoted and truncated);
// the underlying cause, when there is one (a transport error, say), is
// available through errors.Unwrap for the host's own logs and is not part
// of the message: it may quote the remote server.
type Error struct {
	// Reason is one of the discovery reasons, such as [SchemaUnsupported];
	// [execution.ReasonOf] reads it through any wrapping.
	Reason execution.Reason
	// Tool names the remote tool concerned (or, for [DiscoverFeatures],
	// the remote resource URI, URI template or prompt name), or is empty.
	Tool string

	msg   string
	cause error
	what  string // what Tool names, when not a tool: "resource", "prompt"...
}

// Error returns "mcpimport: <reason>: [tool "<name>": ]<message>" (for
// [DiscoverFeatures], "resource", "resource template" or "prompt" instead
// of "tool").
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mcpimport: ")
	b.WriteString(string(e.Reason))
	if e.Tool != "" {
		what := e.what
		if what == "" {
			what = "tool"
		}
		fmt.Fprintf(&b, ": %s %s", what, quote(e.Tool))
	}
	if e.msg != "" {
		b.WriteString(": ")
		b.WriteString(e.msg)
	}
	return b.String()
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// FailureReason returns e.Reason, for [execution.ReasonOf].
func (e *Error) FailureReason() execution.Reason { return e.Reason }

func newError(reason execution.Reason, tool string, format string, args ...any) *Error {
	return &Error{Reason: reason, Tool: tool, msg: fmt.Sprintf(format, args...)}
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
