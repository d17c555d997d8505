package oidc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// defaultKeyRefetchInterval is the least time between two fetches of an
// issuer's key set when [Options.KeyRefetchInterval] is zero.
const defaultKeyRefetchInterval = 5 * time.Second

// maxKeySetSize bounds the JWKS document read from the issuer.
const maxKeySetSize = 1 << 20

// defaultKeyFetchTimeout cuts one key-set fetch whatever the HTTP client's
// own timeout: every token that waits for a fetch waits for this one, and
// no later fetch can start while it hangs.
const defaultKeyFetchTimeout = 30 * time.Second

// The refusals of keySet.VerifySignature. go-oidc flattens a key set's
// error into text (%v), so reason recognises them by these strings.
const (
	unknownKeyID    = "key id not in the issuer's key set"
	badSignature    = "signature does not verify with the key its kid names"
	noKeyVerifies   = "no key in the issuer's key set verifies the signature"
	keysUnavailable = "issuer's key set unavailable"
	waitEnded       = "request ended while waiting for the issuer's key set"
)

// keySet is an issuer's signing keys: the oidc.KeySet that go-oidc's
// IDTokenVerifier checks signatures with, in place of go-oidc's
// RemoteKeySet. Its rules:
//
//   - It caches the keys of the last successful fetch of the JWKS. A fetch
//     replaces them whole, so a key the issuer retired stops working, and a
//     failed fetch leaves them as they were.
//   - A token whose kid names a cached key is judged by that key, at once:
//     a bad signature under a known kid is refused without a fetch or a
//     wait.
//   - A token whose kid is not cached (or that has no kid and no cached key
//     verifies) waits for a fetch that starts after it arrived, and is then
//     judged against that fetch's keys. A fetch in flight when it arrived
//     may already bring its key, and ends the wait early.
//   - Fetches run one at a time and start at least interval after the
//     previous one ended; every token waiting for a fetch shares it. The
//     first token fetches at once.
//
// So a key the issuer publishes before signing with it is accepted on its
// first token, however soon after another fetch: its token waits, at most
// the rest of the interval plus the fetch in flight and its own (each cut
// at fetchTimeout), and never longer than the request's context. The price
// of the limit is that wait, not a refusal.
//
// What a storm of tokens with unknown kids costs: the issuer sees at most
// one fetch per interval, whatever the rate, and the server one goroutine
// per fetch. Each such request is held, on its own goroutine and with one
// stopped-on-return timer, until the next fetch (at most about one
// interval), and then refused. The requests held are those in flight, which
// only the HTTP server's own limits bound.
//
// go-oidc's RemoteKeySet could not give these rules: it fetches whenever
// its cache fails, so a limit could only refuse, from inside its HTTP
// client; and it hands a fetch's keys to its waiters before it clears the
// fetch and stores the keys, so the next token could share the old fetch
// and miss a key just published (ADR 29).
//
// It is safe for concurrent use.
type keySet struct {
	url          string
	client       *http.Client
	ctx          context.Context // for fetches: values only, never cancelled
	algs         []jose.SignatureAlgorithm
	interval     time.Duration
	fetchTimeout time.Duration
	// now and after are the monotonic clock the interval is measured on,
	// and a timer on it (its channel, and a stop that frees it); tests
	// replace both with a manual clock.
	now   func() time.Time
	after func(time.Duration) (<-chan time.Time, func() bool)
	// joined, when set, is called as a token starts waiting for a fetch
	// in flight; tests wait for it.
	joined func()

	mu       sync.Mutex
	keys     []jose.JSONWebKey // of the last successful fetch; never modified, only replaced
	err      error             // of the last fetch, nil when it succeeded
	started  int               // fetches started
	fetched  int               // fetches ended; equal to started but while one is in flight
	last     time.Time         // when the last fetch ended
	inflight chan struct{}     // closed when the fetch in flight ends; nil when none is
}

func newKeySet(ctx context.Context, url string, client *http.Client, algs []string, interval time.Duration) *keySet {
	if client == nil {
		client = http.DefaultClient
	}
	k := &keySet{
		url:          url,
		client:       client,
		ctx:          context.WithoutCancel(ctx),
		interval:     interval,
		fetchTimeout: defaultKeyFetchTimeout,
		now:          time.Now,
		after: func(d time.Duration) (<-chan time.Time, func() bool) {
			t := time.NewTimer(d)
			return t.C, t.Stop
		},
	}
	for _, a := range algs {
		k.algs = append(k.algs, jose.SignatureAlgorithm(a))
	}
	return k
}

// VerifySignature implements oidc.KeySet. go-oidc has already checked the
// token's algorithm and parsed it; it keeps that parse to itself, so the
// token is parsed again here.
func (k *keySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(jwt, k.algs)
	if err != nil {
		return nil, fmt.Errorf("oidc: malformed jwt: %v", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("oidc: malformed jwt: not exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID

	k.mu.Lock()
	need := k.started + 1 // a fetch that starts after this token arrived
	tried := -1           // the fetch whose keys this token was last tried with
	for {
		if k.fetched != tried {
			keys, gen := k.keys, k.fetched
			k.mu.Unlock()
			payload, named := verifyWith(jws, kid, keys)
			switch {
			case payload != nil:
				return payload, nil
			case named:
				return nil, errors.New("oidc: " + badSignature)
			}
			tried = gen
			k.mu.Lock()
			continue
		}
		if k.fetched >= need { // judged against a fetch that began after it arrived
			err := k.err
			k.mu.Unlock()
			switch {
			case err != nil:
				return nil, fmt.Errorf("oidc: %s: %w", keysUnavailable, err)
			case kid == "":
				return nil, errors.New("oidc: " + noKeyVerifies)
			}
			return nil, errors.New("oidc: " + unknownKeyID)
		}
		if done := k.inflight; done != nil {
			k.mu.Unlock()
			if k.joined != nil {
				k.joined()
			}
			select {
			case <-done:
			case <-ctx.Done():
				return nil, errors.New("oidc: " + waitEnded)
			}
			k.mu.Lock()
			continue
		}
		wait := k.interval - k.now().Sub(k.last)
		if k.started == 0 || wait <= 0 {
			k.start()
			continue
		}
		fire, stop := k.after(wait)
		k.mu.Unlock()
		select {
		case <-fire:
		case <-ctx.Done():
			stop()
			return nil, errors.New("oidc: " + waitEnded)
		}
		k.mu.Lock()
	}
}

// start begins a fetch; k.mu is held. The fetch runs on its own goroutine
// so that it serves every token waiting for it, whichever of them gives up.
func (k *keySet) start() {
	done := make(chan struct{})
	k.inflight = done
	k.started++
	go func() {
		keys, err := k.fetch()
		k.mu.Lock()
		if err == nil {
			k.keys = keys
		}
		k.err = err
		k.fetched = k.started
		k.last = k.now()
		k.inflight = nil
		k.mu.Unlock()
		close(done)
	}()
}

// verifyWith verifies jws with the keys named by kid, or with every key
// when kid is empty. named reports whether kid names a key in keys.
func verifyWith(jws *jose.JSONWebSignature, kid string, keys []jose.JSONWebKey) (payload []byte, named bool) {
	for i := range keys {
		if kid != "" {
			if keys[i].KeyID != kid {
				continue
			}
			named = true
		}
		if p, err := jws.Verify(&keys[i]); err == nil {
			return p, named
		}
	}
	return nil, named
}

func (k *keySet) fetch() ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(k.ctx, k.fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxKeySetSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the JWKS: %w", err)
	}
	if len(body) > maxKeySetSize {
		return nil, fmt.Errorf("the JWKS is larger than %d bytes", maxKeySetSize)
	}
	return parseKeySet(body)
}

// parseKeySet reads a JWKS document (RFC 7517) into its public signing
// keys. Keys it cannot use are left out, as RFC 7517 section 5 asks: an
// unknown or unsupported type or curve, missing members, a symmetric key,
// or one whose "use" is encryption.
func parseKeySet(body []byte) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys *[]json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("decoding the JWKS: %v", err)
	}
	if doc.Keys == nil {
		return nil, errors.New("the JWKS has no \"keys\" member")
	}
	var keys []jose.JSONWebKey
	for _, raw := range *doc.Keys {
		var k jose.JSONWebKey
		if err := json.Unmarshal(raw, &k); err != nil || k.Use == "enc" {
			continue
		}
		if pub := k.Public(); pub.Valid() {
			keys = append(keys, pub)
		}
	}
	return keys, nil
}
