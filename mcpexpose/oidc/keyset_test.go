package oidc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/oidc"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// clock is a manual clock for Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// eventually retries try, for at most 5 s, until it reports true. go-oidc
// hands a finished fetch's result to waiters before it clears the fetch, so
// a call made in that instant shares the previous (refused) fetch instead
// of starting one; the next call starts it. It also stores a fetched set
// just after handing it over. Only such retries are allowed: the clock, and
// so the refetch limit, does not move meanwhile.
func eventually(t *testing.T, try func() bool) bool {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if try() {
			return true
		}
	}
	return false
}

// TestUnknownKeyIDStorm sends 100 tokens whose kid the issuer never
// published, one after another and all at once, and counts the JWKS fetches
// at the issuer: at most one per refetch interval. A real rotation is still
// picked up, once the interval has passed, without a restart.
func TestUnknownKeyIDStorm(t *testing.T) {
	const n = 100
	is := newIssuer(t)
	k1, k2 := rsaKey(t, "k1"), rsaKey(t, "k2")
	is.publish(k1)
	clk := newClock()
	v, err := oidc.NewVerifier(context.Background(), is.srv.URL, resource, &oidc.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, k1, c), nil); err != nil {
		t.Fatal(err)
	}
	if got := is.jwksHits.Load(); got != 1 {
		t.Fatalf("first token: %d JWKS fetches, want 1", got)
	}
	// Forged tokens: 100 distinct unknown kids (one key, for speed).
	forger := rsaKey(t, "")
	forged := make([]string, n)
	for i := range forged {
		forger.kid = fmt.Sprintf("unknown-%d", i)
		forged[i] = sign(t, forger, c)
	}
	refused := func(tok string) error {
		_, err := v.Verify(ctx, tok, nil)
		if err == nil {
			return errors.New("a forged token was accepted")
		}
		if !errors.Is(err, auth.ErrInvalidToken) {
			return fmt.Errorf("err = %v, want auth.ErrInvalidToken", err)
		}
		return nil
	}

	t.Run("sequential, within the interval", func(t *testing.T) {
		before := is.jwksHits.Load()
		for _, tok := range forged {
			if err := refused(tok); err != nil {
				t.Fatal(err)
			}
		}
		if got := is.jwksHits.Load() - before; got != 0 {
			t.Errorf("%d tokens with unknown kids within the interval: %d JWKS fetches, want 0", n, got)
		}
	})
	t.Run("sequential, after the interval", func(t *testing.T) {
		clk.Advance(oidc.DefaultKeyRefetchInterval)
		before := is.jwksHits.Load()
		for _, tok := range forged {
			if err := refused(tok); err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, func() bool { return is.jwksHits.Load() > before || refused(forged[0]) != nil })
		if got := is.jwksHits.Load() - before; got != 1 {
			t.Errorf("%d tokens with unknown kids: %d JWKS fetches, want 1", n, got)
		}
	})
	t.Run("concurrent, after the interval", func(t *testing.T) {
		clk.Advance(oidc.DefaultKeyRefetchInterval)
		before := is.jwksHits.Load()
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for _, tok := range forged {
			wg.Go(func() { errs <- refused(tok) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		eventually(t, func() bool { return is.jwksHits.Load() > before || refused(forged[0]) != nil })
		if got := is.jwksHits.Load() - before; got != 1 {
			t.Errorf("%d concurrent tokens with unknown kids: %d JWKS fetches, want 1", n, got)
		}
	})
	t.Run("known key still accepted without a fetch", func(t *testing.T) {
		before := is.jwksHits.Load()
		if _, err := v.Verify(ctx, sign(t, k1, c), nil); err != nil {
			t.Fatal(err)
		}
		if got := is.jwksHits.Load() - before; got != 0 {
			t.Errorf("%d JWKS fetches for a cached key", got)
		}
	})
	t.Run("rotation", func(t *testing.T) {
		is.publish(k2) // k1 retired
		rotated := sign(t, k2, c)
		before := is.jwksHits.Load()
		// Within the interval of the last fetch the new key is not known yet.
		_, err := v.Verify(ctx, rotated, nil)
		if err == nil || !strings.Contains(err.Error(), "key set fetched recently") {
			t.Errorf("rotated key within the interval: err = %v, want a refusal naming the refetch limit", err)
		}
		clk.Advance(oidc.DefaultKeyRefetchInterval)
		if !eventually(t, func() bool { _, err = v.Verify(ctx, rotated, nil); return err == nil }) {
			t.Fatalf("rotated key after the interval refused: %v", err)
		}
		if got := is.jwksHits.Load() - before; got != 1 {
			t.Errorf("rotation: %d JWKS fetches, want 1", got)
		}
		// The refetch replaced the cache: the retired key is refused,
		// without a fetch (within the interval). go-oidc stores the fetched
		// set just after handing it to the waiting token, so the retired key
		// may still verify for that instant.
		retired := sign(t, k1, c)
		if !eventually(t, func() bool { return refused(retired) == nil }) {
			t.Error("the retired key is still accepted")
		}
		if got := is.jwksHits.Load() - before; got != 1 {
			t.Errorf("retired key: %d JWKS fetches in all, want 1", got)
		}
	})
}

// TestKeyRefetchInterval: the option is honoured, and checked.
func TestKeyRefetchInterval(t *testing.T) {
	is := newIssuer(t)
	k1 := rsaKey(t, "k1")
	is.publish(k1)
	clk := newClock()
	v, err := oidc.NewVerifier(context.Background(), is.srv.URL, resource, &oidc.Options{Now: clk.Now, KeyRefetchInterval: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{"iss": is.srv.URL, "sub": "s", "aud": resource, "exp": clk.Now().Add(time.Hour).Unix()}
	unknown := sign(t, rsaKey(t, "k9"), c)
	ctx := context.Background()
	for _, step := range []struct {
		advance time.Duration
		want    int32 // JWKS fetches in all
	}{
		{0, 1},                // the first token fetches
		{30 * time.Second, 1}, // within the minute
		{30 * time.Second, 2}, // a minute after the first
		{59 * time.Second, 2},
		{time.Second, 3},
	} {
		clk.Advance(step.advance)
		eventually(t, func() bool {
			if _, err := v.Verify(ctx, unknown, nil); err == nil {
				t.Fatal("unknown key accepted")
			}
			return is.jwksHits.Load() == step.want
		})
		// Once more: within the interval of what just happened, no fetch.
		if _, err := v.Verify(ctx, unknown, nil); err == nil {
			t.Fatal("unknown key accepted")
		}
		if got := is.jwksHits.Load(); got != step.want {
			t.Errorf("after +%s: %d JWKS fetches, want %d", step.advance, got, step.want)
		}
	}
	for _, d := range []time.Duration{-time.Second, 6 * time.Minute} {
		if _, err := oidc.NewVerifier(context.Background(), is.srv.URL, resource, &oidc.Options{KeyRefetchInterval: d}); err == nil || !strings.Contains(err.Error(), "key refetch interval") {
			t.Errorf("KeyRefetchInterval %s: err = %v", d, err)
		}
	}
}
