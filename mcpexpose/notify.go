package mcpexpose

import (
	"context"
	"sync"

	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// methodToolsListChanged is the notification a swap may cause.
const methodToolsListChanged = "notifications/tools/list_changed"

// watchers knows who is behind each session that can be told that its
// tool list changed — handshake-era sessions, from their initialize and
// their latest tools/list, and 2026-07-28 subscriptions/listen streams,
// while they are open — and which of them a swap must tell. It is safe for
// concurrent use.
//
// The SDK broadcasts a change to every such session; the server's sending
// middleware ([watchers.filter]) lets it through only to those whose
// visible list changed. A session of unknown principal is told.
type watchers struct {
	server *mcp.Server

	mu      sync.Mutex
	by      map[*mcp.ServerSession]policy.Principal
	tell    map[*mcp.ServerSession]bool
	pruneAt int
}

func newWatchers(server *mcp.Server) *watchers {
	return &watchers{server: server, by: map[*mcp.ServerSession]policy.Principal{}, tell: map[*mcp.ServerSession]bool{}, pruneAt: minPrune}
}

// minPrune is the size at which the record of sessions is first checked
// against the SDK's live sessions.
const minPrune = 64

// seen records that ss acts as p.
func (w *watchers) seen(ss *mcp.ServerSession, p policy.Principal) {
	if ss == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.by[ss]; !ok && len(w.by) >= w.pruneAt {
		w.prune()
	}
	w.by[ss] = p
}

// prune forgets sessions the SDK has closed, so that the record stays as
// large as the live sessions, amortized. w.mu is held.
func (w *watchers) prune() {
	live := make(map[*mcp.ServerSession]bool, len(w.by))
	for ss := range w.server.Sessions() {
		live[ss] = true
	}
	for ss := range w.by {
		if !live[ss] {
			delete(w.by, ss)
			delete(w.tell, ss)
		}
	}
	w.pruneAt = max(minPrune, 2*len(w.by))
}

// forget drops ss, whose listen stream ended.
func (w *watchers) forget(ss *mcp.ServerSession) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.by, ss)
	delete(w.tell, ss)
}

// changed marks the sessions whose visible list differs between old and
// next, and reports whether there is one.
func (w *watchers) changed(old, next *Snapshot) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for ss, p := range w.by {
		if !sameSearch(old, next) || !sameList(old.visible(p), next.visible(p)) {
			w.tell[ss] = true
		}
	}
	return len(w.tell) > 0
}

// sameList reports whether two visible lists publish the same tools.
func sameList(a, b []*tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].name != b[i].name || a[i].digest != b[i].digest {
			return false
		}
	}
	return true
}

// told reports whether a list-changed notification goes to ss, and takes
// it off the list of sessions to tell.
func (w *watchers) told(ss *mcp.ServerSession) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tell[ss] {
		delete(w.tell, ss)
		return true
	}
	_, known := w.by[ss]
	return !known
}

// filter is the server's sending middleware: it drops the SDK's
// tools/list_changed broadcast to sessions whose list did not change.
func (w *watchers) filter(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == methodToolsListChanged {
			if ss, _ := req.GetSession().(*mcp.ServerSession); ss != nil && !w.told(ss) {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}
