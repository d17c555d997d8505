package mcpexpose

import "slices"

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
