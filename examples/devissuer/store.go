package main

import (
	"crypto/rand"
	"errors"
	"sync"
	"time"
)

// errStoreFull is returned by store.add when the store holds its maximum
// of live entries.
var errStoreFull = errors.New("too many requests in flight")

// lookup is the outcome of store.take.
type lookup int

const (
	found   lookup = iota // the value, now marked used
	missing               // never stored, or expired
	used                  // taken before
)

// store is a bounded map of short-lived values under random ids: the
// pending authorization requests and the authorization codes. A taken
// entry stays, marked used, until it expires, so that a second take can
// say "already used" rather than "unknown". It is safe for concurrent use.
type store[V any] struct {
	now func() time.Time
	ttl time.Duration
	max int

	mu      sync.Mutex
	entries map[string]*storeEntry[V]
}

type storeEntry[V any] struct {
	value   V
	expires time.Time
	used    bool
}

func newStore[V any](max int, ttl time.Duration, now func() time.Time) *store[V] {
	return &store[V]{now: now, ttl: ttl, max: max, entries: make(map[string]*storeEntry[V])}
}

// add stores v under a fresh id of 130 random bits and returns the id. It
// refuses with errStoreFull rather than evict a live entry: evicting would
// silently break a sign-in in progress.
func (s *store[V]) add(v V) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if len(s.entries) >= s.max {
		for id, e := range s.entries {
			if !now.Before(e.expires) {
				delete(s.entries, id)
			}
		}
		if len(s.entries) >= s.max {
			return "", errStoreFull
		}
	}
	id := rand.Text()
	s.entries[id] = &storeEntry[V]{value: v, expires: now.Add(s.ttl)}
	return id, nil
}

// get returns the value under id, without taking it, unless it expired or
// was taken.
func (s *store[V]) get(id string) (V, lookup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookup(id, false)
}

// take returns the value under id and marks it used: of concurrent takes
// of one id, exactly one is found.
func (s *store[V]) take(id string) (V, lookup) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lookup(id, true)
}

func (s *store[V]) lookup(id string, take bool) (V, lookup) {
	var zero V
	e, ok := s.entries[id]
	if !ok {
		return zero, missing
	}
	if !s.now().Before(e.expires) {
		delete(s.entries, id)
		return zero, missing
	}
	if e.used {
		return zero, used
	}
	e.used = take
	return e.value, found
}
