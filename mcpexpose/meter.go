package mcpexpose

import (
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Meter counts what a server and its HTTP handler decide, for metrics
// (package prommcp provides one for Prometheus). It is set in
// [ServerOptions.Meter]. Where the [agnara.Observer] follows requests for
// traces, a Meter is told the facts a trace does not carry: each call's
// failure reason, and the refusals made before any call runs.
//
// Methods are called synchronously on the request's goroutine and must be
// fast and safe for concurrent use. A nil Meter costs nothing: no call, no
// clock read, no allocation.
//
// What a server holds open (sessions, streams, against their caps) is not
// counted through a Meter: it is read when a scrape asks ([Handler.Load]).
type Meter interface {
	// Call is told of every decided tools/call: each call an [AuditSink]
	// would record, the input-required rounds of a confirmation and the
	// calls refused by their rate limit (reason
	// [execution.ReasonRateLimited]) among them.
	Call(c CallMetric)
	// Count is told of one event that refused a request before it ran.
	// method is the refused request's method ("tools/call",
	// "tasks/get", "initialize", "subscriptions/listen").
	Count(e MeterEvent, method string)
}

// CallMetric is what a [Meter] learns of one decided tools/call. It holds
// no principal, argument or message: nothing a metric's label must not
// carry.
type CallMetric struct {
	// Tool is the tool's wire name, one of the snapshot's (a bounded set).
	Tool string
	// Outcome is how the call ended, as [AuditRecord.Outcome] names it.
	Outcome agnara.Label
	// Reason is the failure's finer reason, or "".
	Reason execution.Reason
	// Duration is how long the server took to decide the call, from the
	// routed request to its answer (a task: to the task's creation).
	Duration time.Duration
}

// MeterEvent is a refusal a [Meter] counts.
type MeterEvent uint8

const (
	// EventStateRefused: a tools/call's requestState did not open (forged,
	// expired, used already, for another server) or was minted for
	// another version of the tool; the caller got a JSON-RPC error.
	EventStateRefused MeterEvent = iota + 1
	// EventStateStoreError: the replay store could not say whether a
	// requestState was used already; the call was refused to fail closed.
	EventStateStoreError
	// EventRateLimited: a request that is not a tools/call (tasks/get,
	// tasks/update, tasks/cancel, completion/complete) was refused by
	// ServerOptions.RateLimit. A refused tools/call is a [Meter.Call]
	// with reason [execution.ReasonRateLimited].
	EventRateLimited
	// EventSessionRefused: a new handshake-era session was refused at
	// Limits.MaxSessions or MaxSessionsPerPrincipal.
	EventSessionRefused
	// EventStreamRefused: a subscriptions/listen stream was refused at
	// Limits.MaxStreams or MaxStreamsPerPrincipal.
	EventStreamRefused
)

var meterEventNames = [...]string{
	EventStateRefused:    "state_refused",
	EventStateStoreError: "state_store_error",
	EventRateLimited:     "rate_limited",
	EventSessionRefused:  "session_refused",
	EventStreamRefused:   "stream_refused",
}

// String returns the event's name: "state_refused", "state_store_error",
// "rate_limited", "session_refused" or "stream_refused".
func (e MeterEvent) String() string {
	if e > 0 && int(e) < len(meterEventNames) {
		return meterEventNames[e]
	}
	return "MeterEvent(?)"
}

// meterCall tells s's meter of a decided tools/call of the tool named
// name, started at start, that ended as label, answered with res or with
// err. Nothing is computed without a meter.
func (s *server) meterCall(name string, start time.Time, label agnara.Label, res *mcp.CallToolResult, err error) {
	m := s.opts.Meter
	if m == nil {
		return
	}
	switch err {
	case errBadState, errToolChanged:
		m.Count(EventStateRefused, "tools/call")
	case errStateUnavail:
		m.Count(EventStateStoreError, "tools/call")
	}
	if err != nil && label != agnara.LabelCanceled {
		label = agnara.LabelError
	}
	c := CallMetric{Tool: name, Outcome: label, Duration: time.Since(start)}
	if err == nil && res != nil && res.IsError {
		c.Reason, _ = failureFacts(res)
	}
	m.Call(c)
}
