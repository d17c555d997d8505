package requeststate

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func TestMemoryReplayStoreForgetsExpired(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	now := t0
	m := &MemoryReplayStore{now: func() time.Time { return now }, start: t0}
	use := func(id string, expires time.Time) bool {
		t.Helper()
		ok, err := m.Use(ctx, id, now, expires)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}

	steps := []struct {
		name     string
		at       time.Duration // clock, from t0
		ids      int           // fresh ids to use, each expiring at expireAt
		expireAt time.Duration
		wantSize int
	}{
		{"2000 ids for one minute", 0, 2000, time.Minute, 2000},
		{"10 ids for ten minutes", 30 * time.Second, 10, 10 * time.Minute, 2010},
		{"one minute later: the first batch is gone", 2 * time.Minute, 1, 3 * time.Minute, 11},
		{"an hour later: all gone but the new one", time.Hour, 1, time.Hour + time.Minute, 1},
	}
	for i, st := range steps {
		now = t0.Add(st.at)
		for j := range st.ids {
			if !use(fmt.Sprintf("step%d-%d", i, j), t0.Add(st.expireAt)) {
				t.Fatalf("%s: fresh id refused", st.name)
			}
		}
		if got := m.size(); got != st.wantSize {
			t.Fatalf("%s: size = %d, want %d", st.name, got, st.wantSize)
		}
		if len(m.byEx) != len(m.ids) {
			t.Fatalf("%s: heap holds %d entries, map %d", st.name, len(m.byEx), len(m.ids))
		}
	}
	// The map was rebuilt after shrinking below a quarter of its peak.
	if m.peak > shrinkFloor {
		t.Fatalf("peak = %d after shrinking to %d: map not rebuilt", m.peak, len(m.ids))
	}

	// An id in the store is refused until it expires; an expired one is
	// refused too (it cannot be proven unused), and then forgotten.
	now = t0.Add(2 * time.Hour)
	if !use("x", now.Add(time.Minute)) || use("x", now.Add(time.Minute)) {
		t.Fatal("single use broken")
	}
	now = now.Add(time.Minute)
	if use("x", now) {
		t.Fatal("an id at its expiry was accepted")
	}
	if got := m.size(); got != 0 {
		t.Fatalf("size after everything expired = %d, want 0", got)
	}
}

// The default store of a Sealer runs on the Sealer's clock.
func TestDefaultStoreUsesSealerClock(t *testing.T) {
	key, err := GenerateKey("k")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := NewKeyRing(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := NewSealer(ring, &Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	m, ok := s.replay.(*MemoryReplayStore)
	if !ok {
		t.Fatalf("default store is %T", s.replay)
	}
	state, err := s.Seal(Binding{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Open(context.Background(), state, Binding{}); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if m.size() != 1 {
		t.Fatalf("store size = %d, want 1", m.size())
	}
	now = now.Add(defaultTTL)
	state2, _ := s.Seal(Binding{}, nil)
	if _, err := s.Open(context.Background(), state2, Binding{}); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if m.size() != 1 {
		t.Fatalf("store size after the first id expired = %d, want 1", m.size())
	}
}
