package oidc_test

import (
	"sync"
	"testing"
	"time"
)

// patience bounds every wait for an event in these tests. It is never
// reached when the code is right; it only turns a hang into a failure.
const patience = time.Minute

// clock is a manual clock: Now for Options.Now and the key set, After for
// the key set's timers, which fire when Advance passes their time.
type clock struct {
	mu      sync.Mutex
	t       time.Time
	timers  map[*timer]struct{}
	changed chan struct{} // closed, and replaced, when timers change
}

type timer struct {
	at time.Time
	c  chan time.Time
}

func newClock() *clock {
	return &clock{t: time.Now(), timers: map[*timer]struct{}{}, changed: make(chan struct{})}
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) After(d time.Duration) (<-chan time.Time, func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tm := &timer{at: c.t.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		tm.c <- c.t
		return tm.c, func() bool { return false }
	}
	c.timers[tm] = struct{}{}
	c.signal()
	return tm.c, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, pending := c.timers[tm]
		delete(c.timers, tm)
		c.signal()
		return pending
	}
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	for tm := range c.timers {
		if !tm.at.After(c.t) {
			tm.c <- c.t
			delete(c.timers, tm)
		}
	}
	c.signal()
}

// signal wakes waitTimers; c.mu is held.
func (c *clock) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitTimers waits until exactly n timers are pending: n tokens wait for
// the refetch interval to pass. It returns false, without waiting longer,
// as soon as answered is ready.
func (c *clock) waitTimers(t *testing.T, n int, answered <-chan struct{}) bool {
	t.Helper()
	deadline := time.After(patience)
	for {
		c.mu.Lock()
		pending, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if pending == n {
			return true
		}
		select {
		case <-changed:
		case <-answered:
			return false
		case <-deadline:
			t.Fatalf("%d key-set timers pending after %s, want %d", pending, patience, n)
		}
	}
}

func (c *clock) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
