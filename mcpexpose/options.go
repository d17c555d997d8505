package mcpexpose

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
)

// ServerOptions configures an MCP server built from a snapshot, on any
// transport: who callers are (Identity, DevelopmentPrincipal), how calls
// run (Timeout, RateLimit, Limiter, ForbiddenResult, ForwardLogs), the
// state of calls across rounds (StateKeys, StateReplay, StateTTL,
// Audience), what is recorded (Logger, Audit, Meter), whether the catalog may
// change (Swappable) and how tasks run (Tasks). A nil *ServerOptions, a
// nil Tasks and every zero field mean the documented default.
type ServerOptions struct {
	// Identity maps a caller's verified token facts to a principal.
	// Default: [SubjectPrincipal]. Callers without a token are anonymous
	// (or DevelopmentPrincipal) and never reach the mapper.
	Identity IdentityMapper
	// Instructions are sent to clients with the server's capabilities.
	Instructions string
	// Timeout, when positive, bounds the invocation of every tools/call
	// (policies, dependencies, handler); when it passes, the caller
	// receives a "timeout" failure. A capability's own shorter Timeout
	// still applies. Identity mapping and request-state verification happen
	// before the invocation and are not covered: they must bound
	// themselves (or rely on the client's cancellation).
	Timeout time.Duration
	// RateLimit is the rate limit of every tool whose capability declares
	// none (CapabilityOptions.RateLimit wins), counted per tool and caller.
	// A call over it gets the canonical "unavailable" failure with reason
	// "rate_limited" and details.retry_after_ms. It also limits tasks/get,
	// tasks/update, tasks/cancel and completion/complete, each method
	// counted per caller apart from the calls (a JSON-RPC error carrying
	// the same failure). Default: no limit.
	RateLimit agnara.RateLimit
	// Limiter counts calls against rate limits. Default: in this process,
	// shared by every server built from one snapshot; instances behind a
	// load balancer share a Redis one (package execution/redislimit, see
	// docs/scaling.md).
	Limiter execution.Limiter
	// ForwardLogs lets records that handlers log through the execution
	// context's logger reach clients as MCP log messages, at the level each
	// client asked for (nothing to a 2026-07-28 request that did not ask).
	// It also advertises the logging capability.
	ForwardLogs bool
	// DevelopmentPrincipal, when set, is who every caller without a token
	// acts as, instead of the anonymous principal. It exists for trying an
	// application locally without an authorization server; never set it in
	// production. The server logs a warning naming the principal when it is
	// built. In development mode a tools/call by this principal of a tool
	// it may not see (it lacks one of the tool's scopes) answers a -32602
	// error naming the scopes the tool requires, where every other caller,
	// and every caller of a server without a DevelopmentPrincipal, gets
	// "unknown tool" as for a tool that does not exist. Over stdio the
	// local principal acts instead, and this is ignored.
	DevelopmentPrincipal *policy.Principal
	// ForbiddenResult makes a tools/call for a tool whose scopes the caller
	// lacks answer the canonical "forbidden" tool result (from the plan's
	// scope guard, naming the required scopes) instead of -32602 "unknown
	// tool", and, over HTTP with tokens, instead of the 403
	// insufficient_scope challenge. tools/list still hides such tools.
	ForbiddenResult bool
	// StateKeys seals the requestState of input-required results (see
	// package requeststate). Default: a key generated when the server is
	// built, so state does not survive a restart and is not accepted by
	// another instance: give every instance the same ring to share it.
	StateKeys *requeststate.KeyRing
	// StateReplay makes each requestState single-use. Default: in memory,
	// per process; instances sharing StateKeys must share it too.
	StateReplay requeststate.ReplayStore
	// StateTTL bounds how long a client may take to answer. Default: 5
	// minutes (that of requeststate.Options.TTL); at most
	// requeststate.MaxTTL.
	StateTTL time.Duration
	// Audience identifies this server in sealed state, so that state minted
	// for another server is refused. Default: the resource URL when the
	// handler is an OAuth resource, else the application name.
	Audience string
	// Logger receives the server's own records (refused identities,
	// projection failures). Default: the application's logger.
	Logger *slog.Logger
	// Audit, when set, receives one record per decided tools/call (see
	// [AuditSink]; [NewSlogAudit] writes them through a logger). Default:
	// none, and nothing is computed for it.
	Audit AuditSink
	// Meter, when set, is told of every decided tools/call and of the
	// refusals made before a request runs (see [Meter]; package prommcp
	// serves them to Prometheus). Default: none, and nothing is measured
	// for it.
	Meter Meter
	// Swappable lets [Handler.Swap] replace the snapshot while clients stay
	// connected, and advertises tools.listChanged: handshake-era sessions
	// and 2026-07-28 subscriptions/listen streams are told when their
	// caller's tool list changes. Without it the list never changes and
	// none of this is offered (subscriptions/listen answers -32601).
	// [NewLive] implies it; [NewDiscoveryServer] ignores it.
	Swappable bool
	// Tasks configures the tasks of tools declared with ToolOptions.Task
	// (see docs/tasks.md): the server advertises the tasks extension when
	// the snapshot it is built with has such a tool. Default: nil, the
	// defaults of [TaskOptions].
	Tasks *TaskOptions
}

// checkServerOptions reports the first option that is out of range.
func checkServerOptions(o *ServerOptions) error {
	switch {
	case o.Timeout < 0:
		return fmt.Errorf("mcpexpose: negative Timeout %v", o.Timeout)
	case o.RateLimit.Validate() != nil:
		return fmt.Errorf("mcpexpose: RateLimit: %w", o.RateLimit.Validate())
	case o.StateTTL < 0 || o.StateTTL > requeststate.MaxTTL:
		return fmt.Errorf("mcpexpose: StateTTL %v must be positive and at most %v", o.StateTTL, requeststate.MaxTTL)
	}
	return o.Tasks.check()
}
