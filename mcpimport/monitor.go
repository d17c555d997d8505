package mcpimport

import (
	"context"
	"sync"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SupportedProtocolVersions returns the negotiated MCP protocol versions a
// [Monitor] accepts, newest first: every revision the SDK client negotiates,
// from 2026-07-28 down to 2024-11-05. That is more than agnara serves
// (mcpexpose serves 2026-07-28, 2025-11-25 and 2025-06-18): servers built on
// older SDKs still speak 2025-03-26 and 2024-11-05, and a gateway serves
// their tools to its own clients at the newest revisions. The slice is new
// on every call; changing it changes nothing else.
func SupportedProtocolVersions() []string { return mcpversion.Imported() }

// Monitor watches one client session for changes to the remote catalogs:
// its tools, and its resources and prompts. [Connect] creates one with each
// [Session] and wires it in; a host that builds its own SDK client creates
// it with [NewMonitor], feeds it the protocol version the real handshake
// negotiated, routes the session's tools/list_changed notifications to it
// (and, to import resources or prompts, resources/list_changed and
// prompts/list_changed), closes it when the session ends, and pairs the two
// with [NewSession]:
//
//	mon := mcpimport.NewMonitor()
//	client := mcp.NewClient(impl, &mcp.ClientOptions{ToolListChangedHandler: mon.ToolListChanged})
//	cs, err := client.Connect(ctx, transport, nil)
//	...
//	defer mon.Close()
//	if err := mon.AcceptProtocolVersion(cs.InitializeResult().ProtocolVersion); err != nil { ... }
//	sess, err := mcpimport.NewSession("documents", cs, mon)
//
// A tools/list_changed notification makes every tool catalog discovered
// before it stale: its calls fail with [ReasonCatalogStale] until the host
// discovers again and swaps catalogs. A resources/list_changed or
// prompts/list_changed does the same to every catalog of resources and
// prompts ([DiscoverFeatures]) and leaves tool catalogs alone, so that a
// server whose resources come and go (some add one per session) does not
// disturb its tools. Closing the monitor makes calls fail with
// [ReasonConnectionClosed].
//
// A Monitor is safe for concurrent use.
type Monitor struct {
	mu      sync.Mutex
	version string
	closed  bool
	gen     uint64
	stale   chan struct{} // closed when gen advances or the monitor closes
	// Resources and prompts (features.go) have a generation of their own.
	featureGen   uint64
	featureStale chan struct{}
}

// NewMonitor returns a monitor that has accepted no protocol version yet.
func NewMonitor() *Monitor {
	return &Monitor{stale: make(chan struct{}), featureStale: make(chan struct{})}
}

// AcceptProtocolVersion records the protocol version the session negotiated.
// Pass the version from the actual handshake (the session's
// InitializeResult), never a configured guess. It fails for a version not in
// [SupportedProtocolVersions], for a second, different version, and after
// Close.
func (m *Monitor) AcceptProtocolVersion(version string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return newError(ProtocolUnsupported, "", "the monitor is closed")
	case !mcpversion.IsImported(version):
		return newError(ProtocolUnsupported, "", "negotiated protocol version %s is not supported (want one of %v)", quote(version), mcpversion.Imported())
	case m.version != "" && m.version != version:
		return newError(ProtocolUnsupported, "", "the monitor already accepted protocol version %s", m.version)
	}
	m.version = version
	return nil
}

// ToolListChanged records a tools/list_changed notification. Its signature
// fits mcp.ClientOptions.ToolListChangedHandler.
func (m *Monitor) ToolListChanged(context.Context, *mcp.ToolListChangedRequest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.gen++
	close(m.stale)
	m.stale = make(chan struct{})
}

// Close marks the session as gone: calls of every catalog discovered through
// this monitor fail with [ReasonConnectionClosed], and discovery fails. Close is
// idempotent.
func (m *Monitor) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.closed = true
		close(m.stale)
		close(m.featureStale)
	}
}

// watch is a monitor's state as a catalog sees it.
type watch struct {
	version string
	gen     uint64
	stale   <-chan struct{}
	closed  bool
}

func (m *Monitor) watch() watch {
	m.mu.Lock()
	defer m.mu.Unlock()
	return watch{m.version, m.gen, m.stale, m.closed}
}

// current reports whether a catalog discovered at generation gen is still
// current, and if not, which failure reason says why.
func (m *Monitor) current(gen uint64) (execution.Reason, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return ReasonConnectionClosed, false
	case m.gen != gen:
		return ReasonCatalogStale, false
	}
	return "", true
}

// ResourceListChanged records a resources/list_changed notification: every
// catalog of resources and prompts discovered before it is stale. Its
// signature fits mcp.ClientOptions.ResourceListChangedHandler.
func (m *Monitor) ResourceListChanged(context.Context, *mcp.ResourceListChangedRequest) {
	m.featureChanged()
}

// PromptListChanged records a prompts/list_changed notification, as
// [Monitor.ResourceListChanged] does a resources/list_changed. Its
// signature fits mcp.ClientOptions.PromptListChangedHandler.
func (m *Monitor) PromptListChanged(context.Context, *mcp.PromptListChangedRequest) {
	m.featureChanged()
}

func (m *Monitor) featureChanged() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	m.featureGen++
	close(m.featureStale)
	m.featureStale = make(chan struct{})
}

// featureWatch is the monitor's state as a catalog of resources and
// prompts sees it.
func (m *Monitor) featureWatch() watch {
	m.mu.Lock()
	defer m.mu.Unlock()
	return watch{m.version, m.featureGen, m.featureStale, m.closed}
}

// currentFeatures is [Monitor.current] for catalogs of resources and
// prompts.
func (m *Monitor) currentFeatures(gen uint64) (execution.Reason, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.closed:
		return ReasonConnectionClosed, false
	case m.featureGen != gen:
		return ReasonCatalogStale, false
	}
	return "", true
}

// routeFeatureChanges makes a session Connect makes tell mon of
// resources/list_changed and prompts/list_changed, before any handler the
// host set.
func routeFeatureChanges(co *mcp.ClientOptions, mon *Monitor) {
	nextResources, nextPrompts := co.ResourceListChangedHandler, co.PromptListChangedHandler
	co.ResourceListChangedHandler = func(ctx context.Context, req *mcp.ResourceListChangedRequest) {
		mon.ResourceListChanged(ctx, req)
		if nextResources != nil {
			nextResources(ctx, req)
		}
	}
	co.PromptListChangedHandler = func(ctx context.Context, req *mcp.PromptListChangedRequest) {
		mon.PromptListChanged(ctx, req)
		if nextPrompts != nil {
			nextPrompts(ctx, req)
		}
	}
}
