package mcpimport

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Session is a connected client session to one remote server together with
// its [Monitor]: what discovery and every call of a catalog need. [Connect]
// makes one in a single step; [NewSession] pairs a session and monitor a
// host connected itself.
//
// A Session is safe for concurrent use.
type Session struct {
	serverID string
	cs       *mcp.ClientSession
	mon      *Monitor
	tasks    *taskRegistry // nil unless ConnectOptions.Tasks
	fast     *fastCaller   // nil unless Connect set up the fast path (fastcall.go)

	authorize  Authorizer // ConnectOptions.Authorizer
	credential string     // ConnectOptions.Credential
}

// ConnectOptions configures [Connect]. A nil *ConnectOptions and every zero
// field mean the documented default.
type ConnectOptions struct {
	// Client is how this host introduces itself to the remote server.
	// Default: name "agnara-mcpimport", version "1".
	Client *mcp.Implementation
	// ClientOptions are the SDK client's options; they are copied. A
	// ToolListChangedHandler, ResourceListChangedHandler or
	// PromptListChangedHandler set here runs after the session's monitor
	// has recorded the notification.
	ClientOptions *mcp.ClientOptions
	// SessionOptions are passed to the SDK's Client.Connect (to ask for a
	// protocol version, say).
	SessionOptions *mcp.ClientSessionOptions
	// Tasks makes the session able to follow remote tasks, for bindings
	// that opt in ([Binding].Task): the client learns tasks/get and
	// tasks/cancel, and the transport keeps a copy of the raw answer of
	// each tools/call that declared the tasks extension (the SDK drops a
	// task handle's fields; see docs/import.md, "Remote tasks"). The
	// streamable HTTP transport is copied, with its HTTP client's transport
	// wrapped; any other transport's connection is wrapped. Default: false.
	Tasks bool
	// DisableFastPath sends every request through the SDK client. By
	// default, a session that negotiates 2026-07-28 over an
	// mcp.StreamableClientTransport posts its ordinary tools/call requests
	// itself and reads their answers as the SDK client reads them, at a
	// fraction of the cost; see docs/gateway.md, "Cost", and ADR 44 for what
	// it takes and what it leaves to the SDK. Default: false.
	DisableFastPath bool
	// Authorizer, when set, is asked before anything is sent upstream on a
	// caller's behalf ([Authorizer]). Default: none.
	Authorizer Authorizer
	// Credential names, for approvers, whose authority requests to the
	// remote server carry (package gateway: its upstream's credentials,
	// such as "token_exchange"); recorded in each write's approval
	// (approval.Intent.Credential). At most 64 bytes. Default: "".
	Credential string
}

// Connect connects to the remote server the host calls serverID (1 to 128
// bytes without control characters; it is recorded in every snapshot) over
// transport. It creates the session's [Monitor], routes the session's
// tools/list_changed, resources/list_changed and prompts/list_changed
// notifications to it, and has it accept the protocol
// version the handshake actually negotiated. A failed handshake is an
// [*Error] with reason [ConnectFailed] (the transport's error is its
// cause, for the host's logs); a version agnara does not support is one
// with reason [ProtocolUnsupported], and the session is closed again.
//
// The SDK client asks for the newest revision it speaks unless
// opts.SessionOptions names one: 2026-07-28 through server/discover when
// the remote server offers it, else the handshake, in which the server
// picks its newest revision (every one of [SupportedProtocolVersions] is
// accepted, 2025-03-26 and 2024-11-05 included).
//
// The host owns the returned session: it closes it with [Session.Close].
func Connect(ctx context.Context, serverID string, transport mcp.Transport, opts *ConnectOptions) (*Session, error) {
	if err := checkServerID(serverID); err != nil {
		return nil, err
	}
	var o ConnectOptions
	if opts != nil {
		o = *opts
	}
	impl := o.Client
	if impl == nil {
		impl = &mcp.Implementation{Name: "agnara-mcpimport", Version: "1"}
	}
	var co mcp.ClientOptions
	if o.ClientOptions != nil {
		co = *o.ClientOptions
	}
	mon := NewMonitor()
	next := co.ToolListChangedHandler
	co.ToolListChangedHandler = func(ctx context.Context, req *mcp.ToolListChangedRequest) {
		mon.ToolListChanged(ctx, req)
		if next != nil {
			next(ctx, req)
		}
	}
	routeFeatureChanges(&co, mon) // resources and prompts (features.go)
	RouteQuestions(&co)           // an upstream's questions, relayed (questions.go)
	// After every handler is in place: the fast path delivers the
	// notifications of a call's stream to the same handlers.
	fast := newFastCaller(transport, &co, o.DisableFastPath)
	client := mcp.NewClient(impl, &co)
	client.AddReceivingMiddleware(RelayRoots) // questions.go
	if fast != nil {
		client.AddSendingMiddleware(fast.middleware)
	}
	var tasks *taskRegistry
	if o.Tasks {
		if err := registerTaskMethods(client); err != nil {
			mon.Close()
			return nil, err
		}
		transport = withTaskCapture(transport)
		tasks = &taskRegistry{}
	}
	cs, err := client.Connect(ctx, transport, o.SessionOptions)
	if err != nil {
		mon.Close()
		return nil, &Error{Reason: ConnectFailed, msg: "the handshake with the remote server failed", cause: err}
	}
	if err := mon.AcceptProtocolVersion(cs.InitializeResult().ProtocolVersion); err != nil {
		mon.Close()
		return nil, errors.Join(err, cs.Close())
	}
	if fast != nil && !fast.arm(cs) {
		fast = nil
	}
	return &Session{serverID: serverID, cs: cs, mon: mon, tasks: tasks, fast: fast, authorize: o.Authorizer, credential: o.Credential}, nil
}

// NewSession pairs a client session the host connected itself with its
// monitor, for hosts that build their own SDK client. The host must have
// routed the session's tools/list_changed notifications to mon (its
// ClientOptions.ToolListChangedHandler calls mon.ToolListChanged; to
// import resources or prompts, ResourceListChangedHandler and
// PromptListChangedHandler call mon.ResourceListChanged and
// mon.PromptListChanged) and had
// mon accept the negotiated protocol version; discovery refuses a session
// whose monitor disagrees with it. serverID is as for [Connect]. Such a
// session cannot follow remote tasks: a binding with [Binding].Task needs
// a session from [Connect] with [ConnectOptions].Tasks.
func NewSession(serverID string, cs *mcp.ClientSession, mon *Monitor) (*Session, error) {
	if err := checkServerID(serverID); err != nil {
		return nil, err
	}
	if cs == nil || mon == nil {
		return nil, newError(BindingInvalid, "", "a session needs a connected client session and its monitor")
	}
	return &Session{serverID: serverID, cs: cs, mon: mon}, nil
}

// ServerID returns the host's name for the remote server.
func (s *Session) ServerID() string { return s.serverID }

// ProtocolVersion returns the protocol revision the session negotiated, one
// of [SupportedProtocolVersions]. Before 2025-06-18 (2025-03-26,
// 2024-11-05) tools have no output schemas and results no structured
// content: they are text.
func (s *Session) ProtocolVersion() string { return s.cs.InitializeResult().ProtocolVersion }

// ClientSession returns the SDK client session.
func (s *Session) ClientSession() *mcp.ClientSession { return s.cs }

// Monitor returns the session's monitor.
func (s *Session) Monitor() *Monitor { return s.mon }

// Close closes the monitor (calls of every catalog of this session then fail
// with [ReasonConnectionClosed]) and the client session.
func (s *Session) Close() error {
	s.mon.Close()
	return s.cs.Close()
}

func checkServerID(id string) error {
	if id == "" || len(id) > 128 || strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return newError(BindingInvalid, "", "server id %s: want 1 to 128 bytes without control characters", quote(id))
	}
	return nil
}
