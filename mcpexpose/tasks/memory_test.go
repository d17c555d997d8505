package tasks

import (
	"testing"
	"time"
)

// TestMemoryStoreForgetsExpiredTasks: an expired task is not found, its id
// may be created again, and the store no longer holds it.
func TestMemoryStoreForgetsExpiredTasks(t *testing.T) {
	now := time.Now()
	m := NewMemory(&MemoryOptions{Now: func() time.Time { return now }})
	ctx := t.Context()
	if err := m.Create(ctx, &Task{ID: "x", ExpiresAt: now.Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, &Task{ID: "x", ExpiresAt: now.Add(time.Second)}); err != ErrExists {
		t.Fatalf("second Create = %v, want ErrExists", err)
	}
	now = now.Add(time.Second)
	if _, err := m.Get(ctx, "x"); err != ErrNotFound {
		t.Fatalf("Get after expiry = %v", err)
	}
	m.mu.Lock()
	held := len(m.tasks)
	m.mu.Unlock()
	if held != 0 {
		t.Errorf("%d tasks held after expiry", held)
	}
}
