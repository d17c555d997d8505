package oidc

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// DefaultKeyRefetchInterval is the least time between two fetches of an
// issuer's key set.
const DefaultKeyRefetchInterval = 5 * time.Second

// errRecentlyFetched refuses a key-set fetch within the refetch interval.
// go-oidc flattens it into text; reason recognises it by refetchLimited.
var errRecentlyFetched = errors.New("oidc: " + refetchLimited)

const refetchLimited = "key set fetched again too soon"

// keyFetches is the transport of the HTTP client that go-oidc's
// RemoteKeySet fetches the JWKS with: it lets at most one fetch through per
// interval and refuses the others without a request.
//
// go-oidc fetches the key set whenever no cached key verifies a token (an
// unknown kid, or a forged signature under a known one). It coalesces
// concurrent fetches but not sequential ones, so every such token would
// cost the issuer one unauthenticated request. A wrapper of the
// oidc.KeySet interface cannot stop that: RemoteKeySet has no cache-only
// verification, it fetches as soon as its cache fails. Its one outgoing
// door is this client, so that is where the limit sits; go-oidc keeps its
// cache, its JWKS parsing and its coalescing. A refused fetch fails the
// RemoteKeySet's refresh, which leaves its cache as it was.
//
// The client is used for the key set only (discovery has its own), so
// every first-hop request here is a JWKS fetch. Redirect hops belong to
// the fetch that caused them and go through.
//
// It is safe for concurrent use.
type keyFetches struct {
	next     http.RoundTripper
	interval time.Duration
	now      func() time.Time

	mu       sync.Mutex
	inflight bool
	last     time.Time // when the last fetch ended (or began, while in flight)
}

// keyClient returns a copy of base (http.DefaultClient when nil) whose
// key-set fetches are limited to one per interval.
func keyClient(base *http.Client, interval time.Duration, now func() time.Time) *http.Client {
	if base == nil {
		base = http.DefaultClient
	}
	c := *base
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &keyFetches{next: next, interval: interval, now: now}
	return &c
}

func (k *keyFetches) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Response != nil { // a redirect of a fetch already let through
		return k.next.RoundTrip(req)
	}
	if err := k.begin(); err != nil {
		if req.Body != nil {
			req.Body.Close() // RoundTrip must close it, even on error
		}
		return nil, err
	}
	defer k.end()
	return k.next.RoundTrip(req)
}

func (k *keyFetches) begin() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.inflight {
		return errRecentlyFetched
	}
	if !k.last.IsZero() {
		// A clock that went back counts as within the interval: refusing
		// is the safe side, and the interval ends once the clock is past it.
		if since := k.now().Sub(k.last); since < k.interval {
			return fmt.Errorf("%w (%s ago, the least interval is %s)", errRecentlyFetched, since.Round(time.Millisecond), k.interval)
		}
	}
	k.inflight = true
	k.last = k.now()
	return nil
}

func (k *keyFetches) end() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.inflight = false
	k.last = k.now()
}
