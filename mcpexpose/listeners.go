package mcpexpose

import (
	"slices"
	"sync"

	"github.com/agnara-go/agnara/policy"
)

// The listens the HTTP edge holds (listen.go) are told of what they
// listen for here, as the SDK's sessions are told by the SDK: a swap that
// changed a caller's visible tool list (live.go), an update of a
// resource (resources.go). The edge waits on each one's wake-ups and
// writes its events.

// edgeListen is one listen the edge holds: who listens, what it agreed
// to, and the events waiting to be written. It is safe for concurrent use.
type edgeListen struct {
	p     policy.Principal
	tools bool     // tools/list_changed agreed
	uris  []string // the resources whose updates were agreed
	wake  chan struct{}

	mu sync.Mutex
	// pending are the events to write, in order: "" a tools/list_changed,
	// any other a resources/updated of that URI; each at most once, so
	// that a client that does not read holds at most one of each.
	pending []string
}

// queue adds an event to write, unless it is already waiting.
func (l *edgeListen) queue(ev string) {
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
func (l *edgeListen) take() []string {
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

// swapped tells the listens whose caller's visible tool list differs
// between old and next, as the SDK's broadcast through watchers.filter
// tells a session's.
func (ls *edgeListens) swapped(old, next *Snapshot) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for l := range ls.set {
		if l.tools && (!sameSearch(old, next) || !sameList(old.visible(l.p), next.visible(l.p))) {
			l.queue("")
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
			l.queue(uri)
		}
	}
}
