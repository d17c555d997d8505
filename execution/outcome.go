package execution

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agnara-go/agnara/agnara"
)

// Code is the closed set of canonical failure codes. Every failure a caller
// sees carries exactly one of them, so a caller (often a model) can decide
// what to do next without parsing messages.
type Code uint8

// The canonical failure codes. Their wire names are the snake_case strings
// returned by [Code.String].
const (
	// InternalFailure: something went wrong that the caller cannot fix. The
	// message is fixed and safe; the cause is in the server log. It is the
	// zero Code, so an unknown code degrades to it.
	InternalFailure Code = iota
	// InvalidInput: the arguments do not match the input schema; details list
	// every violation.
	InvalidInput
	// Forbidden: the caller may not do this.
	Forbidden
	// NotFound: the thing the caller named does not exist.
	NotFound
	// Conflict: the request conflicts with the current state.
	Conflict
	// Timeout: the invocation ran past its deadline.
	Timeout
	// InteractionRequired: the invocation needs more from the caller (a
	// confirmation or other input) before it may go on.
	InteractionRequired
	// Unavailable: a dependency is temporarily unavailable; retrying later
	// may succeed.
	Unavailable

	numCodes
)

var codeNames = [numCodes]string{
	InternalFailure:     "internal_failure",
	InvalidInput:        "invalid_input",
	Forbidden:           "forbidden",
	NotFound:            "not_found",
	Conflict:            "conflict",
	Timeout:             "timeout",
	InteractionRequired: "interaction_required",
	Unavailable:         "unavailable",
}

// String returns the code's wire name, such as "invalid_input". An unknown
// code reads as "internal_failure".
func (c Code) String() string {
	if c >= numCodes {
		return codeNames[InternalFailure]
	}
	return codeNames[c]
}

// MarshalText encodes the code as its wire name.
func (c Code) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText decodes a wire name. Unknown names are an error.
func (c *Code) UnmarshalText(b []byte) error {
	for i, name := range codeNames {
		if name == string(b) {
			*c = Code(i)
			return nil
		}
	}
	return fmt.Errorf("execution: unknown failure code %q", b)
}

// internalMessage is the only message a caller ever sees for an internal
// failure.
const internalMessage = "internal failure"

// Outcome is the result of one invocation: a [Success], an
// [*InputRequired] or a [*Failure]. The set is closed; switch on the type,
// or read [LabelOf] for a name to log or measure.
type Outcome interface {
	isOutcome()
}

var (
	_ Outcome = Success{}
	_ Outcome = (*InputRequired)(nil)
	_ Outcome = (*Failure)(nil)
)

// InputRequired is the outcome of an invocation that asked the caller for
// input (a confirmation, a form, a model completion, its roots) and cannot
// finish without the answers. The adapter asks the questions (for MCP, as
// an input-required result or server-to-client requests) and invokes the
// plan again with the answers in [Invocation.Answers].
type InputRequired struct {
	// Requests are the questions, keyed as the handler (or the declared
	// confirmation, under [ConfirmKey]) asked them. Never empty.
	Requests map[string]InputRequest
	// RoundState is what the handler kept for the next round
	// ([Context.SetRoundState]), or nil. The adapter carries it out of the
	// caller's reach and hands it back in [Invocation.RoundState].
	RoundState []byte
}

func (*InputRequired) isOutcome() {}

// LabelOf names an outcome for logs, traces and metrics:
// [agnara.LabelOK] for a success, [agnara.LabelInputRequired], or the
// failure's code (such as "invalid_input"). A nil outcome is
// [agnara.LabelCanceled]: the caller went away before there was one.
func LabelOf(out Outcome) agnara.Label {
	switch o := out.(type) {
	case Success:
		return agnara.LabelOK
	case *InputRequired:
		return agnara.LabelInputRequired
	case *Failure:
		return agnara.Label(o.Code.String())
	}
	return agnara.LabelCanceled
}

// Success is the outcome of an invocation whose handler returned without
// error.
type Success struct {
	// Value is what the handler returned (its Out value). It is nil for a
	// handler that returns only an error, and for content-only results.
	Value any
	// Content holds rich content blocks when the handler returned
	// []Content or a [Result] (never nil for a Result).
	Content []Content
	// Structured is the structured value of a [Result], as JSON, to be
	// published as it is (no envelope), or nil.
	Structured json.RawMessage
}

func (Success) isOutcome() {}

// Reason names what went wrong, as a stable snake_case name: the one
// vocabulary of failures a host program, a gateway or an operator branches
// on, whichever package made the error. [ReasonOf] reads it from any error.
//
// On a [Failure], a Reason names a finer condition within the [Code]: why an
// imported tool's call failed ("mcp_timeout", "mcp_catalog_stale",
// "mcp_connection_closed", ...; see package mcpimport), or which state an
// approval is in ("approval_pending", "approval_in_progress", ...; see
// package approval). The Code says what a caller can do (retry, fix the
// input, ask for an approval); the Reason says precisely what happened, for
// callers and operators who branch on it. It travels on the wire beside the
// code (mcpexpose projects it as "reason"). Errors that are no Failure
// answer a Reason too: the discovery errors of package mcpimport
// ("mcp_schema_unsupported", ...) and the store errors of package approval
// ("approval_not_found", ...).
//
// A Reason is either one of the eight code names (what [ReasonOf] answers
// for a failure without a finer reason) or a name prefixed by its domain
// ("mcp_", "approval_", "gateway_"), defined as a constant by the package
// that produces it; each such package documents its set and the Code each
// reason comes with. The two kinds never collide. The zero Reason means
// none: on a Failure the Code says all there is; from [ReasonOf], the error
// is no failure of this vocabulary. A Reason is a name, never a message:
// nothing a remote party said belongs in it.
type Reason string

// Failure is a canonical failure: a code from the closed set, an optional
// finer [Reason], a caller-safe message and optional details. It is both an
// [Outcome] and an error, so a handler reports a deliberate failure by
// returning one (see [Fail]).
//
// Message and Details are shown to the caller as written: never put secrets,
// internal error text or stack traces in them. Details must be
// JSON-serializable; a condition callers branch on belongs in Reason, not in
// Details.
type Failure struct {
	Code Code
	// Reason is the finer condition, or "". An internal failure has none.
	Reason  Reason
	Message string
	Details map[string]any
}

func (*Failure) isOutcome() {}

// Fail returns a canonical failure. Handlers and policies return it as an
// error to end an invocation with that code:
//
//	return User{}, execution.Fail(execution.NotFound, "no such user", nil)
//
// details may be nil. A failure with code InternalFailure always carries the
// fixed safe message, whatever msg says.
func Fail(code Code, msg string, details map[string]any) *Failure {
	if code >= numCodes {
		code = InternalFailure
	}
	if code == InternalFailure {
		msg, details = internalMessage, nil
	}
	return &Failure{Code: code, Message: msg, Details: details}
}

// WithReason returns a copy of f with reason r; f is not changed (the copy
// shares f's Details). An internal failure stays without a reason: it says
// nothing beyond its fixed message.
func (f *Failure) WithReason(r Reason) *Failure {
	c := *f
	if c.Code != InternalFailure {
		c.Reason = r
	}
	return &c
}

// Error returns "code: message", or "code (reason): message" when the
// failure has a reason.
func (f *Failure) Error() string {
	if f.Reason != "" {
		return f.Code.String() + " (" + string(f.Reason) + "): " + f.Message
	}
	return f.Code.String() + ": " + f.Message
}

// FailureReason returns f's Reason or, when it has none, its Code's wire
// name ("not_found", "internal_failure"): the Code then says all there is.
// It is what [ReasonOf] answers for a failure; f.Reason itself stays "" on
// the wire.
func (f *Failure) FailureReason() Reason {
	if f.Reason != "" {
		return f.Reason
	}
	return Reason(f.Code.String())
}

// ReasonOf returns the [Reason] of the failure err is or wraps: one
// accessor for every failure a host program or a gateway sees, whichever
// package made it. It answers for the first error in err's chain (as
// [errors.As] walks it, through fmt.Errorf's %w and [errors.Join]) that has
// the method
//
//	FailureReason() Reason
//
// and these do:
//   - a [*Failure]: its Reason, or its Code's wire name when it has none
//     ([Failure.FailureReason]);
//   - a discovery error of package mcpimport: its reason, such as
//     "mcp_schema_unsupported" or "mcp_protocol_unsupported";
//   - an error of an approval store (package approval): each of its
//     sentinel errors answers its own reason, such as "approval_not_found",
//     "approval_not_pending" or "approval_self_decision", and a failure of
//     the database "approval_unavailable".
//
// ReasonOf returns "" for nil and for an error no package classified: a
// context's error, an I/O error from opening a file. It reads; it replaces
// nothing: errors.Is and errors.As work on the same errors as before. An
// error that joins several (discovery reports every problem at once)
// answers the reason of the first; walk the others with errors.As.
func ReasonOf(err error) Reason {
	var r interface{ FailureReason() Reason }
	if errors.As(err, &r) {
		return r.FailureReason()
	}
	return ""
}

// internal returns the redacted failure that stands for an unexpected error.
func internal() *Failure {
	return &Failure{Code: InternalFailure, Message: internalMessage}
}
