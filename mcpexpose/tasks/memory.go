package tasks

import (
	"context"
	"sync"
	"time"
)

// MemoryOptions configures a [Memory] store. A nil *MemoryOptions means
// the defaults.
type MemoryOptions struct {
	// Now is the clock expiry is measured with. Default: time.Now.
	Now func() time.Time
}

// Memory is a [Store] in this process's memory: tasks are not shared with
// other instances and do not survive a restart. Expired tasks are forgotten
// when next looked up, and swept when tasks are created.
//
// A Memory is safe for concurrent use.
type Memory struct {
	now func() time.Time

	mu      sync.Mutex
	tasks   map[string]*Task
	creates int
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store.
func NewMemory(opts *MemoryOptions) *Memory {
	m := &Memory{now: time.Now, tasks: map[string]*Task{}}
	if opts != nil && opts.Now != nil {
		m.now = opts.Now
	}
	return m
}

// Create implements [Store].
func (m *Memory) Create(_ context.Context, t *Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.creates++; m.creates%64 == 0 {
		for id, old := range m.tasks {
			if !now.Before(old.ExpiresAt) {
				delete(m.tasks, id)
			}
		}
	}
	if old, ok := m.tasks[t.ID]; ok && now.Before(old.ExpiresAt) {
		return ErrExists
	}
	m.tasks[t.ID] = t.clone()
	return nil
}

// lookup returns the live task with id; m.mu is held.
func (m *Memory) lookup(id string) (*Task, bool) {
	t, ok := m.tasks[id]
	if !ok {
		return nil, false
	}
	if !m.now().Before(t.ExpiresAt) {
		delete(m.tasks, id)
		return nil, false
	}
	return t, true
}

// Get implements [Store].
func (m *Memory) Get(_ context.Context, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lookup(id)
	if !ok {
		return nil, ErrNotFound
	}
	return t.clone(), nil
}

// Update implements [Store].
func (m *Memory) Update(_ context.Context, id string, change func(*Task) error) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.lookup(id)
	if !ok {
		return nil, ErrNotFound
	}
	next := t.clone()
	if err := change(next); err != nil {
		return nil, err
	}
	m.tasks[id] = next
	return next.clone(), nil
}
