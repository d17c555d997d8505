package gateway

import (
	"errors"
	"strings"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
)

// permanentReasons are the reasons an import fails for that a new session
// with the same upstream cannot mend: what the upstream speaks and offers,
// and what the config binds, are the same the next time. An upstream
// refused for one of them is marked failed, once, and not retried until an
// operator reloads the gateway ([Gateway.Reload]). Every other reason (a
// refused connection, a timeout, an ended session or process, a failed
// tools/list) is retried with backoff.
var permanentReasons = map[execution.Reason]bool{
	mcpimport.ProtocolUnsupported: true,
	mcpimport.BindingInvalid:      true,
	mcpimport.SchemaUnsupported:   true, // of a strict binding; an optional one is withdrawn alone
	mcpimport.DescriptionTooLarge: true, // likewise
	mcpimport.UIUnsupported:       true, // likewise
	mcpimport.ToolMissing:         true, // likewise
	mcpimport.ToolDuplicate:       true,
	mcpimport.CatalogTooLarge:     true,
}

// sdkVersionRefusal is how the SDK's client (go-sdk v1.8.0, mcp/client.go)
// words its refusal of an initialize answer naming a protocol revision it
// does not speak; its error type is unexported, and mcpimport.Connect
// reports it as mcpimport.ConnectFailed with that error as the cause.
// TestUpstreamOfAnUnsupportedRevisionFailsOnce holds this to the SDK.
const sdkVersionRefusal = "unsupported protocol version"

// classify returns the reason of err, which ended an attempt to import an
// upstream ([downReason]), and whether it is permanent. A handshake the
// SDK refused for the revision the upstream named reads as
// mcpimport.ProtocolUnsupported, which is what it is.
func classify(err error) (execution.Reason, bool) {
	reason := downReason(err)
	if reason == mcpimport.ConnectFailed && refusedRevision(err) {
		reason = mcpimport.ProtocolUnsupported
	}
	return reason, permanentReasons[reason]
}

// refusedRevision reports whether err is mcpimport's failed handshake
// caused by the SDK's refusal of the negotiated revision.
func refusedRevision(err error) bool {
	var e *mcpimport.Error
	if !errors.As(err, &e) || e.Reason != mcpimport.ConnectFailed {
		return false
	}
	cause := e.Unwrap()
	return cause != nil && strings.HasPrefix(cause.Error(), sdkVersionRefusal)
}
