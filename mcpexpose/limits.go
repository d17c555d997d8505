package mcpexpose

import (
	"errors"
	"time"
)

// Limits bounds what one [Handler] holds for its callers (see
// [HandlerOptions.Limits]). A nil *Limits and every zero field mean the
// documented default.
type Limits struct {
	// MaxBodyBytes limits request bodies; larger ones get 413. Default:
	// 1 MiB.
	MaxBodyBytes int64
	// SessionTimeout closes a handshake-era session that has had no
	// request for this long (an open GET stream does not keep it alive).
	// Its slot under MaxSessions is freed then. Default: 30
	// minutes. (2026-07-28 requests have no sessions.)
	SessionTimeout time.Duration
	// MaxSessions caps the live handshake-era sessions of the handler: an
	// initialize past it gets 503 with Retry-After and a JSON-RPC error
	// naming the limit, until a session ends (DELETE, SessionTimeout, or
	// the expiry of the token that opened it). Default:
	// 1000; negative: no limit.
	MaxSessions int
	// MaxSessionsPerPrincipal caps the live handshake-era sessions of one
	// principal (as the identity mapper maps it), refused the same way.
	// With Tokens, callers without a token (AllowAnonymous) all count as
	// one principal; without Tokens, every caller is that one principal
	// and only MaxSessions applies. Default:
	// 32; negative: no limit.
	MaxSessionsPerPrincipal int
	// MaxStreams caps the 2026-07-28 subscriptions/listen streams open on
	// the handler at once: a listen POST past it gets 503 with Retry-After
	// and a JSON-RPC error naming the limit, as an initialize past
	// MaxSessions does, until a stream ends (the client goes away,
	// StreamLifetime, the expiry of its token). Streams are counted apart
	// from sessions, which a listen does not have; a handshake-era session
	// hears of changes on its GET stream and may not listen (-32601).
	// Default: 1000; negative: no limit.
	MaxStreams int
	// MaxStreamsPerPrincipal caps the open listen streams of one principal,
	// who is counted as for MaxSessionsPerPrincipal (without Tokens only
	// MaxStreams applies), refused the same way. Default:
	// 32; negative: no limit.
	MaxStreamsPerPrincipal int
	// StreamLifetime bounds how long one subscriptions/listen stream stays
	// open; a stream opened with a token ends at the token's expiry when
	// that comes first. The stream then ends cleanly, with the listen's
	// result, and the client listens again (a 2026-07-28 server may end a
	// listen at any time; the Go SDK client v1.8.0 does not listen again by
	// itself, see docs/operating.md). Default: 30 minutes;
	// negative: no limit but the token's.
	StreamLifetime time.Duration
	// StreamKeepAlive is how long a long-lived event stream — a
	// subscriptions/listen stream, a handshake-era session's GET stream —
	// may stay quiet: one that has written nothing for this long writes an
	// SSE comment (": keepalive", which SSE clients ignore). A proxy in
	// front learns that a client went away only when it writes to it, and
	// until then the server holds the stream: its slot under MaxStreams,
	// or the session's GET stream, which the SDK refuses to open again
	// (409) while it is held. Through the comments HAProxy finds a gone
	// client within two intervals (directly, its going away ends the
	// stream at once), and a write that fails ends the stream. Keep it
	// below the idle timeouts of every proxy in front (docs/operating.md).
	// Default: 15 seconds; negative is an error.
	StreamKeepAlive time.Duration
	// ReplayBytes bounds the memory kept, for all handshake-era sessions
	// together, to replay SSE streams to clients that resume them with
	// Last-Event-ID after a dropped connection: the messages of the most
	// recently written streams and the bookkeeping of every stream kept.
	// The least recently written streams are forgotten first, and one
	// stream keeps at most a quarter of it (its oldest messages go first,
	// its latest stays); resuming from a forgotten message gets 400.
	// Default: 4 MiB. (2026-07-28 streams are not resumable.)
	ReplayBytes int64
	// PollAfter, when positive, is how long a 2025-11-25 tools/call holds
	// its POST's event stream: a call still running then has its stream
	// ended with a retry: field of PollRetry, and the client reconnects
	// with Last-Event-ID (a GET) to get what follows, the result included,
	// from the replay store (ReplayBytes): the "SSE polling" of that
	// revision, which frees a connection that a long call would hold
	// through a proxy's idle timeout. Calls of 2025-06-18 sessions, whose
	// clients get no event id to resume from, are not polled, nor are
	// 2026-07-28 requests (that revision has no resumable streams). The
	// handler's fast path polls the calls it answers as the SDK polls its
	// own (ADR 76). Behind a
	// load balancer the reconnect must reach the same instance, as every
	// request of the session does (docs/scaling.md). Default: 0, a call's
	// stream stays open until its result.
	PollAfter time.Duration
	// PollRetry is the reconnection delay a polled stream asks for
	// (PollAfter). Default: 1 second.
	PollRetry time.Duration
}

// defaultPollRetry is the default of [Limits.PollRetry].
const defaultPollRetry = time.Second

// defaultSessionTimeout is how long an idle handshake-era session is kept.
const defaultSessionTimeout = 30 * time.Minute

// withDefaults returns l (nil for none) with every zero field set to its
// default, or says which field is out of range.
func (l *Limits) withDefaults() (Limits, error) {
	var o Limits
	if l != nil {
		o = *l
	}
	switch {
	case o.MaxBodyBytes < 0:
		return o, errors.New("mcpexpose: negative Limits.MaxBodyBytes")
	case o.SessionTimeout < 0:
		return o, errors.New("mcpexpose: negative Limits.SessionTimeout")
	case o.ReplayBytes < 0:
		return o, errors.New("mcpexpose: negative Limits.ReplayBytes")
	case o.PollAfter < 0:
		return o, errors.New("mcpexpose: negative Limits.PollAfter")
	case o.PollRetry < 0:
		return o, errors.New("mcpexpose: negative Limits.PollRetry")
	case o.StreamKeepAlive < 0:
		return o, errors.New("mcpexpose: negative Limits.StreamKeepAlive: a stream that never writes keeps a dead client's slot behind a proxy")
	}
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&o.MaxSessions, defaultMaxSessions)
	set(&o.MaxSessionsPerPrincipal, defaultMaxSessionsPerPrincipal)
	set(&o.MaxStreams, defaultMaxStreams)
	set(&o.MaxStreamsPerPrincipal, defaultMaxStreamsPerPrincipal)
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = defaultMaxBodyBytes
	}
	if o.SessionTimeout == 0 {
		o.SessionTimeout = defaultSessionTimeout
	}
	if o.StreamLifetime == 0 {
		o.StreamLifetime = defaultStreamLifetime
	}
	if o.ReplayBytes == 0 {
		o.ReplayBytes = defaultReplayBytes
	}
	if o.PollRetry == 0 {
		o.PollRetry = defaultPollRetry
	}
	if o.StreamKeepAlive == 0 {
		o.StreamKeepAlive = defaultStreamKeepAlive
	}
	return o, nil
}

// defaultMaxBodyBytes is the default limit on the size of a request body.
const defaultMaxBodyBytes = 1 << 20

// defaultReplayBytes is the default of [Limits.ReplayBytes].
const defaultReplayBytes = 4 << 20

// defaultStreamKeepAlive is the default of [Limits.StreamKeepAlive]: a
// quarter of the 60 s idle timeouts of nginx (proxy_read_timeout) and AWS
// ALB, so that a late comment is still in time, and a gone client found
// within 30 s behind HAProxy.
const defaultStreamKeepAlive = 15 * time.Second

// Defaults of [Limits.MaxSessions] and
// [Limits.MaxSessionsPerPrincipal]. A live handshake-era session
// costs about 5.5 KiB of live heap when idle (TestSessionFloodIsBounded,
// go-sdk v1.8.0) and more in RSS (issue 16 saw some 13 KiB), so the
// default cap holds the sessions of a handler to some 5–15 MiB.
const (
	defaultMaxSessions             = 1000
	defaultMaxSessionsPerPrincipal = 32
)

// sessionRetryAfter is the Retry-After of a refused initialize: how soon a
// slot may free up is unknown (a DELETE, an idle timeout, a token's
// expiry), so the client is asked to wait a while rather than hammer.
const sessionRetryAfter = 30 * time.Second

// Defaults of [Limits.MaxStreams],
// [Limits.MaxStreamsPerPrincipal] and
// [Limits.StreamLifetime]. An open subscriptions/listen stream
// costs about 30 KiB of live heap and 4 goroutines
// (TestListenFloodIsBounded, go-sdk v1.8.0): the connection, the SDK's
// session for the request and its handler, and its keep-alive (0.7 KiB,
// keepalive.go), so the default cap holds a handler's streams to some
// 30 MiB of heap.
const (
	defaultMaxStreams             = 1000
	defaultMaxStreamsPerPrincipal = 32
	defaultStreamLifetime         = 30 * time.Minute
)
