package mcpexpose

import (
	"slices"
	"sync"

	"github.com/agnara-go/agnara/policy"
)

// The listens the HTTP edge holds (listen.go) are told of what they
// listen for here, as the SDK's sessions are told by the SDK: a swap that
// changed a caller's visible tool list, or the prompts, resources or
// templates the SDK server holds (live.go), an update of a resource
// (resources.go). The edge waits on each one's wake-ups and writes its
// events.

// listenKind is what an event the edge writes on a listen tells.
type listenKind uint8

const (
	listenTools     listenKind = iota // notifications/tools/list_changed
	listenResources                   // notifications/resources/list_changed
	listenPrompts                     // notifications/prompts/list_changed
	listenUpdated                     // notifications/resources/updated of uri
)

// listenEvent is one event waiting to be written on a listen.
type listenEvent struct {
	kind listenKind
	uri  string // the resource updated (listenUpdated)
}

// edgeListen is one listen the edge holds: who listens, what it agreed
// to, and the events waiting to be written. It is safe for concurrent use.
type edgeListen struct {
	p policy.Principal
	// What it agreed to: the tool, resource and prompt lists' changes.
	tools, resources, prompts bool
	uris                      []string // the resources whose updates were agreed
	wake                      chan struct{}

	mu sync.Mutex
	// pending are the events to write, in order, each at most once, so
	// that a client that does not read holds at most one of each kind
	// (and one update of each resource it agreed to).
	pending []listenEvent
}

// queue adds an event to write, unless it is already waiting.
func (l *edgeListen) queue(ev listenEvent) {
	l.mu.Lock()
	if !slices.Contains(l.pending, ev) {
		l.pending = append(l.pending, ev)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns the events waiting and empties the queue.
func (l *edgeListen) take() []listenEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending
	l.pending = nil
	return p
}

// edgeListens are the listens a server's edge holds. It is safe for
// concurrent use.
type edgeListens struct {
	mu  sync.Mutex
	set map[*edgeListen]struct{}
}

func (ls *edgeListens) add(l *edgeListen) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.set == nil {
		ls.set = map[*edgeListen]struct{}{}
	}
	ls.set[l] = struct{}{}
}

func (ls *edgeListens) remove(l *edgeListen) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	delete(ls.set, l)
}

// changed tells the listens of what one change of the SDK server's
// registrations changed for them (ADR 90), in a fixed order: the tool
// list, when the caller's visible list differs between old and next, as
// the SDK's broadcast through watchers.filter tells a session's (old nil:
// no tool list change, a retired epoch's sweep); then the resource list,
// when the resources or templates the SDK holds changed (res); then the
// prompt list (prompts), both told to every listen that agreed to them,
// whoever its caller, as the SDK tells every session that did.
func (ls *edgeListens) changed(old, next *Snapshot, res, prompts bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for l := range ls.set {
		if l.tools && old != nil && (!sameSearch(old, next) || !sameList(old.visible(l.p), next.visible(l.p))) {
			l.queue(listenEvent{kind: listenTools})
		}
		if l.resources && res {
			l.queue(listenEvent{kind: listenResources})
		}
		if l.prompts && prompts {
			l.queue(listenEvent{kind: listenPrompts})
		}
	}
}

// updated tells the listens subscribed to uri that it changed, as the
// SDK's ResourceUpdated tells a session subscribed to it.
func (ls *edgeListens) updated(uri string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for l := range ls.set {
		if slices.Contains(l.uris, uri) {
			l.queue(listenEvent{kind: listenUpdated, uri: uri})
		}
	}
}
