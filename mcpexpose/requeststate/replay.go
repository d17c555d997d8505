package requeststate

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// ReplayStore enforces single use across one or several server instances.
// Instances that open each other's states must share one store (for example
// a database or cache with an atomic insert-if-absent and expiry).
type ReplayStore interface {
	// Use records id as used until expires. It returns false when id was
	// already used. An error means the store cannot tell; callers fail
	// closed.
	//
	// A store may forget an id once expires has passed, because
	// [Sealer.Open] refuses expired states before calling Use. For the
	// same reason it should return false for an id whose expires has
	// already passed by its own clock: such an id cannot be proven unused.
	Use(ctx context.Context, id string, expires time.Time) (bool, error)
}

// MemoryReplayStore is the in-process [ReplayStore]. It is safe for
// concurrent use and needs no goroutine: each Use first forgets the ids
// whose expiry has passed (kept in a min-heap by expiry), so it holds only
// unexpired ids and its memory is bounded by the number of states opened
// within one TTL. The zero MemoryReplayStore is ready to use.
//
// It enforces single use within one process only; server instances that
// accept each other's states need a shared store.
type MemoryReplayStore struct {
	now func() time.Time // time.Now when nil

	mu   sync.Mutex
	ids  map[string]time.Time
	byEx expiryHeap
	peak int // largest len(ids) since the map was last rebuilt
}

// NewMemoryReplayStore returns an empty in-process store on the system clock.
func NewMemoryReplayStore() *MemoryReplayStore { return &MemoryReplayStore{} }

// shrinkFloor is the size under which the store never rebuilds its map.
const shrinkFloor = 1024

// Use records id as used until expires and reports whether it was unused. It
// returns false for an id already recorded and for an id whose expires has
// passed. It returns an error only when ctx is already done.
func (m *MemoryReplayStore) Use(ctx context.Context, id string, expires time.Time) (bool, error) {
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return false, err
		}
	}
	now := time.Now
	if m.now != nil {
		now = m.now
	}
	t := now()

	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(t)
	if !t.Before(expires) {
		return false, nil
	}
	if _, used := m.ids[id]; used {
		return false, nil
	}
	if m.ids == nil {
		m.ids = make(map[string]time.Time)
	}
	m.ids[id] = expires
	heap.Push(&m.byEx, expiryEntry{id: id, expires: expires})
	m.peak = max(m.peak, len(m.ids))
	return true, nil
}

// forget drops the ids that expired at or before t. Go maps do not give
// memory back as they empty, so when the store has shrunk to a quarter of its
// peak, the map and heap are rebuilt at their current size.
func (m *MemoryReplayStore) forget(t time.Time) {
	for len(m.byEx) > 0 && !t.Before(m.byEx[0].expires) {
		e := heap.Pop(&m.byEx).(expiryEntry)
		delete(m.ids, e.id)
	}
	if m.peak > shrinkFloor && len(m.ids) <= m.peak/4 {
		ids := make(map[string]time.Time, len(m.ids))
		for id, ex := range m.ids {
			ids[id] = ex
		}
		m.ids = ids
		m.byEx = append(expiryHeap(nil), m.byEx...)
		m.peak = len(m.ids)
	}
}

// size is the number of ids the store holds.
func (m *MemoryReplayStore) size() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.ids)
}

type expiryEntry struct {
	id      string
	expires time.Time
}

// expiryHeap is a min-heap of ids by expiry, for container/heap.
type expiryHeap []expiryEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiryEntry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = expiryEntry{} // release the id string
	*h = old[:len(old)-1]
	return e
}
