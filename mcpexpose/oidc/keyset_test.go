package oidc_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// newVerifier returns a verifier of tokens from is whose clock, for token
// validity and for the key set, is clk; fetches are recorded on clk too.
func newVerifier(t *testing.T, is *issuer, clk *clock, opts *oidc.Options) *oidc.Verifier {
	t.Helper()
	var o oidc.Options
	if opts != nil {
		o = *opts
	}
	o.Now = clk.Now
	is.mu.Lock()
	is.now = clk.Now
	is.mu.Unlock()
	v, err := oidc.NewVerifier(context.Background(), is.srv.URL, resource, &o)
	if err != nil {
		t.Fatal(err)
	}
	oidc.SetKeyClock(v, clk.Now, clk.After)
	return v
}

// verification is a Verify running on its own goroutine.
type verification struct {
	done chan struct{}
	ti   *auth.TokenInfo
	err  error
}

func verifyAsync(ctx context.Context, v *oidc.Verifier, token string) *verification {
	vr := &verification{done: make(chan struct{})}
	go func() {
		defer close(vr.done)
		vr.ti, vr.err = v.Verify(ctx, token, nil)
	}()
	return vr
}

func (vr *verification) wait(t *testing.T) (*auth.TokenInfo, error) {
	t.Helper()
	select {
	case <-vr.done:
		return vr.ti, vr.err
	case <-time.After(patience):
		t.Fatalf("Verify has not returned after %s", patience)
		return nil, nil
	}
}

// verifyWaiting verifies token, which must wait for the refetch interval:
// once it waits, the clock moves by the interval. waited reports whether it
// did wait, rather than answer at once.
func verifyWaiting(t *testing.T, v *oidc.Verifier, clk *clock, token string) (ti *auth.TokenInfo, err error, waited bool) {
	t.Helper()
	vr := verifyAsync(context.Background(), v, token)
	waited = clk.waitTimers(t, 1, vr.done)
	if waited {
		clk.Advance(oidc.DefaultKeyRefetchInterval)
	}
	ti, err = vr.wait(t)
	return ti, err, waited
}

// refusedFor checks that err refuses a token, for a reason naming want.
func refusedFor(err error, want string) error {
	switch {
	case err == nil:
		return errors.New("accepted")
	case !errors.Is(err, auth.ErrInvalidToken):
		return fmt.Errorf("err = %v, want auth.ErrInvalidToken", err)
	case !strings.Contains(err.Error(), want):
		return fmt.Errorf("err = %v, want the reason %q", err, want)
	}
	return nil
}

// times returns start, start+d, start+2d, ...: n fetches one interval apart.
func times(start time.Time, d time.Duration, n int) []time.Time {
	var ts []time.Time
	for i := range n {
		ts = append(ts, start.Add(time.Duration(i)*d))
	}
	return ts
}

// TestRotatedKeyAfterUnknownKeyID is issue 28's case: right after a token
// with an unknown kid (which fetched the key set), the issuer publishes a
// key and signs with it. Its token waits for the next fetch the interval
// allows and is accepted; the retired key is then refused. The issuer sees
// one fetch per interval, counted at its JWKS endpoint.
func TestRotatedKeyAfterUnknownKeyID(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rotated func(t *testing.T) signingKey
	}{
		{"ES256 k2", func(t *testing.T) signingKey { return ecKey(t, "k2") }},
		{"rotated RSA key", func(t *testing.T) signingKey { return rsaKey(t, "k1-2026") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := newIssuer(t)
			k1, rotated := rsaKey(t, "k1"), tc.rotated(t)
			is.publish(k1)
			clk := newClock()
			v := newVerifier(t, is, clk, nil)
			start := clk.Now()
			c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": start.Add(time.Hour).Unix()}
			if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
				t.Fatal(err)
			}

			_, err, waited := verifyWaiting(t, v, clk, sign(t, rsaKey(t, "unknown"), c))
			if err := refusedFor(err, "unknown key id"); err != nil {
				t.Errorf("unknown kid: %v", err)
			}
			if !waited {
				t.Error("unknown kid: judged without waiting for the next fetch")
			}

			is.publish(rotated) // k1 retired
			ti, err, waited := verifyWaiting(t, v, clk, sign(t, rotated, c))
			if err != nil {
				t.Errorf("rotated key, right after an unknown kid: %v", err)
			} else if ti.UserID != "s" {
				t.Errorf("rotated key: subject %q", ti.UserID)
			}
			if !waited {
				t.Error("rotated key: judged without waiting for the next fetch")
			}
			if _, err := v.Verify(context.Background(), sign(t, rotated, c), nil); err != nil {
				t.Errorf("rotated key, once cached: %v", err)
			}

			_, err, _ = verifyWaiting(t, v, clk, sign(t, k1, c))
			if err := refusedFor(err, "unknown key id"); err != nil {
				t.Errorf("retired key: %v", err)
			}
			if diff := cmp.Diff(times(start, oidc.DefaultKeyRefetchInterval, 4), is.fetchTimes()); diff != "" {
				t.Errorf("JWKS fetches (-want +got), one per interval:\n%s", diff)
			}
		})
	}
}

// TestUnknownKeyIDStorm sends 100 tokens whose kid the issuer never
// published, all at once and within the refetch interval, with a token
// signed with a key the issuer has just published among them, and counts
// the JWKS fetches at the issuer: one, after the interval, shared by every
// waiting token. A sequential storm gets one fetch per interval.
func TestUnknownKeyIDStorm(t *testing.T) {
	const n = 100
	is := newIssuer(t)
	k1, k2 := rsaKey(t, "k1"), ecKey(t, "k2")
	is.publish(k1)
	clk := newClock()
	v := newVerifier(t, is, clk, nil)
	start := clk.Now()
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": start.Add(time.Hour).Unix()}
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}
	// Forged tokens: 100 distinct unknown kids (one key, for speed).
	forger := rsaKey(t, "")
	forged := make([]string, n)
	for i := range forged {
		forger.kid = fmt.Sprintf("unknown-%d", i)
		forged[i] = sign(t, forger, c)
	}

	t.Run("concurrent, within the interval", func(t *testing.T) {
		is.publish(k1, k2)
		var vs []*verification
		for _, tok := range forged {
			vs = append(vs, verifyAsync(ctx, v, tok))
		}
		rotated := verifyAsync(ctx, v, sign(t, k2, c))
		if !clk.waitTimers(t, n+1, rotated.done) {
			t.Fatalf("the rotated key was judged without waiting: %v", rotated.err)
		}
		if got := is.jwksHits.Load(); got != 1 {
			t.Errorf("%d tokens waiting: %d JWKS fetches, want the first token's only", n+1, got)
		}
		// A known key is judged at once, storm or not.
		if _, err := v.Verify(ctx, sign(t, k1, c), nil); err != nil {
			t.Errorf("known key during the storm: %v", err)
		}
		clk.Advance(oidc.DefaultKeyRefetchInterval)
		for i, vr := range vs {
			if _, err := vr.wait(t); refusedFor(err, "unknown key id") != nil {
				t.Fatalf("forged token %d: %v", i, refusedFor(err, "unknown key id"))
			}
		}
		if _, err := rotated.wait(t); err != nil {
			t.Errorf("rotated key among %d unknown kids: %v", n, err)
		}
		if diff := cmp.Diff(times(start, oidc.DefaultKeyRefetchInterval, 2), is.fetchTimes()); diff != "" {
			t.Errorf("JWKS fetches (-want +got):\n%s", diff)
		}
	})
	t.Run("sequential", func(t *testing.T) {
		const rounds = 5
		for i := range rounds {
			_, err, waited := verifyWaiting(t, v, clk, forged[i])
			if err := refusedFor(err, "unknown key id"); err != nil {
				t.Fatalf("forged token %d: %v", i, err)
			}
			if !waited {
				t.Fatalf("forged token %d: judged without waiting", i)
			}
		}
		if diff := cmp.Diff(times(start, oidc.DefaultKeyRefetchInterval, 2+rounds), is.fetchTimes()); diff != "" {
			t.Errorf("JWKS fetches (-want +got), one per interval:\n%s", diff)
		}
	})
	if got := clk.pending(); got != 0 {
		t.Errorf("%d timers left pending", got)
	}
}

// TestKnownKeyIDIsJudgedAtOnce: a bad signature under a kid the cache has
// is refused without a fetch and without a wait, within the interval and
// after it.
func TestKnownKeyIDIsJudgedAtOnce(t *testing.T) {
	is := newIssuer(t)
	k1, ec := rsaKey(t, "k1"), ecKey(t, "ec1")
	is.publish(k1, ec)
	clk := newClock()
	v := newVerifier(t, is, clk, nil)
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		advance time.Duration
		token   string
	}{
		{"another RSA key under k1, within the interval", 0, sign(t, rsaKey(t, "k1"), c)},
		{"an EC key under k1", 0, sign(t, ecKey(t, "k1"), c)},
		{"another EC key under ec1, after the interval", oidc.DefaultKeyRefetchInterval, sign(t, ecKey(t, "ec1"), c)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk.Advance(tc.advance)
			vr := verifyAsync(context.Background(), v, tc.token)
			if clk.waitTimers(t, 1, vr.done) {
				clk.Advance(oidc.DefaultKeyRefetchInterval) // let it end
				t.Error("a known kid waited for a fetch")
			}
			_, err := vr.wait(t)
			if err := refusedFor(err, "bad signature"); err != nil {
				t.Error(err)
			}
			if got := is.jwksHits.Load(); got != 1 {
				t.Errorf("%d JWKS fetches, want the first token's only", got)
			}
		})
	}
}

// TestKeyIDLessTokens: a token without a kid is tried with every cached
// key; when none verifies it, it waits for a fetch like an unknown kid.
func TestKeyIDLessTokens(t *testing.T) {
	is := newIssuer(t)
	k1, k2 := rsaKey(t, ""), rsaKey(t, "")
	is.publish(k1)
	clk := newClock()
	v := newVerifier(t, is, clk, nil)
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil || is.jwksHits.Load() != 1 {
		t.Errorf("cached key, no kid: err %v, %d fetches, want 1", err, is.jwksHits.Load())
	}
	_, err, waited := verifyWaiting(t, v, clk, sign(t, rsaKey(t, ""), c))
	if err := refusedFor(err, "bad signature"); err != nil || !waited {
		t.Errorf("forged, no kid: %v, waited %v", err, waited)
	}
	is.publish(k2)
	if _, err, waited := verifyWaiting(t, v, clk, sign(t, k2, c)); err != nil || !waited {
		t.Errorf("rotated key, no kid: %v, waited %v", err, waited)
	}
	if got := is.jwksHits.Load(); got != 3 {
		t.Errorf("%d JWKS fetches, want 3", got)
	}
}

// TestFetchInFlightWhenTokenArrives: a fetch that started before a token
// arrived may predate the key that signed it. If it brings the key, the
// token is accepted when it ends, with no further fetch; if not, the token
// waits for a fetch of its own, one interval later, instead of being judged
// on the old one (go-oidc's RemoteKeySet let it share the old one).
func TestFetchInFlightWhenTokenArrives(t *testing.T) {
	for _, tc := range []struct {
		name        string
		brings      bool // the rotated key is published before the fetch in flight began
		wantFetches int
	}{
		{"the fetch in flight brings the key", true, 2},
		{"the fetch in flight predates the key", false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := newIssuer(t)
			k1, k2 := rsaKey(t, "k1"), ecKey(t, "k2")
			is.publish(k1)
			clk := newClock()
			v := newVerifier(t, is, clk, nil)
			joined := make(chan struct{}, 10)
			oidc.SetKeyJoined(v, func() { joined <- struct{}{} })
			start := clk.Now()
			c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": start.Add(time.Hour).Unix()}
			ctx := context.Background()
			if _, err := v.Verify(ctx, sign(t, k1, c), nil); err != nil {
				t.Fatal(err)
			}
			if tc.brings {
				is.publish(k2)
			}
			// An unknown kid starts a fetch after the interval; the issuer
			// holds it, with the set it read as the fetch arrived.
			entered, release := is.holdFetch(t)
			unknown := verifyAsync(ctx, v, sign(t, rsaKey(t, "unknown"), c))
			clk.waitTimers(t, 1, unknown.done)
			clk.Advance(oidc.DefaultKeyRefetchInterval)
			select {
			case <-entered:
			case <-time.After(patience):
				t.Fatal("no fetch after the interval")
			}
			if !tc.brings {
				is.publish(k2)
			}
			rotated := verifyAsync(ctx, v, sign(t, k2, c))
			select {
			case <-joined:
			case <-rotated.done:
				t.Fatalf("the rotated key was judged before the fetch in flight ended: %v", rotated.err)
			case <-time.After(patience):
				t.Fatal("the rotated key's token did not wait for the fetch in flight")
			}
			release()
			if _, err := unknown.wait(t); refusedFor(err, "unknown key id") != nil {
				t.Errorf("unknown kid: %v", refusedFor(err, "unknown key id"))
			}
			if !tc.brings {
				if !clk.waitTimers(t, 1, rotated.done) {
					t.Fatalf("the rotated key was judged on a fetch that began before it arrived: %v", rotated.err)
				}
				clk.Advance(oidc.DefaultKeyRefetchInterval)
			}
			if _, err := rotated.wait(t); err != nil {
				t.Errorf("rotated key: %v", err)
			}
			if diff := cmp.Diff(times(start, oidc.DefaultKeyRefetchInterval, tc.wantFetches), is.fetchTimes()); diff != "" {
				t.Errorf("JWKS fetches (-want +got):\n%s", diff)
			}
			if got := clk.pending(); got != 0 {
				t.Errorf("%d timers left pending", got)
			}
		})
	}
}

// TestWaitEndsWithTheRequest: a token waiting for the interval, or for a
// fetch that hangs, is refused when its request's context ends; its timer
// is freed and no fetch is made for it.
func TestWaitEndsWithTheRequest(t *testing.T) {
	is := newIssuer(t)
	k1 := rsaKey(t, "k1")
	is.publish(k1)
	clk := newClock()
	v := newVerifier(t, is, clk, nil)
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}

	t.Run("waiting for the interval", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		vr := verifyAsync(ctx, v, sign(t, rsaKey(t, "unknown"), c))
		if !clk.waitTimers(t, 1, vr.done) {
			t.Fatalf("answered without waiting: %v", vr.err)
		}
		cancel()
		_, err := vr.wait(t)
		if err := refusedFor(err, "request ended while waiting"); err != nil {
			t.Error(err)
		}
		if got := clk.pending(); got != 0 {
			t.Errorf("%d timers left pending", got)
		}
		if got := is.jwksHits.Load(); got != 1 {
			t.Errorf("%d JWKS fetches, want the first token's only", got)
		}
	})
	t.Run("waiting for a fetch that hangs", func(t *testing.T) {
		joined := make(chan struct{}, 10)
		oidc.SetKeyJoined(v, func() { joined <- struct{}{} })
		entered, _ := is.holdFetch(t)
		clk.Advance(oidc.DefaultKeyRefetchInterval)
		ctx, cancel := context.WithCancel(context.Background())
		vr := verifyAsync(ctx, v, sign(t, rsaKey(t, "unknown"), c))
		select {
		case <-entered:
		case <-time.After(patience):
			t.Fatal("no fetch")
		}
		select {
		case <-joined:
		case <-time.After(patience):
			t.Fatal("the token did not wait for the fetch it started")
		}
		cancel()
		_, err := vr.wait(t)
		if err := refusedFor(err, "request ended while waiting"); err != nil {
			t.Error(err)
		}
	})
}

// TestKeyFetchTimeout: a fetch the issuer never answers is cut, so that it
// does not hold back every later fetch and the tokens waiting for one.
func TestKeyFetchTimeout(t *testing.T) {
	is := newIssuer(t)
	k1 := rsaKey(t, "k1")
	is.publish(k1)
	clk := newClock()
	v := newVerifier(t, is, clk, nil)
	oidc.SetKeyFetchTimeout(v, 50*time.Millisecond)
	entered, release := is.holdFetch(t)
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	// The request's own context never ends: only the cut ends the fetch.
	vr := verifyAsync(context.Background(), v, sign(t, k1, c))
	_, err := vr.wait(t)
	if err := refusedFor(err, "signing keys unavailable"); err != nil {
		t.Fatalf("hung fetch: %v", err)
	}
	<-entered
	release()
	if _, err, _ := verifyWaiting(t, v, clk, sign(t, k1, c)); err != nil {
		t.Errorf("the next fetch, an interval later: %v", err)
	}
	if got := is.jwksHits.Load(); got != 2 {
		t.Errorf("%d JWKS fetches, want 2", got)
	}
}

// TestKeySetDocument: what the JWKS answers. A failed fetch keeps the keys
// cached; keys the set cannot use are left out, the others kept.
func TestKeySetDocument(t *testing.T) {
	k1, k2 := rsaKey(t, "k1"), ecKey(t, "k2")
	pub := func(k signingKey, use string) string {
		b, err := (&jose.JSONWebKey{Key: k.public(), KeyID: k.kid, Algorithm: string(k.alg), Use: use}).MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		status int
		body   string
		// want: the reason a token signed with k2 is refused for, or "" for
		// accepted; k1 (cached before) must keep working when the fetch
		// failed.
		want       string
		keepsCache bool
	}{
		{"server error", 500, `{"keys":[]}`, "signing keys unavailable", true},
		{"not JSON", 200, `<html>`, "signing keys unavailable", true},
		{"no keys member", 200, `{"jwks":[]}`, "signing keys unavailable", true},
		{"too large", 200, `{"keys":[` + pub(k2, "sig") + `],"pad":"` + strings.Repeat("x", 1<<20) + `"}`, "signing keys unavailable", true},
		{"empty set", 200, `{"keys":[]}`, "unknown key id", false},
		{"encryption key", 200, `{"keys":[` + pub(k2, "enc") + `]}`, "unknown key id", false},
		{"symmetric key under the kid", 200, `{"keys":[{"kty":"oct","kid":"k2","k":"c2VjcmV0"}]}`, "unknown key id", false},
		{"unusable keys beside a good one", 200, `{"keys":[{"kty":"OKP","crv":"X448","x":"AA","kid":"x"},{"kty":"EC","crv":"P-256","kid":"broken"},{"kty":"RSA","kid":"k9","alg":"RS256"},` + pub(k2, "sig") + `]}`, "", false},
		{"no use member", 200, `{"keys":[` + pub(k2, "") + `]}`, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := newIssuer(t)
			is.publish(k1)
			clk := newClock()
			v := newVerifier(t, is, clk, nil)
			c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
			if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
				t.Fatal(err)
			}
			is.mu.Lock()
			is.answer = func(w http.ResponseWriter) bool {
				w.WriteHeader(tc.status)
				fmt.Fprint(w, tc.body)
				return true
			}
			is.mu.Unlock()
			_, err, waited := verifyWaiting(t, v, clk, sign(t, k2, c))
			if !waited {
				t.Error("judged without waiting for the next fetch")
			}
			if tc.want == "" {
				if err != nil {
					t.Errorf("k2: %v", err)
				}
			} else if err := refusedFor(err, tc.want); err != nil {
				t.Errorf("k2: %v", err)
			}
			if tc.keepsCache {
				if _, err := v.Verify(context.Background(), sign(t, k1, c), nil); err != nil {
					t.Errorf("k1 after a failed fetch: %v", err)
				}
				return
			}
			_, err, _ = verifyWaiting(t, v, clk, sign(t, k1, c))
			if err := refusedFor(err, "unknown key id"); err != nil {
				t.Errorf("k1, no longer published: %v", err)
			}
		})
	}
}

// TestKeyRefetchInterval: the option is honoured, counted from the end of
// one fetch to the start of the next, and checked.
func TestKeyRefetchInterval(t *testing.T) {
	is := newIssuer(t)
	k1 := rsaKey(t, "k1")
	is.publish(k1)
	clk := newClock()
	v := newVerifier(t, is, clk, &oidc.Options{KeyRefetchInterval: time.Minute})
	start := clk.Now()
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	unknown := sign(t, rsaKey(t, "k9"), c)
	ctx := context.Background()
	if _, err := v.Verify(ctx, unknown, nil); refusedFor(err, "unknown key id") != nil { // the first token fetches at once
		t.Fatal(refusedFor(err, "unknown key id"))
	}
	for _, step := range []struct {
		before, wait time.Duration // the clock moves by before, then the token waits for wait
	}{
		{30 * time.Second, 30 * time.Second}, // waits for the rest of the minute
		{0, time.Minute},
		{59 * time.Second, time.Second},
		{2 * time.Minute, 0}, // long after: fetches at once
	} {
		clk.Advance(step.before)
		if step.wait == 0 {
			if _, err := v.Verify(ctx, unknown, nil); refusedFor(err, "unknown key id") != nil {
				t.Fatal(refusedFor(err, "unknown key id"))
			}
			continue
		}
		// The token waits, and moving the clock by less than the rest of
		// the interval does not end its wait.
		vr := verifyAsync(ctx, v, unknown)
		if !clk.waitTimers(t, 1, vr.done) {
			t.Fatalf("+%s: answered without waiting: %v", step.before, vr.err)
		}
		if step.wait > time.Second {
			clk.Advance(step.wait - time.Second)
			if !clk.waitTimers(t, 1, vr.done) {
				t.Fatalf("+%s: answered %s early: %v", step.before, time.Second, vr.err)
			}
			clk.Advance(time.Second)
		} else {
			clk.Advance(step.wait)
		}
		if _, err := vr.wait(t); refusedFor(err, "unknown key id") != nil {
			t.Fatal(refusedFor(err, "unknown key id"))
		}
	}
	m := time.Minute
	want := []time.Time{start, start.Add(m), start.Add(2 * m), start.Add(3 * m), start.Add(5 * m)}
	if diff := cmp.Diff(want, is.fetchTimes()); diff != "" {
		t.Errorf("JWKS fetches (-want +got):\n%s", diff)
	}
	for _, d := range []time.Duration{-time.Second, 6 * time.Minute} {
		if _, err := oidc.NewVerifier(context.Background(), is.srv.URL, resource, &oidc.Options{KeyRefetchInterval: d}); err == nil || !strings.Contains(err.Error(), "key refetch interval") {
			t.Errorf("KeyRefetchInterval %s: err = %v", d, err)
		}
	}
}
