package mcpexpose

import (
	"cmp"
	"container/list"
	"context"
	crand "crypto/rand"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What the event store counts for its bookkeeping, besides the capacity of
// each message: an estimate of a stream's map entry, struct and list element,
// and of a message's slice header.
const (
	streamCost  = 160
	messageCost = 24
	// writtenCost is what a stream the edge wrote whole costs besides its
	// message: its entry in the store's written log.
	writtenCost = 64
)

// eventStore is the [mcp.EventStore] of the handshake-era handler: it keeps
// the messages of each SSE stream so that a client whose connection dropped
// can resume the stream with Last-Event-ID.
//
// It exists because the SDK's MemoryEventStore (v1.8.0) bounds only the
// bytes of the messages it keeps, not its bookkeeping: every POST opens a new
// stream, and its entry stays until the session ends, so a long-lived
// session grows the heap with every call (about 160 bytes a call, plus the
// messages up to 10 MiB). This store counts messages (by capacity) and a
// fixed cost per stream and per message against one budget shared by all
// sessions, and forgets the least recently written streams first. A resume
// of a forgotten stream gets [mcp.ErrEventsPurged], which the SDK answers
// with 400.
//
// One stream keeps at most a quarter of the budget: past it, its oldest
// messages are dropped (its latest one is always kept), so that a stream
// written while its client is away, such as a polled call's
// (Limits.PollAfter) logging on and on, cannot hold the whole budget or
// grow past it; a resume from before the dropped messages gets
// [mcp.ErrEventsPurged] too. Memory is bounded by the budget plus the
// stream being written (its last message may exceed the budget on its own)
// plus one small entry per live session for its standalone stream (id ""),
// whose messages are dropped but whose entry is kept so that its event
// indices stay aligned with the SDK's.
// The SDK calls Open for every stream before its first Append; Append to a
// stream the store does not hold (forgotten) fails instead of recreating it
// with wrong indices: the message is still delivered live, it just cannot
// be replayed.
//
// A stream the edge wrote whole, its answer in one write (writeSession),
// is kept apart, in the order written (keepWritten, ADR 88): no copy of
// its message beyond the one written, no map entry nor list element of
// its own, only an entry appended to a log, under a stream id the store
// makes of its own prefix and the entry's place in the log, by which a
// resume finds it (After). It counts against the same budget, and the
// store forgets whichever is older first, the least recently written
// stream or the oldest entry of the log.
//
// It is safe for concurrent use.
type eventStore struct {
	mu       sync.Mutex
	max      int64
	maxOne   int64                 // what one stream's messages may count
	size     int64                 // what is counted against max
	sessions map[string]*streamSet // session ID -> its streams by stream ID
	// lru holds the streams that can be forgotten, least recently written
	// first. A standalone stream is in it only while it holds messages.
	lru list.List
	// written is the log of the streams the edge wrote whole, oldest
	// first; an entry of a closed session is emptied (session "").
	written []writtenStream
	emptied int    // entries of written emptied by their session's close
	clock   uint64 // counts writes, to order the log against lru
	// prefix begins the ids of the streams in the log: random, as the
	// SDK's stream ids are, and the same length as the ids' tail.
	prefix string
}

// writtenStream is one stream the edge wrote whole: its message, of
// index 1 after a priming event (index 0) when primed, of index 0
// otherwise.
type writtenStream struct {
	session string // "" once its session closed
	msg     []byte
	tick    uint64 // the clock when written, which names it (writtenID)
	primed  bool   // the stream was primed
	prime   bool   // and its priming event is kept
}

func (w *writtenStream) cost() int64 {
	n := writtenCost + messageCost + int64(cap(w.msg))
	if w.prime {
		n += messageCost
	}
	return n
}

var _ mcp.EventStore = (*eventStore)(nil)

type eventStream struct {
	session, id string
	first       int      // stream index of data[0]
	data        [][]byte // messages; nil ones are the SDK's priming events
	size        int64    // what data counts
	elem        *list.Element
	tick        uint64 // when last written
}

func newEventStore(maxBytes int64) *eventStore {
	return &eventStore{max: maxBytes, maxOne: maxBytes / 4, sessions: make(map[string]*streamSet), prefix: crand.Text()[:writtenIDLen/2]}
}

func (st *eventStream) fixedCost() int64 {
	return streamCost + int64(len(st.session)+len(st.id))
}

// Open implements [mcp.EventStore].
func (s *eventStore) Open(_ context.Context, sessionID, streamID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	streams := s.sessions[sessionID]
	if streams == nil {
		streams = &streamSet{}
		s.sessions[sessionID] = streams
	}
	if streams.get(streamID) != nil {
		return nil
	}
	s.clock++
	st := &eventStream{session: sessionID, id: streamID, tick: s.clock}
	streams.put(st)
	s.size += st.fixedCost()
	if streamID != "" {
		st.elem = s.lru.PushBack(st)
	}
	s.evict(st)
	return nil
}

// Append implements [mcp.EventStore]. It keeps data, which the SDK does not
// modify afterwards, without copying it.
func (s *eventStore) Append(_ context.Context, sessionID, streamID string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.sessions[sessionID].get(streamID)
	if st == nil {
		return fmt.Errorf("mcpexpose: stream %q of session %q is not held (forgotten, or never opened): %w", streamID, sessionID, mcp.ErrEventsPurged)
	}
	s.clock++
	st.tick = s.clock
	st.data = append(st.data, data)
	cost := messageCost + int64(cap(data))
	s.size += cost
	st.size += cost
	for st.size > s.maxOne && len(st.data) > 1 {
		d := st.data[0]
		st.data[0] = nil
		st.data = st.data[1:]
		st.first++
		cost := messageCost + int64(cap(d))
		s.size -= cost
		st.size -= cost
	}
	if st.elem == nil {
		st.elem = s.lru.PushBack(st)
	} else {
		s.lru.MoveToBack(st.elem)
	}
	s.evict(st)
	return nil
}

// After implements [mcp.EventStore]: the messages after index, or
// [mcp.ErrEventsPurged] when the stream or any message after index has been
// forgotten.
func (s *eventStore) After(_ context.Context, sessionID, streamID string, index int) iter.Seq2[[]byte, error] {
	s.mu.Lock()
	var (
		data [][]byte
		err  error
	)
	st, ok := s.sessions[sessionID].get(streamID), true
	if st == nil {
		st, ok = s.writtenStream(sessionID, streamID)
	}
	switch {
	case !ok:
		err = fmt.Errorf("mcpexpose: stream %q of session %q: %w", streamID, sessionID, mcp.ErrEventsPurged)
	case index+1 < st.first:
		err = fmt.Errorf("mcpexpose: stream %q of session %q after index %d: %w", streamID, sessionID, index, mcp.ErrEventsPurged)
	case index+1-st.first < len(st.data):
		data = slices.Clone(st.data[index+1-st.first:]) // evict may drop them meanwhile
	}
	s.mu.Unlock()
	return func(yield func([]byte, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// SessionClosed implements [mcp.EventStore].
func (s *eventStore) SessionClosed(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if streams := s.sessions[sessionID]; streams != nil {
		streams.each(func(st *eventStream) {
			s.dropMessages(st)
			s.size -= st.fixedCost()
			if st.elem != nil {
				s.lru.Remove(st.elem)
				st.elem = nil
			}
		})
	}
	delete(s.sessions, sessionID)
	for i := range s.written {
		if w := &s.written[i]; w.session == sessionID {
			s.size -= w.cost()
			*w = writtenStream{tick: w.tick}
			s.emptied++
		}
	}
	s.popEmpty()
	if s.emptied > len(s.written)/2 {
		// Most of the log is emptied entries behind a live one: drop
		// them, so that sessions that come and go while an old one's
		// entry stays do not grow it.
		kept := slices.DeleteFunc(s.written, func(w writtenStream) bool { return w.session == "" })
		s.written, s.emptied = kept, 0
	}
	return nil
}

// evict forgets the least recently written streams other than keep,
// and the oldest streams the edge wrote whole, older first, until the
// store is within its budget, or only keep is left to forget (keep nil:
// the newest written stream). Forgetting a standalone stream drops its
// messages and keeps its entry. It must be called with s.mu held.
func (s *eventStore) evict(keep *eventStream) {
	for s.size > s.max {
		e := s.lru.Front()
		if e != nil && e.Value == keep {
			e = e.Next()
		}
		s.popEmpty()
		logged := len(s.written) > 0 && (keep != nil || len(s.written) > 1)
		if logged && (e == nil || s.written[0].tick < e.Value.(*eventStream).tick) {
			s.size -= s.written[0].cost()
			s.written[0] = writtenStream{}
			s.written = s.written[1:]
			continue
		}
		if e == nil {
			return
		}
		st := e.Value.(*eventStream)
		s.lru.Remove(e)
		st.elem = nil
		s.dropMessages(st)
		if st.id != "" {
			s.size -= st.fixedCost()
			if streams := s.sessions[st.session]; streams != nil {
				streams.remove(st.id)
				if streams.len() == 0 {
					delete(s.sessions, st.session)
				}
			}
		}
	}
}

// keepWritten keeps, for a resume, a stream of session sessionID that
// the edge writes whole: one message, msg, which the edge does not modify
// afterwards, after a priming event when primed. It is what Open and an
// Append of each event would keep, without a copy of msg and with one
// entry appended to the written log. It returns the tick that names the
// stream (writtenID).
func (s *eventStore) keepWritten(sessionID string, primed bool, msg []byte) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	w := writtenStream{session: sessionID, msg: msg, primed: primed, prime: primed, tick: s.clock}
	if primed && w.cost() > s.maxOne {
		w.prime = false // as Append drops a stream's oldest message past its quarter
	}
	s.written = append(s.written, w)
	s.size += w.cost()
	s.evict(nil)
	return w.tick
}

// writtenIDLen is the length of a stream id, the SDK's and the store's.
const writtenIDLen = 26

// idDigits are the digits of a stream id: crypto/rand.Text's.
const idDigits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

// writtenID writes to id the stream id of the written stream tick: the
// store's prefix, then tick in base 32, most significant digit first,
// in 13 digits (65 bits).
func (s *eventStore) writtenID(id *[writtenIDLen]byte, tick uint64) {
	n := copy(id[:], s.prefix)
	for i := writtenIDLen - 1; i >= n; i-- {
		id[i] = idDigits[tick&31]
		tick >>= 5
	}
}

// writtenStream returns, as a stream, the entry of the written log named
// by stream id of session, or reports false. The id names the entry's
// tick, which orders the log: a binary search finds it. It must be
// called with s.mu held.
func (s *eventStore) writtenStream(session, id string) (*eventStream, bool) {
	half := writtenIDLen / 2
	if len(id) != writtenIDLen || id[:half] != s.prefix {
		return nil, false
	}
	var tick uint64
	for i := half; i < writtenIDLen; i++ {
		d := strings.IndexByte(idDigits, id[i])
		if d < 0 || (i == half && d > 1) {
			return nil, false
		}
		tick = tick<<5 | uint64(d)
	}
	i, found := slices.BinarySearchFunc(s.written, tick, func(w writtenStream, t uint64) int { return cmp.Compare(w.tick, t) })
	if !found || s.written[i].session != session {
		return nil, false
	}
	w := &s.written[i]
	switch {
	case w.prime:
		return &eventStream{session: session, id: id, data: [][]byte{nil, w.msg}}, true
	case w.primed:
		// Its priming event dropped past the stream's quarter.
		return &eventStream{session: session, id: id, first: 1, data: [][]byte{w.msg}}, true
	}
	return &eventStream{session: session, id: id, data: [][]byte{w.msg}}, true
}

// popEmpty drops the emptied entries at the front of the written log. It
// must be called with s.mu held.
func (s *eventStore) popEmpty() {
	for len(s.written) > 0 && s.written[0].session == "" {
		s.written[0] = writtenStream{}
		s.written = s.written[1:]
		s.emptied--
	}
}

// dropMessages forgets the messages of st, keeping its indices.
func (s *eventStore) dropMessages(st *eventStream) {
	s.size -= st.size
	st.size = 0
	st.first += len(st.data)
	st.data = nil
}

// retained reports what the store counts against its budget, the number of
// streams it holds and the number of messages.
func (s *eventStore) retained() (size int64, streams, messages int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.sessions {
		streams += m.len()
		m.each(func(st *eventStream) { messages += len(st.data) })
	}
	for _, w := range s.written {
		if w.session != "" {
			streams++
			messages++
			if w.prime {
				messages++
			}
		}
	}
	return s.size, streams, messages
}

// streamSet is the streams the event store holds for one session, by
// stream id. Most sessions hold two (the standalone stream and the one
// that answered initialize: the edge's own answers go to the store's log,
// not here), which a short list holds in a few words where a map takes a
// quarter of a KiB; a session with more than fewStreams moves them to a
// map, so that a lookup stays constant-time however many its client opens.
type streamSet struct {
	few  []*eventStream
	many map[string]*eventStream
}

// fewStreams is how many streams a session's set keeps in its list.
const fewStreams = 8

// get returns the stream of id, or nil.
func (ss *streamSet) get(id string) *eventStream {
	if ss == nil {
		return nil
	}
	if ss.many != nil {
		return ss.many[id]
	}
	for _, st := range ss.few {
		if st.id == id {
			return st
		}
	}
	return nil
}

// put adds st, whose id the set does not hold.
func (ss *streamSet) put(st *eventStream) {
	if ss.many == nil && len(ss.few) < fewStreams {
		ss.few = append(ss.few, st)
		return
	}
	if ss.many == nil {
		ss.many = make(map[string]*eventStream, 2*fewStreams)
		for _, o := range ss.few {
			ss.many[o.id] = o
		}
		ss.few = nil
	}
	ss.many[st.id] = st
}

// remove forgets the stream of id, if the set holds it.
func (ss *streamSet) remove(id string) {
	if ss.many != nil {
		delete(ss.many, id)
		return
	}
	ss.few = slices.DeleteFunc(ss.few, func(st *eventStream) bool { return st.id == id })
}

// len reports how many streams the set holds.
func (ss *streamSet) len() int {
	if ss.many != nil {
		return len(ss.many)
	}
	return len(ss.few)
}

// each calls f with every stream of the set, in no particular order.
func (ss *streamSet) each(f func(*eventStream)) {
	for _, st := range ss.few {
		f(st)
	}
	for _, st := range ss.many {
		f(st)
	}
}
