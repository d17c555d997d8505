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
	// closed. sealed is when the state was sealed, by the clock of the
	// instance that sealed it.
	//
	// A store may forget an id once expires has passed, because
	// [Sealer.Open] refuses expired states before calling Use. For the
	// same reason it should return false for an id whose expires has
	// already passed by its own clock: such an id cannot be proven unused.
	//
	// A store that can lose what it recorded (a restart without its data,
	// a flush, a failover to a copy that lags) must notice the loss and
	// from then on return false for every id sealed before it, allowing
	// for the clock skew between the sealing instance and itself: those
	// ids, too, cannot be proven unused. A state sealed after the loss is
	// judged as usual.
	Use(ctx context.Context, id string, sealed, expires time.Time) (bool, error)
}

// processStart is when this process loaded the package: no
// MemoryReplayStore can remember anything from before it.
var processStart = storeStart(time.Now())

// storeStart is t at the precision of a sealed state's time, milliseconds,
// rounded down, so that a state sealed in the millisecond a store was made
// counts as sealed after it.
func storeStart(t time.Time) time.Time { return t.Truncate(time.Millisecond) }

// MemoryReplayStore is the in-process [ReplayStore]. It is safe for
// concurrent use and needs no goroutine: each Use first forgets the ids
// whose expiry has passed (kept in a min-heap by expiry), so it holds only
// unexpired ids and its memory is bounded by the number of states opened
// within one TTL. The zero MemoryReplayStore is ready to use.
//
// It enforces single use within one process only; server instances that
// accept each other's states need a shared store. Its memory starts empty
// when it is made, so it refuses every state sealed before that (the zero
// value: before the process started): after a restart, a state sealed and
// used by the previous process under the same key file is refused, not
// accepted a second time.
type MemoryReplayStore struct {
	now   func() time.Time // time.Now when nil
	start time.Time        // states sealed before it are refused; processStart when zero

	mu   sync.Mutex
	ids  map[string]time.Time
	byEx expiryHeap
	peak int // largest len(ids) since the map was last rebuilt
}

// NewMemoryReplayStore returns an empty in-process store on the system
// clock, which refuses states sealed before it was made.
func NewMemoryReplayStore() *MemoryReplayStore {
	return &MemoryReplayStore{start: storeStart(time.Now())}
}

// shrinkFloor is the size under which the store never rebuilds its map.
const shrinkFloor = 1024

// Use records id as used until expires and reports whether it was unused. It
// returns false for an id already recorded, for an id whose expires has
// passed, and for an id sealed before the store was made. It returns an
// error only when ctx is already done.
func (m *MemoryReplayStore) Use(ctx context.Context, id string, sealed, expires time.Time) (bool, error) {
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
	start := m.start
	if start.IsZero() {
		start = processStart
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	m.forget(t)
	if !t.Before(expires) || sealed.Before(start) {
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
