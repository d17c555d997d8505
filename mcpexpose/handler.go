package mcpexpose

import (
	"context"
)

// The Handler's methods beyond ServeHTTP: what an application does with a
// running handler. Each hands the request to the server behind the edge,
// or reads the edge's own state.

// Swap replaces the snapshot the handler serves with snap, atomically.
// Calls already running finish on the snapshot they started with; requests
// that arrive after Swap returns see snap. No session, connection, stream or
// subscription is dropped. Every handshake-era session and every
// 2026-07-28 subscriptions/listen stream whose caller's visible list
// changed (a tool added, removed or redefined among those its scopes show)
// is sent notifications/tools/list_changed, shortly after (the SDK batches
// changes for 10 ms); the others are not.
//
// snap must come from an application of the same name: the same one
// ([Exposure.Compile] on a new exposure of it), or one built anew, as a
// gateway builds one for each catalog it imports. The name is the server's
// identity and the audience its request state is bound to; the server keeps
// the logger and observer of the application it was built with. nil, an
// application of another name, or a handler built without
// [ServerOptions.Swappable] is an error, and the old snapshot keeps
// serving. A snapshot that does not compile never reaches Swap: Compile
// reports its mistakes and the running one is untouched.
//
// Swap is safe for concurrent use with requests and with itself.
func (h *Handler) Swap(snap *Snapshot) error {
	if err := h.srv.swap(snap); err != nil {
		return err
	}
	h.setMetadata(snap)
	return nil
}

// Snapshot returns the snapshot new requests are served from.
func (h *Handler) Snapshot() *Snapshot { return h.srv.cur.Load().snap }

// ResourceUpdated tells every client subscribed to the resource at uri
// (resources/subscribe on handshake-era sessions, subscriptions/listen at
// 2026-07-28) that its contents changed, so that it reads them again.
// Only callers who could read uri when they subscribed are subscribed. It
// is safe for concurrent use.
func (h *Handler) ResourceUpdated(ctx context.Context, uri string) error {
	return h.srv.resourceUpdated(ctx, uri)
}

// Load is what a [Handler] holds open now, against its caps (negative: no
// limit).
type Load struct {
	// Sessions are the live handshake-era sessions (and those being
	// opened); MaxSessions is Limits.MaxSessions.
	Sessions, MaxSessions int
	// Streams are the open subscriptions/listen streams; MaxStreams is
	// Limits.MaxStreams.
	Streams, MaxStreams int
}

// Load reports what the handler holds open now. It takes two short locks
// and is meant for a metrics scrape, not for every request.
func (h *Handler) Load() Load {
	sessions, _ := h.sessions.count("")
	streams, _ := h.streams.count("")
	return Load{Sessions: sessions, MaxSessions: h.sessions.slots.max, Streams: streams, MaxStreams: h.streams.slots.max}
}
