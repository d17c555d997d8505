package mcpexpose

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrNotSwappable is reported by [Handler.Swap] for a handler built without
// [ServerOptions.Swappable].
var ErrNotSwappable = errors.New("mcpexpose: this server was built without ServerOptions.Swappable: its snapshot cannot be replaced")

// Live is an SDK server whose snapshot can be replaced while clients stay
// connected, for SDK transports other than [Handler]'s (in-memory, stdio,
// a transport of your own). It advertises tools.listChanged. It is safe for
// concurrent use.
type Live struct{ s *server }

// NewLive returns a server serving snap, as [NewServer] does, whose
// snapshot [Live.Swap] replaces. opts.Swappable is implied.
func NewLive(snap *Snapshot, opts *ServerOptions) (*Live, error) {
	var o ServerOptions
	if opts != nil {
		o = *opts
	}
	o.Swappable = true
	s, err := newServer(snap, &o, true)
	if err != nil {
		return nil, err
	}
	return &Live{s: s}, nil
}

// Server returns the SDK server, to connect transports to. Do not add or
// remove its tools: Swap owns them.
func (l *Live) Server() *mcp.Server { return l.s.mcp }

// Snapshot returns the snapshot new requests are served from.
func (l *Live) Snapshot() *Snapshot { return l.s.cur.Load().snap }

// Swap replaces the snapshot (see [Handler.Swap]).
func (l *Live) Swap(snap *Snapshot) error { return l.s.swap(snap) }

// epoch is one snapshot as served: what requests load, once each, and
// how many tools/call started on it are still running.
type epoch struct {
	snap    *Snapshot
	private bool // tools/list depends on the caller
	calls   atomic.Int64
	retired atomic.Bool // a newer epoch is current
}

func newEpoch(snap *Snapshot) *epoch {
	return &epoch{snap: snap, private: snap.callerDependent()}
}

// acquire returns the current epoch, counted as in use until release: the
// SDK keeps the tools of an epoch in use registered, so that a call that
// began before a swap removed its tool still reaches the SDK's tool handler.
func (s *server) acquire() *epoch {
	for {
		e := s.cur.Load()
		e.calls.Add(1)
		if s.cur.Load() == e {
			return e
		}
		s.release(e) // swapped meanwhile: take the new one
	}
}

// pin counts one more use of e, which the caller already holds.
func (e *epoch) pin() { e.calls.Add(1) }

// release ends one use of e; the last use of a retired epoch lets its tools
// go.
func (s *server) release(e *epoch) {
	if e.calls.Add(-1) == 0 && e.retired.Load() {
		s.swapMu.Lock()
		// A removal the SDK notifies: the sessions to tell of the tools
		// were told at the swap; those listening to the resource or prompt
		// lists are told again, as the SDK tells them.
		if _, res, prompts := s.sweep(); res || prompts {
			s.listens.changed(nil, nil, res, prompts)
		}
		s.swapMu.Unlock()
	}
}

// swap makes snap the snapshot of new requests. Requests already routed
// finish on theirs; sessions, streams and subscriptions stay.
func (s *server) swap(snap *Snapshot) error {
	switch {
	case !s.opts.Swappable:
		return ErrNotSwappable
	case snap == nil:
		return errors.New("mcpexpose: Swap: no snapshot: build one with Exposure.Compile (the old one keeps serving)")
	case snap.app.Name() != s.app.Name():
		return fmt.Errorf("mcpexpose: Swap: the snapshot exposes application %q, not %q, the one this server serves (the old one keeps serving)", snap.app.Name(), s.app.Name())
	}
	s.swapMu.Lock()
	defer s.swapMu.Unlock()
	old := s.cur.Load()
	if old.snap == snap {
		return nil
	}
	next := newEpoch(snap)
	// Who must be told is decided against the old and the new lists before
	// the SDK, which broadcasts, hears of the change.
	changed := s.watch.changed(old.snap, snap)
	// Register the new definitions first: a request routed on the new
	// snapshot finds its tool in the SDK (header checks, dispatch).
	added := s.registerTools(snap)
	res, prompts := s.registerFeatures(snap) // resources and prompts, as tools above
	s.cur.Store(next)
	old.retired.Store(true)
	s.retired = append(s.retired, old)
	removed, resGone, promptsGone := s.sweep()
	if !added && !removed && changed {
		// Nothing the SDK holds changed (a removed tool stays registered
		// while calls on it run), yet some callers' lists did: have the
		// SDK notify, by registering a tool again, unchanged.
		s.nudge()
	}
	// The listens the edge holds, told once the new snapshot serves: one
	// event of each kind for the swap, as the SDK's timers send one for
	// changes that land within 10 ms of each other (ADR 90).
	s.listens.changed(old.snap, snap, res || resGone, prompts || promptsGone)
	return nil
}

// nudge makes the SDK send its tools/list_changed notification, which the
// sending middleware lets through to the sessions to tell. s.swapMu is
// held.
func (s *server) nudge() {
	names := make([]string, 0, len(s.registered))
	for name := range s.registered {
		names = append(names, name)
	}
	if len(names) == 0 {
		return
	}
	s.mcp.AddTool(s.registered[slices.Min(names)].def(), s.handler)
}

// registration is what the SDK server holds under a tool name: a tool's
// definition or a withdrawn tool's, and the digest of what it stands for.
type registration struct {
	digest string
	def    func() *mcp.Tool // a fresh copy of the definition
}

// registerTools gives the SDK server the definition of every tool and
// withdrawn tool of snap it does not hold as they are, and reports whether
// it gave one. s.swapMu is held, or s is being built.
func (s *server) registerTools(snap *Snapshot) bool {
	added := false
	add := func(name string, r registration) {
		if old, ok := s.registered[name]; ok && old.digest == r.digest {
			return
		}
		s.mcp.AddTool(r.def(), s.handler)
		s.registered[name] = r
		added = true
	}
	for _, t := range snap.tools {
		add(t.name, registration{digest: t.digest, def: t.sdkTool})
	}
	for _, w := range snap.withdrawnList {
		add(w.name, registration{digest: w.digest, def: w.sdkTool})
	}
	if sr := snap.search; sr != nil {
		// Never reached, as no tool's handler is: the middleware and the
		// edge answer them (search.go).
		for _, name := range []string{searchToolName, callToolName} {
			add(name, registration{digest: "search\x00" + name, def: func() *mcp.Tool {
				return &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}
			}})
		}
	}
	return added
}

// sweep forgets retired epochs no call uses and unregisters the tools,
// resources, templates and prompts no epoch in use has, reporting whether
// it removed tools, resources or templates, and prompts. s.swapMu is held.
func (s *server) sweep() (tools, res, prompts bool) {
	s.retired = slices.DeleteFunc(s.retired, func(e *epoch) bool { return e.calls.Load() == 0 })
	var gone []string
	for name := range s.registered {
		if s.inUse(name) {
			continue
		}
		gone = append(gone, name)
		delete(s.registered, name)
	}
	if len(gone) > 0 {
		slices.Sort(gone)
		s.mcp.RemoveTools(gone...)
	}
	res, prompts = s.sweepFeatures() // the SDK notifies their removal itself
	return len(gone) > 0, res, prompts
}

// inUse reports whether the current epoch or a retired one still in use has
// a tool or withdrawn tool named name.
func (s *server) inUse(name string) bool {
	if s.cur.Load().snap.answers(name) {
		return true
	}
	for _, e := range s.retired {
		if e.snap.answers(name) {
			return true
		}
	}
	return false
}

// answers reports whether the snapshot answers tools/call of name: a tool
// or a withdrawn tool.
func (s *Snapshot) answers(name string) bool {
	_, tool := s.byName[name]
	_, withdrawn := s.withdrawn[name]
	return tool || withdrawn || (s.search != nil && s.search.builtin(name))
}
