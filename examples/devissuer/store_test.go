package main

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a settable clock, safe for concurrent use.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: testNow} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestStore(t *testing.T) {
	clk := newFakeClock()
	s := newStore[string](2, time.Minute, clk.Now)

	a, err := s.add("a")
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 26 {
		t.Errorf("id %q: want at least 26 characters (130 bits)", a)
	}
	if v, st := s.get(a); v != "a" || st != found {
		t.Errorf("get = %q, %v; want a, found", v, st)
	}
	if v, st := s.take(a); v != "a" || st != found {
		t.Errorf("take = %q, %v; want a, found", v, st)
	}
	if _, st := s.take(a); st != used {
		t.Errorf("second take: %v, want used", st)
	}
	if _, st := s.get(a); st != used {
		t.Errorf("get after take: %v, want used", st)
	}
	if _, st := s.get("nonsense"); st != missing {
		t.Errorf("unknown id: %v, want missing", st)
	}

	// Full: a used entry still counts until it expires, and a live one is
	// never evicted.
	b, _ := s.add("b")
	if _, err := s.add("c"); !errors.Is(err, errStoreFull) {
		t.Fatalf("third add: %v, want errStoreFull", err)
	}
	clk.Add(time.Minute - time.Nanosecond)
	if _, st := s.get(b); st != found {
		t.Errorf("just before expiry: %v, want found", st)
	}
	clk.Add(time.Nanosecond)
	if _, st := s.get(b); st != missing {
		t.Errorf("at expiry: %v, want missing", st)
	}
	// The expired, used a is swept when room is needed.
	for _, v := range []string{"c", "d"} {
		if _, err := s.add(v); err != nil {
			t.Errorf("add %s after expiry: %v, want room", v, err)
		}
	}
	if _, err := s.add("e"); !errors.Is(err, errStoreFull) {
		t.Errorf("add with two live entries: %v, want errStoreFull", err)
	}
}

func TestStoreConcurrentTake(t *testing.T) {
	s := newStore[int](10, time.Minute, time.Now)
	id, err := s.add(1)
	if err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if _, st := s.take(id); st == found {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Errorf("%d takes found the value, want 1", n)
	}
}
