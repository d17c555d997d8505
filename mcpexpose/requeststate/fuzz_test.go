package requeststate_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

// The fuzz target's fixed world: a key whose secret is 0x00..0x1f, a clock
// stopped at fuzzNow, and one binding. fuzzValidState was sealed in that
// world at fuzzNow with data fuzzData; it is the seed
// testdata/fuzz/FuzzOpen/valid. The other checked-in seeds are the empty
// string, garbage, that state truncated, extended, padded, with a newline,
// with version 3, a header alone, a state under an unknown key id, one
// sealed ten minutes before fuzzNow (expired), and the valid seed of format
// version 1 (version1), which Open no longer accepts.
const fuzzValidState = "AgRmdXp6tQneG4dYWW440hFgQhywcjIH3fr80uR-UpMKOOwjkZ6bylCzwp_ErpdsL2FK0o2tj7M3bK3zYcsuV8iKU2ubkEacgbzLZfv1lNg"

var (
	fuzzNow     = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	fuzzData    = []byte("fuzz seed data")
	fuzzBinding = requeststate.Binding{
		Method:          "tools/call",
		Target:          "deploy",
		ArgumentsDigest: "sha256:0d5f",
		PrincipalID:     "alice",
		PrincipalIssuer: "https://issuer.example",
		Audience:        "https://mcp.example/mcp",
	}
)

func fuzzSealer(t testing.TB) *requeststate.Sealer {
	t.Helper()
	secret := make([]byte, requeststate.SecretSize)
	for i := range secret {
		secret[i] = byte(i)
	}
	ring, err := requeststate.NewKeyRing(requeststate.Key{ID: "fuzz", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	s, err := requeststate.NewSealer(ring, &requeststate.Options{Now: func() time.Time { return fuzzNow }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzOpen: Open never panics, and it accepts exactly one input, once: the
// valid seed, with its own binding. Anything else, including any other
// encoding of the valid seed's bytes, is ErrInvalid with nil data, because
// nothing else was sealed under the fuzz key.
func FuzzOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, state string) {
		ctx := context.Background()
		s := fuzzSealer(t) // fresh replay store: every input is unused

		other := fuzzBinding
		other.Target = "other"
		if data, err := s.Open(ctx, state, other); !errors.Is(err, requeststate.ErrInvalid) || data != nil {
			t.Fatalf("Open with another binding = %q, %v; want nil, ErrInvalid", data, err)
		}

		data, err := s.Open(ctx, state, fuzzBinding)
		if state == fuzzValidState {
			if err != nil || !bytes.Equal(data, fuzzData) {
				t.Fatalf("Open(valid seed) = %q, %v; want %q, nil", data, err, fuzzData)
			}
			if data, err := s.Open(ctx, state, fuzzBinding); !errors.Is(err, requeststate.ErrInvalid) || data != nil {
				t.Fatalf("second Open(valid seed) = %q, %v; want nil, ErrInvalid", data, err)
			}
			return
		}
		if err == nil {
			t.Fatalf("Open(%q) accepted a state that was never sealed, data %q", state, data)
		}
		if !errors.Is(err, requeststate.ErrInvalid) || data != nil {
			t.Fatalf("Open(%q) = %q, %v; want nil, ErrInvalid", state, data, err)
		}
	})
}
