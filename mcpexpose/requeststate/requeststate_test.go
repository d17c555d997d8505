package requeststate_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

// t0 is well in the past, so the tests also show that the default replay
// store runs on the Sealer's clock, not the system's.
var t0 = time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)

var bind = requeststate.Binding{
	Method:          "tools/call",
	Target:          "deploy",
	ArgumentsDigest: "sha256:9f86d081884c7d65",
	PrincipalID:     "alice",
	PrincipalIssuer: "https://issuer.example",
	Audience:        "https://mcp.example/mcp",
}

// clock is a settable Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

// newRealClock is a settable clock near the system time, for sealers given
// a NewMemoryReplayStore, which runs on the system clock. It starts a
// minute ahead, so that the states it seals come after the stores a test
// makes next (a store refuses states sealed before it was made).
func newRealClock() *clock { return &clock{t: time.Now().Add(time.Minute).Truncate(time.Second)} }

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

// countingStore is a ReplayStore that counts calls and remembers the last
// arguments, delegating to a MemoryReplayStore or failing with err.
type countingStore struct {
	calls   atomic.Int32
	err     error
	fresh   bool // returned with err
	mu      sync.Mutex
	ids     []string
	sealed  time.Time
	expires time.Time
	next    *requeststate.MemoryReplayStore
}

func (s *countingStore) Use(ctx context.Context, id string, sealed, expires time.Time) (bool, error) {
	s.calls.Add(1)
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.sealed, s.expires = sealed, expires
	s.mu.Unlock()
	if s.err != nil {
		return s.fresh, s.err
	}
	return s.next.Use(ctx, id, sealed, expires)
}

func mustKey(t testing.TB, id string) requeststate.Key {
	t.Helper()
	k, err := requeststate.GenerateKey(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustRing(t testing.TB, current requeststate.Key, previous ...requeststate.Key) *requeststate.KeyRing {
	t.Helper()
	r, err := requeststate.NewKeyRing(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustSealer(t testing.TB, ring *requeststate.KeyRing, c *clock, store requeststate.ReplayStore) *requeststate.Sealer {
	t.Helper()
	s, err := requeststate.NewSealer(ring, &requeststate.Options{Now: c.Now, Replay: store})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustSeal(t testing.TB, s *requeststate.Sealer, b requeststate.Binding, data []byte) string {
	t.Helper()
	state, err := s.Seal(b, data)
	if err != nil {
		t.Fatal(err)
	}
	return state
}

func wantInvalid(t *testing.T, data []byte, err error) {
	t.Helper()
	if !errors.Is(err, requeststate.ErrInvalid) || data != nil {
		t.Fatalf("Open = %q, %v; want nil, ErrInvalid", data, err)
	}
	if err.Error() != "invalid request state" {
		t.Fatalf("error message %q reveals more than %q", err, "invalid request state")
	}
}

func decode(t testing.TB, state string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.Strict().DecodeString(state)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func encode(raw []byte) string { return base64.RawURLEncoding.EncodeToString(raw) }

func TestSealOpenRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"one byte", []byte("x")},
		{"json", []byte(`{"step":2,"answers":["yes"]}`)},
		{"every byte value", all},
		{"40 KiB", bytes.Repeat([]byte("abcdefgh"), 5<<10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := mustKey(t, "k-1")
			s := mustSealer(t, mustRing(t, key), newClock(), nil)
			state := mustSeal(t, s, bind, tt.data)

			raw := decode(t, state)
			if raw[0] != 2 || int(raw[1]) != len("k-1") || string(raw[2:5]) != "k-1" {
				t.Fatalf("header = % x, want version 2 and key id k-1", raw[:5])
			}
			if want := 2 + 3 + 12 + 8 + 8 + 16 + len(tt.data) + 16; len(raw) != want {
				t.Fatalf("decoded length %d, want %d", len(raw), want)
			}
			if bytes.Contains(raw, []byte("alice")) || (len(tt.data) > 4 && bytes.Contains(raw, tt.data)) {
				t.Fatal("sealed state shows the binding or data in clear")
			}

			data, err := s.Open(context.Background(), state, bind)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if data == nil || !bytes.Equal(data, tt.data) {
				t.Fatalf("Open = %q (nil: %v), want %q", data, data == nil, tt.data)
			}
		})
	}
}

func TestSealIsFreshEachTime(t *testing.T) {
	store := &countingStore{next: requeststate.NewMemoryReplayStore()}
	c := newRealClock()
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), c, store)
	seen := map[string]bool{}
	for range 100 {
		state := mustSeal(t, s, bind, []byte("same"))
		if seen[state] {
			t.Fatal("two seals of the same data gave the same state")
		}
		seen[state] = true
		nonce := string(decode(t, state)[3:15])
		if seen["nonce "+nonce] {
			t.Fatal("nonce repeated")
		}
		seen["nonce "+nonce] = true
		if _, err := s.Open(context.Background(), state, bind); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[string]bool{}
	for _, id := range store.ids {
		if len(id) != 32 || ids[id] {
			t.Fatalf("single-use id %q is not a fresh 128-bit value", id)
		}
		ids[id] = true
	}
	if want := c.Now().Add(requeststate.DefaultTTL); !store.expires.Equal(want) {
		t.Fatalf("store got expiry %v, want %v", store.expires, want)
	}
	if want := c.Now(); !store.sealed.Equal(want) {
		t.Fatalf("store got sealing time %v, want %v", store.sealed, want)
	}
}

func TestOpenRejects(t *testing.T) {
	type env struct {
		key   requeststate.Key
		s     *requeststate.Sealer
		clock *clock
		state string
	}
	changed := func(f func(b *requeststate.Binding)) requeststate.Binding {
		b := bind
		f(&b)
		return b
	}
	tests := []struct {
		name  string
		state func(t *testing.T, e env) string // the state to open; e.state when nil
		bind  requeststate.Binding
		setup func(t *testing.T, e env)
	}{
		{name: "empty", state: func(*testing.T, env) string { return "" }, bind: bind},
		{name: "garbage", state: func(*testing.T, env) string { return "not a request state!" }, bind: bind},
		{name: "one char", state: func(*testing.T, env) string { return "A" }, bind: bind},
		{name: "long base64 zeros", state: func(*testing.T, env) string { return strings.Repeat("A", 200) }, bind: bind},
		{name: "standard base64 alphabet", state: func(t *testing.T, e env) string {
			return base64.RawStdEncoding.EncodeToString(decode(t, e.state)) + "+/"
		}, bind: bind},
		{name: "padded", state: func(_ *testing.T, e env) string { return e.state + "==" }, bind: bind},
		{name: "newline inserted", state: func(_ *testing.T, e env) string { return e.state[:10] + "\n" + e.state[10:] }, bind: bind},
		{name: "carriage return appended", state: func(_ *testing.T, e env) string { return e.state + "\r" }, bind: bind},
		{name: "space inserted", state: func(_ *testing.T, e env) string { return " " + e.state }, bind: bind},
		{name: "non-zero padding bits", state: func(t *testing.T, e env) string { return nonCanonicalTail(t, e.state) }, bind: bind},
		{name: "over MaxStateLen", state: func(*testing.T, env) string { return strings.Repeat("A", requeststate.MaxStateLen+1) }, bind: bind},
		{name: "version 0", state: func(t *testing.T, e env) string { return withByte(t, e.state, 0, 0) }, bind: bind},
		{name: "version 1", state: func(t *testing.T, e env) string { return withByte(t, e.state, 0, 1) }, bind: bind},
		{name: "version 3", state: func(t *testing.T, e env) string { return withByte(t, e.state, 0, 3) }, bind: bind},
		{name: "key id length 0", state: func(t *testing.T, e env) string { return withByte(t, e.state, 1, 0) }, bind: bind},
		{name: "key id length 33", state: func(t *testing.T, e env) string { return withByte(t, e.state, 1, 33) }, bind: bind},
		{name: "key id length 255", state: func(t *testing.T, e env) string { return withByte(t, e.state, 1, 255) }, bind: bind},
		{name: "unknown key id", state: func(t *testing.T, e env) string {
			return mustSeal(t, mustSealer(t, mustRing(t, mustKey(t, "other")), e.clock, nil), bind, []byte("data"))
		}, bind: bind},
		{name: "same key id, another secret", state: func(t *testing.T, e env) string {
			return mustSeal(t, mustSealer(t, mustRing(t, mustKey(t, e.key.ID)), e.clock, nil), bind, []byte("data"))
		}, bind: bind},
		{name: "key id renamed in header", state: func(t *testing.T, e env) string {
			raw := decode(t, e.state)
			raw[2] = 'x' // "kA" -> "xA": a key the ring does not have
			return encode(raw)
		}, bind: bind},
		{name: "method changed", bind: changed(func(b *requeststate.Binding) { b.Method = "tools/list" })},
		{name: "target changed", bind: changed(func(b *requeststate.Binding) { b.Target = "destroy" })},
		{name: "arguments digest changed", bind: changed(func(b *requeststate.Binding) { b.ArgumentsDigest = "sha256:0000000000000000" })},
		{name: "principal id changed", bind: changed(func(b *requeststate.Binding) { b.PrincipalID = "mallory" })},
		{name: "principal issuer changed", bind: changed(func(b *requeststate.Binding) { b.PrincipalIssuer = "https://evil.example" })},
		{name: "audience changed", bind: changed(func(b *requeststate.Binding) { b.Audience = "https://other.example/mcp" })},
		{name: "field boundary shifted", bind: changed(func(b *requeststate.Binding) {
			b.Method, b.Target = "tools/calld", "eploy" // same concatenation
		})},
		{name: "fields swapped", bind: changed(func(b *requeststate.Binding) {
			b.PrincipalID, b.PrincipalIssuer = b.PrincipalIssuer, b.PrincipalID
		})},
		{name: "empty binding", bind: requeststate.Binding{}},
		{name: "expired at exactly TTL", bind: bind, setup: func(_ *testing.T, e env) { e.clock.Advance(requeststate.DefaultTTL) }},
		{name: "expired past TTL", bind: bind, setup: func(_ *testing.T, e env) { e.clock.Advance(requeststate.DefaultTTL + time.Second) }},
		{name: "expired long ago", bind: bind, setup: func(_ *testing.T, e env) { e.clock.Advance(365 * 24 * time.Hour) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newRealClock()
			key := mustKey(t, "kA")
			store := &countingStore{next: requeststate.NewMemoryReplayStore()}
			e := env{key: key, s: mustSealer(t, mustRing(t, key), c, store), clock: c}
			e.state = mustSeal(t, e.s, bind, []byte("the data!")) // a length that leaves padding bits
			state := e.state
			if tt.state != nil {
				state = tt.state(t, e)
			}
			if tt.setup != nil {
				tt.setup(t, e)
			}
			data, err := e.s.Open(context.Background(), state, tt.bind)
			wantInvalid(t, data, err)
			if n := store.calls.Load(); n != 0 {
				t.Fatalf("an invalid state reached the replay store (%d calls)", n)
			}
		})
	}
}

// withByte decodes state, sets byte i to v and encodes again.
func withByte(t *testing.T, state string, i int, v byte) string {
	raw := decode(t, state)
	raw[i] = v
	return encode(raw)
}

// nonCanonicalTail returns state with its last character changed so that a
// lenient decoder would give the same bytes (only padding bits differ).
func nonCanonicalTail(t *testing.T, state string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	want := decode(t, state)
	for _, c := range alphabet {
		alt := state[:len(state)-1] + string(c)
		if alt == state {
			continue
		}
		if got, err := base64.RawURLEncoding.DecodeString(alt); err == nil && bytes.Equal(got, want) {
			return alt
		}
	}
	t.Fatalf("state of %d bytes has no padding bits; use data of another length", len(want))
	return ""
}

func TestOpenRejectsTampering(t *testing.T) {
	store := &countingStore{next: requeststate.NewMemoryReplayStore()}
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), newRealClock(), store)
	state := mustSeal(t, s, bind, []byte("tamper with me"))
	raw := decode(t, state)
	for i := range raw {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(raw)
			bad[i] ^= mask
			data, err := s.Open(context.Background(), encode(bad), bind)
			if !errors.Is(err, requeststate.ErrInvalid) || data != nil {
				t.Fatalf("byte %d ^ %#x: Open = %q, %v; want nil, ErrInvalid", i, mask, data, err)
			}
		}
	}
	if n := store.calls.Load(); n != 0 {
		t.Fatalf("tampered states reached the replay store (%d calls)", n)
	}
	// The original was never consumed by the attempts.
	if data, err := s.Open(context.Background(), state, bind); err != nil || string(data) != "tamper with me" {
		t.Fatalf("Open(original) = %q, %v", data, err)
	}
}

func TestOpenRejectsTruncation(t *testing.T) {
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), newClock(), nil)
	state := mustSeal(t, s, bind, []byte("truncate me"))
	raw := decode(t, state)
	for n := range len(raw) {
		data, err := s.Open(context.Background(), encode(raw[:n]), bind)
		if !errors.Is(err, requeststate.ErrInvalid) || data != nil {
			t.Fatalf("first %d bytes: Open = %q, %v; want nil, ErrInvalid", n, data, err)
		}
	}
	for n := range len(state) {
		data, err := s.Open(context.Background(), state[:n], bind)
		if !errors.Is(err, requeststate.ErrInvalid) || data != nil {
			t.Fatalf("first %d characters: Open = %q, %v; want nil, ErrInvalid", n, data, err)
		}
	}
	if _, err := s.Open(context.Background(), state, bind); err != nil {
		t.Fatalf("Open(original): %v", err)
	}
}

func TestOpenRejectsAppended(t *testing.T) {
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), newClock(), nil)
	state := mustSeal(t, s, bind, []byte("extend me"))
	raw := decode(t, state)
	tests := []struct {
		name  string
		state string
	}{
		{"one zero byte", encode(append(bytes.Clone(raw), 0))},
		{"three bytes", encode(append(bytes.Clone(raw), 1, 2, 3))},
		{"sixteen bytes", encode(append(bytes.Clone(raw), make([]byte, 16)...))},
		{"state twice", state + state},
		{"one character", state + "A"},
		{"four characters", state + "AAAA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := s.Open(context.Background(), tt.state, bind)
			wantInvalid(t, data, err)
		})
	}
	if _, err := s.Open(context.Background(), state, bind); err != nil {
		t.Fatalf("Open(original): %v", err)
	}
}

func TestOpenRejectsReplay(t *testing.T) {
	store := &countingStore{next: requeststate.NewMemoryReplayStore()}
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), newRealClock(), store)
	state := mustSeal(t, s, bind, []byte("once"))
	if data, err := s.Open(context.Background(), state, bind); err != nil || string(data) != "once" {
		t.Fatalf("first Open = %q, %v", data, err)
	}
	for range 3 {
		data, err := s.Open(context.Background(), state, bind)
		wantInvalid(t, data, err)
	}
	if n := store.calls.Load(); n != 4 {
		t.Fatalf("replay store calls = %d, want 4", n)
	}
}

// A state sealed by one instance is single-use across every instance that
// shares the keys and the replay store.
func TestReplayAcrossInstances(t *testing.T) {
	ring := mustRing(t, mustKey(t, "k"))
	shared := requeststate.NewMemoryReplayStore()
	c := newRealClock()
	a := mustSealer(t, ring, c, shared)
	b := mustSealer(t, ring, c, shared)
	state := mustSeal(t, a, bind, []byte("x"))
	if _, err := b.Open(context.Background(), state, bind); err != nil {
		t.Fatalf("instance b: %v", err)
	}
	data, err := a.Open(context.Background(), state, bind)
	wantInvalid(t, data, err)
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		name    string
		ttl     time.Duration
		advance time.Duration
		ok      bool
	}{
		{"just sealed", 0, 0, true},
		{"1ms before default TTL", 0, requeststate.DefaultTTL - time.Millisecond, true},
		{"at default TTL", 0, requeststate.DefaultTTL, false},
		{"after default TTL", 0, requeststate.DefaultTTL + time.Millisecond, false},
		{"custom TTL, inside", 30 * time.Second, 29 * time.Second, true},
		{"custom TTL, past", 30 * time.Second, 31 * time.Second, false},
		{"max TTL, inside", requeststate.MaxTTL, requeststate.MaxTTL - time.Second, true},
		{"max TTL, past", requeststate.MaxTTL, requeststate.MaxTTL + time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			s, err := requeststate.NewSealer(mustRing(t, mustKey(t, "k")), &requeststate.Options{TTL: tt.ttl, Now: c.Now})
			if err != nil {
				t.Fatal(err)
			}
			state := mustSeal(t, s, bind, []byte("x"))
			c.Advance(tt.advance)
			data, err := s.Open(context.Background(), state, bind)
			if tt.ok {
				if err != nil || string(data) != "x" {
					t.Fatalf("Open = %q, %v; want x, nil", data, err)
				}
				return
			}
			wantInvalid(t, data, err)
		})
	}
}

func TestRotation(t *testing.T) {
	a, b := mustKey(t, "key-a"), mustKey(t, "key-b")
	c := newClock()
	old := mustSealer(t, mustRing(t, a), c, nil)
	fromA1 := mustSeal(t, old, bind, []byte("sealed with A"))
	fromA2 := mustSeal(t, old, bind, []byte("sealed with A"))

	rotated := mustRing(t, b, a)
	if got := rotated.CurrentID(); got != "key-b" {
		t.Fatalf("CurrentID = %q, want key-b", got)
	}
	during := mustSealer(t, rotated, c, nil)
	if data, err := during.Open(context.Background(), fromA1, bind); err != nil || string(data) != "sealed with A" {
		t.Fatalf("ring (B, previous A) opening A's state = %q, %v", data, err)
	}

	fromB := mustSeal(t, during, bind, []byte("sealed with B"))
	if raw := decode(t, fromB); string(raw[2:2+raw[1]]) != "key-b" {
		t.Fatalf("new state sealed with key %q, want key-b", raw[2:2+raw[1]])
	}

	after := mustSealer(t, mustRing(t, b), c, nil)
	data, err := after.Open(context.Background(), fromA2, bind)
	wantInvalid(t, data, err)
	if data, err := after.Open(context.Background(), fromB, bind); err != nil || string(data) != "sealed with B" {
		t.Fatalf("ring (B) opening B's state = %q, %v", data, err)
	}
	// A ring that only has A does not open B's states.
	if data, err := old.Open(context.Background(), mustSeal(t, during, bind, nil), bind); !errors.Is(err, requeststate.ErrInvalid) || data != nil {
		t.Fatalf("ring (A) opening B's state = %q, %v", data, err)
	}
}

func TestReplayStoreFailure(t *testing.T) {
	storeErr := errors.New("redis: connection refused to 10.0.0.7:6379")
	tests := []struct {
		name  string
		fresh bool
	}{
		{"error", false},
		{"error with true", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingStore{err: storeErr, fresh: tt.fresh}
			s := mustSealer(t, mustRing(t, mustKey(t, "k")), newClock(), store)
			state := mustSeal(t, s, bind, []byte("secret data"))
			data, err := s.Open(context.Background(), state, bind)
			if data != nil {
				t.Fatalf("Open returned data %q with a failing replay store", data)
			}
			if !errors.Is(err, requeststate.ErrUnavailable) || errors.Is(err, requeststate.ErrInvalid) {
				t.Fatalf("Open error = %v; want ErrUnavailable, not ErrInvalid", err)
			}
			if !errors.Is(err, storeErr) {
				t.Fatalf("Open error %v does not wrap the store's error", err)
			}
			if strings.Contains(err.Error(), "10.0.0.7") {
				t.Fatalf("error message %q leaks the store's error", err)
			}
		})
	}

	t.Run("canceled context, memory store", func(t *testing.T) {
		s := mustSealer(t, mustRing(t, mustKey(t, "k")), newClock(), nil)
		state := mustSeal(t, s, bind, []byte("x"))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		data, err := s.Open(ctx, state, bind)
		if data != nil || !errors.Is(err, requeststate.ErrUnavailable) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Open = %q, %v; want nil, ErrUnavailable wrapping context.Canceled", data, err)
		}
		// The state was not consumed: it opens once the store answers.
		if data, err := s.Open(context.Background(), state, bind); err != nil || string(data) != "x" {
			t.Fatalf("Open after failure = %q, %v", data, err)
		}
	})
}

func TestConcurrentOpenSameState(t *testing.T) {
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), newClock(), nil)
	state := mustSeal(t, s, bind, []byte("race"))
	const n = 50
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		ok      atomic.Int32
		invalid atomic.Int32
		other   atomic.Int32
	)
	for range n {
		wg.Go(func() {
			<-start
			data, err := s.Open(context.Background(), state, bind)
			switch {
			case err == nil && string(data) == "race":
				ok.Add(1)
			case errors.Is(err, requeststate.ErrInvalid) && data == nil:
				invalid.Add(1)
			default:
				other.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || invalid.Load() != n-1 || other.Load() != 0 {
		t.Fatalf("successes %d, ErrInvalid %d, other %d; want 1, %d, 0", ok.Load(), invalid.Load(), other.Load(), n-1)
	}
}

func TestConcurrentSealOpen(t *testing.T) {
	a, b := mustKey(t, "a"), mustKey(t, "b")
	c := newClock()
	sealers := []*requeststate.Sealer{
		mustSealer(t, mustRing(t, a), c, nil),
		mustSealer(t, mustRing(t, b, a), c, nil),
	}
	opener := mustSealer(t, mustRing(t, b, a), c, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 50 {
				want := []byte{byte(g), byte(i)}
				state, err := sealers[(g+i)%2].Seal(bind, want)
				if err != nil {
					errs <- err
					return
				}
				data, err := opener.Open(context.Background(), state, bind)
				if err != nil || !bytes.Equal(data, want) {
					errs <- errors.Join(errors.New("round trip failed"), err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSealTooLarge(t *testing.T) {
	s := mustSealer(t, mustRing(t, mustKey(t, "k")), newClock(), nil)
	// The largest data that fits: raw = 2 + 1 + 12 + 8 + 8 + 16 + n + 16
	// bytes, encoded in ceil(raw*4/3) characters.
	maxData := requeststate.MaxStateLen*3/4 - (2 + 1 + 12 + 8 + 8 + 16 + 16)
	state, err := s.Seal(bind, make([]byte, maxData))
	if err != nil {
		t.Fatalf("Seal(%d bytes): %v", maxData, err)
	}
	if len(state) > requeststate.MaxStateLen {
		t.Fatalf("state of %d characters exceeds MaxStateLen", len(state))
	}
	if data, err := s.Open(context.Background(), state, bind); err != nil || len(data) != maxData {
		t.Fatalf("Open(largest state) = %d bytes, %v", len(data), err)
	}
	if _, err := s.Seal(bind, make([]byte, maxData+1)); err == nil {
		t.Fatalf("Seal(%d bytes) succeeded past MaxStateLen", maxData+1)
	}
	if _, err := s.Seal(bind, make([]byte, 1<<20)); err == nil {
		t.Fatal("Seal(1 MiB) succeeded")
	}
}

func TestGenerateKey(t *testing.T) {
	k1, err := requeststate.GenerateKey("key_2026-01")
	if err != nil {
		t.Fatal(err)
	}
	k2 := mustKey(t, "key_2026-01")
	if k1.ID != "key_2026-01" || len(k1.Secret) != requeststate.SecretSize {
		t.Fatalf("GenerateKey = id %q, %d-byte secret", k1.ID, len(k1.Secret))
	}
	if bytes.Equal(k1.Secret, k2.Secret) || bytes.Equal(k1.Secret, make([]byte, requeststate.SecretSize)) {
		t.Fatal("GenerateKey secrets are not random")
	}
	for _, id := range []string{"", "has space", "dot.ted", "slash/", "é", strings.Repeat("a", 33)} {
		if _, err := requeststate.GenerateKey(id); err == nil {
			t.Errorf("GenerateKey(%q) succeeded", id)
		}
	}
}

func TestNewKeyRingValidation(t *testing.T) {
	good := mustKey(t, "good")
	secret := func(n int) []byte { return make([]byte, n) }
	tests := []struct {
		name     string
		current  requeststate.Key
		previous []requeststate.Key
		ok       bool
	}{
		{"current only", good, nil, true},
		{"with previous", good, []requeststate.Key{{ID: "old", Secret: secret(32)}, {ID: "older", Secret: secret(32)}}, true},
		{"id of 32 characters", requeststate.Key{ID: strings.Repeat("A", 32), Secret: secret(32)}, nil, true},
		{"id alphabet", requeststate.Key{ID: "azAZ09_-", Secret: secret(32)}, nil, true},
		{"zero key", requeststate.Key{}, nil, false},
		{"empty id", requeststate.Key{Secret: secret(32)}, nil, false},
		{"id of 33 characters", requeststate.Key{ID: strings.Repeat("A", 33), Secret: secret(32)}, nil, false},
		{"id with space", requeststate.Key{ID: "a b", Secret: secret(32)}, nil, false},
		{"id with dot", requeststate.Key{ID: "a.b", Secret: secret(32)}, nil, false},
		{"id with non-ASCII", requeststate.Key{ID: "clé", Secret: secret(32)}, nil, false},
		{"id with NUL", requeststate.Key{ID: "a\x00", Secret: secret(32)}, nil, false},
		{"nil secret", requeststate.Key{ID: "k"}, nil, false},
		{"16-byte secret", requeststate.Key{ID: "k", Secret: secret(16)}, nil, false},
		{"31-byte secret", requeststate.Key{ID: "k", Secret: secret(31)}, nil, false},
		{"33-byte secret", requeststate.Key{ID: "k", Secret: secret(33)}, nil, false},
		{"bad previous id", good, []requeststate.Key{{ID: "", Secret: secret(32)}}, false},
		{"bad previous secret", good, []requeststate.Key{{ID: "old", Secret: secret(24)}}, false},
		{"previous duplicates current", good, []requeststate.Key{{ID: "good", Secret: secret(32)}}, false},
		{"duplicate previous", good, []requeststate.Key{{ID: "old", Secret: secret(32)}, {ID: "old", Secret: secret(32)}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := requeststate.NewKeyRing(tt.current, tt.previous...)
			if tt.ok {
				if err != nil || r == nil || r.CurrentID() != tt.current.ID {
					t.Fatalf("NewKeyRing = %v, %v", r, err)
				}
				return
			}
			if err == nil || r != nil {
				t.Fatalf("NewKeyRing = %v, %v; want nil, error", r, err)
			}
		})
	}
}

func TestKeyRingCopiesSecrets(t *testing.T) {
	key := mustKey(t, "k")
	original := bytes.Clone(key.Secret)
	ring := mustRing(t, key)
	s := mustSealer(t, ring, newClock(), nil)
	state := mustSeal(t, s, bind, []byte("x"))
	clear(key.Secret) // the caller wipes its copy
	if _, err := s.Open(context.Background(), state, bind); err != nil {
		t.Fatalf("Open after wiping the caller's secret: %v", err)
	}
	// And states sealed after the wipe still use the original secret.
	state = mustSeal(t, s, bind, []byte("y"))
	s2 := mustSealer(t, mustRing(t, requeststate.Key{ID: "k", Secret: original}), newClock(), nil)
	if data, err := s2.Open(context.Background(), state, bind); err != nil || string(data) != "y" {
		t.Fatalf("Open with the original secret = %q, %v", data, err)
	}
}

func TestNewSealerValidation(t *testing.T) {
	ring := mustRing(t, mustKey(t, "k"))
	tests := []struct {
		name string
		ring *requeststate.KeyRing
		opts *requeststate.Options
		ok   bool
	}{
		{"nil options", ring, nil, true},
		{"zero options", ring, &requeststate.Options{}, true},
		{"TTL 1ns", ring, &requeststate.Options{TTL: time.Nanosecond}, true},
		{"TTL MaxTTL", ring, &requeststate.Options{TTL: requeststate.MaxTTL}, true},
		{"nil ring", nil, nil, false},
		{"zero ring", &requeststate.KeyRing{}, nil, false},
		{"negative TTL", ring, &requeststate.Options{TTL: -time.Second}, false},
		{"TTL over MaxTTL", ring, &requeststate.Options{TTL: requeststate.MaxTTL + time.Nanosecond}, false},
		{"TTL a day", ring, &requeststate.Options{TTL: 24 * time.Hour}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := requeststate.NewSealer(tt.ring, tt.opts)
			if tt.ok != (err == nil) || tt.ok != (s != nil) {
				t.Fatalf("NewSealer = %v, %v; want ok %v", s, err, tt.ok)
			}
		})
	}
}

func TestMemoryReplayStore(t *testing.T) {
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	tests := []struct {
		name string
		m    *requeststate.MemoryReplayStore
	}{
		{"NewMemoryReplayStore", requeststate.NewMemoryReplayStore()},
		{"zero value", &requeststate.MemoryReplayStore{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sealed := time.Now()
			steps := []struct {
				id      string
				sealed  time.Time
				expires time.Time
				want    bool
			}{
				{"a", sealed, later, true},
				{"a", sealed, later, false},
				{"b", sealed, later, true},
				{"a", sealed, later.Add(time.Hour), false},
				{"gone", sealed, time.Now().Add(-time.Second), false}, // already expired: cannot be proven unused
				{"before", time.Now().Add(-time.Hour), later, false},  // sealed before the store (or the process) began
			}
			for i, st := range steps {
				got, err := tt.m.Use(ctx, st.id, st.sealed, st.expires)
				if err != nil || got != st.want {
					t.Fatalf("step %d: Use(%q) = %v, %v; want %v", i, st.id, got, err, st.want)
				}
			}
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			if ok, err := tt.m.Use(cctx, "c", sealed, later); ok || !errors.Is(err, context.Canceled) {
				t.Fatalf("Use with a canceled context = %v, %v", ok, err)
			}
		})
	}
}

// The checked-in fuzz corpus holds the valid seed FuzzOpen expects.
func TestFuzzCorpus(t *testing.T) {
	b, err := os.ReadFile("testdata/fuzz/FuzzOpen/valid")
	if err != nil {
		t.Fatal(err)
	}
	if want := "go test fuzz v1\nstring(\"" + fuzzValidState + "\")\n"; string(b) != want {
		t.Fatalf("testdata/fuzz/FuzzOpen/valid = %q, want %q", b, want)
	}
	s := fuzzSealer(t)
	if data, err := s.Open(context.Background(), fuzzValidState, fuzzBinding); err != nil || !bytes.Equal(data, fuzzData) {
		t.Fatalf("Open(fuzz seed) = %q, %v", data, err)
	}
}

// A process restarted with the same key file (one instance, its replay
// store in memory) has forgotten which states it opened: its new store
// refuses every state sealed before it was made, the ones the previous
// process opened (the dangerous ones) and the ones it did not, and states
// sealed after the restart open once.
func TestRestartedMemoryStoreRefusesStatesSealedBefore(t *testing.T) {
	const sealed, used = 200, 100
	for _, tc := range []struct {
		name  string
		store func() requeststate.ReplayStore // the restarted process's; nil: the Sealer's default
	}{
		{"default store", func() requeststate.ReplayStore { return nil }},
		{"NewMemoryReplayStore", func() requeststate.ReplayStore { return requeststate.NewMemoryReplayStore() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ring := mustRing(t, mustKey(t, "k")) // as loaded from one key file by both processes
			c := &clock{t: time.Now().Add(-time.Minute)}
			before := mustSealer(t, ring, c, nil)
			states := make([]string, sealed)
			for i := range states {
				states[i] = mustSeal(t, before, bind, []byte("asked"))
			}
			for _, state := range states[:used] {
				if _, err := before.Open(t.Context(), state, bind); err != nil {
					t.Fatalf("before the restart: %v", err)
				}
			}

			c.Advance(time.Second) // the restart
			after := mustSealer(t, ring, c, tc.store())
			accepted := 0
			for _, state := range states {
				data, err := after.Open(t.Context(), state, bind)
				switch {
				case err == nil:
					accepted++
				case !errors.Is(err, requeststate.ErrInvalid) || data != nil:
					t.Fatalf("Open after the restart = %q, %v; want nil, ErrInvalid", data, err)
				}
			}
			if accepted != 0 {
				t.Errorf("after the restart %d of %d states sealed before it were accepted (%d of them opened before): want 0", accepted, sealed, used)
			}

			c.Advance(61 * time.Second) // past the restart by every clock involved
			fresh := mustSeal(t, after, bind, []byte("asked again"))
			if data, err := after.Open(t.Context(), fresh, bind); err != nil || string(data) != "asked again" {
				t.Fatalf("a state sealed after the restart: %q, %v", data, err)
			}
			data, err := after.Open(t.Context(), fresh, bind)
			wantInvalid(t, data, err)
			t.Logf("sealed before the restart: %d (%d opened); accepted after it: %d", sealed, used, accepted)
		})
	}
}
