package requeststate_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

// A server seals the state of an interaction when it asks the client for
// input, and opens it, once, when the client retries the same call.
func ExampleSealer() {
	key, err := requeststate.GenerateKey("2026-01")
	if err != nil {
		panic(err)
	}
	ring, err := requeststate.NewKeyRing(key)
	if err != nil {
		panic(err)
	}
	sealer, err := requeststate.NewSealer(ring, nil) // 5-minute TTL, in-process replay store
	if err != nil {
		panic(err)
	}

	call := requeststate.Binding{
		Method:          "tools/call",
		Target:          "deploy",
		ArgumentsDigest: "sha256:2c26b46b68ffc68f",
		PrincipalID:     "alice",
		PrincipalIssuer: "https://issuer.example",
		Audience:        "https://mcp.example/mcp",
	}
	state, err := sealer.Seal(call, []byte(`{"step":2}`))
	if err != nil {
		panic(err)
	}

	// The retry of the same call, by the same principal: accepted once.
	data, err := sealer.Open(context.Background(), state, call)
	fmt.Printf("%s %v\n", data, err)

	// The same state again: a replay.
	_, err = sealer.Open(context.Background(), state, call)
	fmt.Println(errors.Is(err, requeststate.ErrInvalid), err)

	// A fresh state, presented by another principal.
	state, _ = sealer.Seal(call, []byte(`{"step":2}`))
	mallory := call
	mallory.PrincipalID = "mallory"
	_, err = sealer.Open(context.Background(), state, mallory)
	fmt.Println(errors.Is(err, requeststate.ErrInvalid))
	// Output:
	// {"step":2} <nil>
	// true invalid request state
	// true
}

// Rotation: the new key seals, the old one still opens states sealed before
// the rotation.
func ExampleNewKeyRing() {
	oldKey, _ := requeststate.GenerateKey("2026-01")
	newKey, _ := requeststate.GenerateKey("2026-02")

	before, _ := requeststate.NewKeyRing(oldKey)
	s1, _ := requeststate.NewSealer(before, nil)
	state, _ := s1.Seal(requeststate.Binding{Target: "deploy"}, []byte("pending"))

	after, _ := requeststate.NewKeyRing(newKey, oldKey)
	s2, _ := requeststate.NewSealer(after, nil)
	data, err := s2.Open(context.Background(), state, requeststate.Binding{Target: "deploy"})
	fmt.Println(after.CurrentID(), string(data), err)
	// Output:
	// 2026-02 pending <nil>
}

// Every instance of a server loads the same key file, so that a state
// sealed by one opens on any other. Rotating adds a current key and keeps
// the old one, retired, for opening states sealed before the rotation,
// until they have all expired.
func ExampleRotateKeyFile() {
	created := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	keys, err := requeststate.NewKeyFile(created) // agnara keys generate -o FILE
	if err != nil {
		panic(err)
	}
	// agnara keys rotate FILE, a day later, and again an hour after that
	// (-keep 1h: the first key's states have all expired by then).
	keys, _ = requeststate.RotateKeyFile(keys, created.Add(24*time.Hour), time.Hour)
	keys, _ = requeststate.RotateKeyFile(keys, created.Add(25*time.Hour), time.Hour)
	for i, k := range keys {
		role := "opens, retired " + k.Retired.Format(time.RFC3339)
		if i == 0 {
			role = "seals"
		}
		fmt.Println(k.ID, role)
	}
	ring, err := requeststate.KeyRingOf(keys) // or LoadKeyRing(FILE)
	if err != nil {
		panic(err)
	}
	fmt.Println("ring seals with", ring.CurrentID())
	// Output:
	// k20261202T100000Z seals
	// k20261202T090000Z opens, retired 2026-12-02T10:00:00Z
	// ring seals with k20261202T100000Z
}
