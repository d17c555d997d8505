package requeststate_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

func TestKeyFileRoundTrip(t *testing.T) {
	keys, err := requeststate.NewKeyFile(t0)
	if err != nil {
		t.Fatal(err)
	}
	keys, err = requeststate.RotateKeyFile(keys, t0.Add(time.Minute), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	text := requeststate.FormatKeyFile(keys)
	got, err := requeststate.ParseKeyFile(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("ParseKeyFile(FormatKeyFile(keys)): %v\n%s", err, text)
	}
	if len(got) != 2 {
		t.Fatalf("got %d keys, want 2", len(got))
	}
	for i := range keys {
		if got[i].ID != keys[i].ID || !bytes.Equal(got[i].Secret, keys[i].Secret) || !got[i].Retired.Equal(keys[i].Retired) {
			t.Errorf("key %d: got %q retired %v, want %q retired %v", i, got[i].ID, got[i].Retired, keys[i].ID, keys[i].Retired)
		}
	}
	if got[0].ID != "k20010203T040606Z" || !got[0].Retired.IsZero() {
		t.Errorf("current key = %q retired %v, want k20010203T040606Z, not retired", got[0].ID, got[0].Retired)
	}
	if got[1].ID != "k20010203T040506Z" || !got[1].Retired.Equal(t0.Add(time.Minute)) {
		t.Errorf("previous key = %q retired %v, want k20010203T040506Z retired at the rotation", got[1].ID, got[1].Retired)
	}
}

func TestParseKeyFileRejects(t *testing.T) {
	secret := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	short := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 31))
	padded := base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))
	std := base64.RawStdEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32)) // has '+' and '/'
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "no key"},
		{"only comments", "# nothing\n\n", "no key"},
		{"one field", "k1\n", "line 1: want: ID SECRET"},
		{"four fields", "k1 " + secret + " retired=2026-01-01T00:00:00Z extra\n", "want: ID SECRET"},
		{"bad id", "k.1 " + secret + "\n", `key id "k.1" may contain only`},
		{"long id", strings.Repeat("k", 33) + " " + secret + "\n", "must be 1 to 32 characters"},
		{"short secret", "k1 " + short + "\n", `key "k1": the secret must be 32 bytes`},
		{"padded secret", "k1 " + padded + "\n", "unpadded base64url"},
		{"standard alphabet", "k1 " + std + "\n", "unpadded base64url"},
		{"duplicate id", "k1 " + secret + "\nk1 " + secret + "\n", `line 2: key id "k1" appears more than once`},
		{"retired current", "k1 " + secret + " retired=2026-01-01T00:00:00Z\n", "first, so it seals, but is marked retired"},
		{"unknown field", "k1 " + secret + "\nk2 " + secret + " expires=2026-01-01T00:00:00Z\n", `line 2: key "k2": unknown field`},
		{"bad time", "k1 " + secret + "\nk2 " + secret + " retired=yesterday\n", "not an RFC 3339 time"},
		{"too many", manyKeys(requeststate.MaxKeyFileKeys+1, secret), "more than 64 keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := requeststate.ParseKeyFile(strings.NewReader(tc.text))
			if err == nil {
				t.Fatalf("ParseKeyFile accepted %q", tc.text)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			for _, s := range []string{secret, short, padded, std} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q shows a secret", err)
				}
			}
		})
	}
}

func manyKeys(n int, secret string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("k")
		b.WriteString(strings.Repeat("a", i%30+1))
		b.WriteString(string(rune('A' + i/30)))
		b.WriteString(" " + secret + "\n")
	}
	return b.String()
}

func TestRotateKeyFileDropsKeysOnlyAfterKeep(t *testing.T) {
	keys, err := requeststate.NewKeyFile(t0)
	if err != nil {
		t.Fatal(err)
	}
	first := keys[0].ID
	r1, err := requeststate.RotateKeyFile(keys, t0.Add(time.Minute), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !keys[0].Retired.IsZero() {
		t.Fatal("RotateKeyFile modified its input")
	}
	// Within keep, the old key stays; a second rotation in the same second
	// gets a distinct id.
	r2, err := requeststate.RotateKeyFile(r1, t0.Add(time.Minute), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ids := idsOf(r2); len(ids) != 3 || ids[2] != first || ids[0] == ids[1] {
		t.Fatalf("after two rotations within keep: %v, want three distinct ids ending with %s", ids, first)
	}
	// Past keep since their retirement, the keys retired at the first
	// two rotations are dropped; the one retired later stays.
	r3, err := requeststate.RotateKeyFile(r2, t0.Add(5*time.Minute), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	r4, err := requeststate.RotateKeyFile(r3, t0.Add(11*time.Minute), 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if ids := idsOf(r4); len(ids) != 3 || ids[1] != r3[0].ID || ids[2] != r2[0].ID {
		t.Fatalf("after keep passed for the oldest keys: %v, want [new %s %s]", ids, r3[0].ID, r2[0].ID)
	}
	// keep 0 drops every retired key at once.
	r5, err := requeststate.RotateKeyFile(r4, t0.Add(12*time.Minute), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r5) != 1 {
		t.Fatalf("keep 0 kept %v", idsOf(r5))
	}
	if _, err := requeststate.RotateKeyFile(r5, t0, -time.Second); err == nil {
		t.Error("negative keep accepted")
	}
}

func idsOf(keys []requeststate.FileKey) []string {
	var ids []string
	for _, k := range keys {
		ids = append(ids, k.ID)
	}
	return ids
}

func TestWriteKeyFileIsOwnerOnlyAndLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.keys")
	keys, err := requeststate.NewKeyFile(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := requeststate.WriteKeyFile(path, keys); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	ring, err := requeststate.LoadKeyRing(path)
	if err != nil {
		t.Fatal(err)
	}
	if ring.CurrentID() != keys[0].ID {
		t.Errorf("ring seals with %q, want %q", ring.CurrentID(), keys[0].ID)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("WriteKeyFile left %d files in the directory, want 1", len(entries))
	}
	if _, err := requeststate.LoadKeyRing(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadKeyRing of a missing file: %v, want not exist", err)
	}
	if err := requeststate.WriteKeyFile(path, nil); err == nil {
		t.Error("WriteKeyFile wrote a file with no key")
	}
}

// A state sealed by one instance under the key that was current before a
// rotation opens on another instance that loaded the rotated file, once;
// once the old key is dropped, it no longer opens anywhere.
func TestKeyFileSharedAcrossInstancesAndRotation(t *testing.T) {
	dir := t.TempDir()
	before, after, dropped := filepath.Join(dir, "before"), filepath.Join(dir, "after"), filepath.Join(dir, "dropped")
	c := newRealClock()
	keys, err := requeststate.NewKeyFile(c.Now())
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := requeststate.RotateKeyFile(keys, c.Now(), requeststate.MaxTTL)
	if err != nil {
		t.Fatal(err)
	}
	gone, err := requeststate.RotateKeyFile(rotated, c.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	for path, k := range map[string][]requeststate.FileKey{before: keys, after: rotated, dropped: gone} {
		if err := requeststate.WriteKeyFile(path, k); err != nil {
			t.Fatal(err)
		}
	}
	load := func(path string) *requeststate.KeyRing {
		ring, err := requeststate.LoadKeyRing(path)
		if err != nil {
			t.Fatal(err)
		}
		return ring
	}
	shared := requeststate.NewMemoryReplayStore()
	a := mustSealer(t, load(before), c, shared)
	b := mustSealer(t, load(after), c, shared)
	z := mustSealer(t, load(dropped), c, requeststate.NewMemoryReplayStore())

	state := mustSeal(t, a, bind, []byte("round 1"))
	if _, err := z.Open(t.Context(), state, bind); !errors.Is(err, requeststate.ErrInvalid) {
		t.Errorf("an instance without the old key opened its state: %v", err)
	}
	data, err := b.Open(t.Context(), state, bind)
	if err != nil || string(data) != "round 1" {
		t.Fatalf("instance B (rotated file) opening A's state: %q, %v", data, err)
	}
	if _, err := a.Open(t.Context(), state, bind); !errors.Is(err, requeststate.ErrInvalid) {
		t.Errorf("replay on instance A: %v, want ErrInvalid", err)
	}
	// B seals with the new key, which A does not have yet: that is the
	// window of a rolling rotation (docs/scaling.md).
	fromB := mustSeal(t, b, bind, nil)
	if _, err := a.Open(t.Context(), fromB, bind); !errors.Is(err, requeststate.ErrInvalid) {
		t.Errorf("instance A opened a state under a key it does not hold: %v", err)
	}
}

// Staging first removes the window of a rolling rotation: an instance that
// has the staged file opens states sealed by one that already rotated.
func TestStagedKeyRotatesWithoutAWindow(t *testing.T) {
	c := newRealClock()
	keys, err := requeststate.NewKeyFile(c.Now())
	if err != nil {
		t.Fatal(err)
	}
	staged, err := requeststate.StageKeyFile(keys, c.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(staged) != 2 || staged[0].ID != keys[0].ID || !staged[1].Staged || len(keys) != 1 {
		t.Fatalf("staged file %v, want [current, staged] and the input unchanged", idsOf(staged))
	}
	if _, err := requeststate.StageKeyFile(staged, c.Now()); err == nil || !strings.Contains(err.Error(), "staged already") {
		t.Errorf("staging twice: %v", err)
	}
	text := requeststate.FormatKeyFile(staged)
	if !strings.Contains(string(text), " staged\n") {
		t.Errorf("formatted file has no staged marker:\n%s", text)
	}
	parsed, err := requeststate.ParseKeyFile(bytes.NewReader(text))
	if err != nil || !parsed[1].Staged || parsed[0].Staged {
		t.Fatalf("parsed staged file: %v, %v", parsed, err)
	}
	rotated, err := requeststate.RotateKeyFile(staged, c.Now().Add(2*time.Minute), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(rotated) != 2 || rotated[0].ID != staged[1].ID || !bytes.Equal(rotated[0].Secret, staged[1].Secret) || rotated[0].Staged || rotated[1].Retired.IsZero() {
		t.Fatalf("rotation did not promote the staged key: %v", idsOf(rotated))
	}

	ring := func(k []requeststate.FileKey) *requeststate.KeyRing {
		r, err := requeststate.KeyRingOf(k)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	shared := requeststate.NewMemoryReplayStore()
	onStaged := mustSealer(t, ring(staged), c, shared)
	onRotated := mustSealer(t, ring(rotated), c, shared)
	if got := ring(staged).CurrentID(); got != keys[0].ID {
		t.Errorf("the staged file seals with %s, want the old key %s", got, keys[0].ID)
	}
	for name, pair := range map[string][2]*requeststate.Sealer{
		"rotated to staged": {onRotated, onStaged},
		"staged to rotated": {onStaged, onRotated},
	} {
		state := mustSeal(t, pair[0], bind, []byte(name))
		if data, err := pair[1].Open(t.Context(), state, bind); err != nil || string(data) != name {
			t.Errorf("%s: %q, %v", name, data, err)
		}
	}
	if _, err := requeststate.ParseKeyFile(strings.NewReader(string(requeststate.FormatKeyFile(staged[1:2])))); err == nil || !strings.Contains(err.Error(), "marked staged") {
		t.Errorf("a file whose first key is staged: %v", err)
	}
}
