package execution

import "sync"

// passState is a pass and its reader, allocated together and recycled
// (passes): both are a decode's own, on its goroutine, and nothing keeps
// them, or a pointer into them, once it returns (what it returns, the
// value, the violations, the strings, is allocated apart; ADR 89).
type passState struct {
	p pass
	r reader
}

// passes keeps the passStates of finished decodes for the next.
var passes = sync.Pool{New: func() any { return new(passState) }}

// recycle empties st, dropping what it points to, and keeps it.
func (st *passState) recycle() {
	*st = passState{}
	passes.Put(st)
}
