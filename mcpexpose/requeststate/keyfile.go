package requeststate

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// maxKeyFileKeys is the largest number of keys a key file may hold.
const maxKeyFileKeys = 64

// maxKeyFileSize bounds what ReadKeyFile reads.
const maxKeyFileSize = 64 << 10

// FileKey is one key of a key file.
type FileKey struct {
	Key
	// Retired is when the key stopped sealing (it still opens); zero for
	// the current key, a staged key, and a previous key whose retirement
	// was not recorded.
	Retired time.Time
	// Staged marks a key that opens but has not sealed yet: the next
	// current key, distributed to every instance before any seals with it
	// ([StageKeyFile]). [RotateKeyFile] makes it current.
	Staged bool
}

// ParseKeyFile parses a key file's contents (see the format above) and
// returns its keys, the current one first. It fails, naming the line, on
// any malformed line, a duplicate id, a secret that is not 32 bytes of
// base64url, a retired current key, no key at all, or more than 64 keys.
//
// [LoadKeyRing] reads a key file from disk. A service that keeps its key
// file elsewhere, in a secret manager for instance, parses the bytes it
// fetched with ParseKeyFile and builds its ring with [KeyRingOf].
func ParseKeyFile(r io.Reader) ([]FileKey, error) {
	var keys []FileKey
	seen := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(r, maxKeyFileSize+1))
	n, size := 0, 0
	for sc.Scan() {
		n++
		size += len(sc.Bytes()) + 1
		if size > maxKeyFileSize {
			return nil, fmt.Errorf("requeststate: key file is larger than %d bytes", maxKeyFileSize)
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseKeyLine(line, len(keys) == 0)
		if err != nil {
			return nil, fmt.Errorf("requeststate: key file line %d: %w", n, err)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("requeststate: key file line %d: key id %q appears more than once", n, k.ID)
		}
		seen[k.ID] = true
		if keys = append(keys, k); len(keys) > maxKeyFileKeys {
			return nil, fmt.Errorf("requeststate: key file has more than %d keys; drop retired ones with 'agnara keys rotate'", maxKeyFileKeys)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("requeststate: reading key file: %w", err)
	}
	if len(keys) == 0 {
		return nil, errors.New("requeststate: key file has no key; create one with 'agnara keys generate -o FILE'")
	}
	return keys, nil
}

func parseKeyLine(line string, current bool) (FileKey, error) {
	fields := strings.Fields(line)
	if len(fields) < 2 || len(fields) > 3 {
		return FileKey{}, errors.New("want: ID SECRET [retired=TIME | staged]")
	}
	k := FileKey{Key: Key{ID: fields[0]}}
	if err := checkKeyID(k.ID); err != nil {
		return FileKey{}, errors.New(strings.TrimPrefix(err.Error(), "requeststate: "))
	}
	secret, err := base64.RawURLEncoding.Strict().DecodeString(fields[1])
	if err != nil || len(secret) != secretSize {
		return FileKey{}, fmt.Errorf("key %q: the secret must be %d bytes in unpadded base64url (%d characters)", k.ID, secretSize, base64.RawURLEncoding.EncodedLen(secretSize))
	}
	k.Secret = secret
	if len(fields) == 3 && fields[2] == "staged" {
		if current {
			return FileKey{}, fmt.Errorf("key %q is first, so it seals, but is marked staged", k.ID)
		}
		k.Staged = true
	} else if len(fields) == 3 {
		v, ok := strings.CutPrefix(fields[2], "retired=")
		if !ok {
			return FileKey{}, fmt.Errorf("key %q: unknown field %q, want retired=TIME or staged", k.ID, fields[2])
		}
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return FileKey{}, fmt.Errorf("key %q: retired=%q is not an RFC 3339 time", k.ID, v)
		}
		if current {
			return FileKey{}, fmt.Errorf("key %q is first, so it seals, but is marked retired", k.ID)
		}
		k.Retired = t.UTC()
	}
	return k, nil
}

// formatKeyFile returns the key file text for keys, the current one first,
// with a header comment.
func formatKeyFile(keys []FileKey) []byte {
	var b bytes.Buffer
	b.WriteString("# agnara request-state keys (format 1): keep this file secret (mode 0600).\n")
	b.WriteString("# One key a line: ID SECRET [retired=TIME | staged]. The first key seals; every key opens.\n")
	b.WriteString("# Rotate with 'agnara keys rotate FILE'; see docs/scaling.md.\n")
	for _, k := range keys {
		b.WriteString(k.ID)
		b.WriteByte(' ')
		b.WriteString(base64.RawURLEncoding.EncodeToString(k.Secret))
		switch {
		case k.Staged:
			b.WriteString(" staged")
		case !k.Retired.IsZero():
			b.WriteString(" retired=")
			b.WriteString(k.Retired.UTC().Format(time.RFC3339))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ReadKeyFile reads and parses the key file at path.
func ReadKeyFile(path string) ([]FileKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("requeststate: key file: %w", err)
	}
	defer f.Close()
	keys, err := ParseKeyFile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return keys, nil
}

// WriteKeyFile writes keys to path, readable by its owner only (0600). It
// writes a temporary file in the same directory and renames it over path,
// so that a server reading the file never sees half of it. It refuses keys
// that ParseKeyFile would refuse.
func WriteKeyFile(path string, keys []FileKey) error {
	text := formatKeyFile(keys)
	if _, err := ParseKeyFile(bytes.NewReader(text)); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("requeststate: writing key file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename, a no-op
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("requeststate: writing key file: %w", err)
	}
	if _, err := tmp.Write(text); err != nil {
		tmp.Close()
		return fmt.Errorf("requeststate: writing key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("requeststate: writing key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("requeststate: writing key file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("requeststate: writing key file: %w", err)
	}
	return nil
}

// LoadKeyRing reads the key file at path and returns its ring: the first key
// seals, every key opens.
func LoadKeyRing(path string) (*KeyRing, error) {
	keys, err := ReadKeyFile(path)
	if err != nil {
		return nil, err
	}
	return KeyRingOf(keys)
}

// KeyRingOf returns the ring of a key file's keys: the first seals, every
// key opens.
func KeyRingOf(keys []FileKey) (*KeyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("requeststate: no key")
	}
	ring := make([]Key, len(keys))
	for i, k := range keys {
		ring[i] = k.Key
	}
	return NewKeyRing(ring[0], ring[1:]...)
}

// NewKeyFile returns the keys of a new key file: one fresh current key
// whose id is derived from now.
func NewKeyFile(now time.Time) ([]FileKey, error) {
	k, err := GenerateKey(keyIDAt(now, nil))
	if err != nil {
		return nil, err
	}
	return []FileKey{{Key: k}}, nil
}

// StageKeyFile returns keys with a fresh key (its id derived from now)
// staged after the current one: every instance given the file opens states
// sealed with it, none seals with it yet. Distribute the staged file to
// every instance, then [RotateKeyFile] makes the staged key current; no
// instance then meets a state sealed under a key it lacks. It refuses a
// file that already has a staged key, and one that staging would take past
// 64 keys. keys is not modified.
func StageKeyFile(keys []FileKey, now time.Time) ([]FileKey, error) {
	if len(keys) == 0 {
		return nil, errors.New("requeststate: no key to stage beside")
	}
	taken := map[string]bool{}
	for _, k := range keys {
		if k.Staged {
			return nil, fmt.Errorf("requeststate: key %q is staged already: rotate to make it current first", k.ID)
		}
		taken[k.ID] = true
	}
	fresh, err := GenerateKey(keyIDAt(now, taken))
	if err != nil {
		return nil, err
	}
	out := append([]FileKey{keys[0], {Key: fresh, Staged: true}}, keys[1:]...)
	if len(out) > maxKeyFileKeys {
		return nil, fmt.Errorf("requeststate: staging would make more than %d keys; rotate to drop retired ones first", maxKeyFileKeys)
	}
	return out, nil
}

// RotateKeyFile returns keys with a new current key in front: the staged
// key if there is one ([StageKeyFile]), otherwise a fresh key whose id is
// derived from now. The previous current key is marked retired at now, and
// every key that was retired keep or longer before now is dropped. Keep
// should be at least the longest state TTL of the servers using the file
// (MaxTTL is always enough): a state sealed just before the rotation must
// still open until it expires. It refuses to keep more than 64 keys. keys
// is not modified.
func RotateKeyFile(keys []FileKey, now time.Time, keep time.Duration) ([]FileKey, error) {
	if keep < 0 {
		return nil, fmt.Errorf("requeststate: negative keep %v", keep)
	}
	now = now.UTC().Truncate(time.Second)
	var next *FileKey
	taken := map[string]bool{}
	for i, k := range keys {
		taken[k.ID] = true
		if k.Staged && next == nil {
			next = &FileKey{Key: keys[i].Key}
		}
	}
	if next == nil {
		fresh, err := GenerateKey(keyIDAt(now, taken))
		if err != nil {
			return nil, err
		}
		next = &FileKey{Key: fresh}
	}
	out := []FileKey{*next}
	for i, k := range keys {
		if k.ID == next.ID {
			continue
		}
		if i == 0 && k.Retired.IsZero() {
			k.Retired = now
		}
		if !k.Retired.IsZero() && now.Sub(k.Retired) >= keep {
			continue // every state it sealed has expired
		}
		out = append(out, k)
	}
	if len(out) > maxKeyFileKeys {
		return nil, fmt.Errorf("requeststate: rotating would keep more than %d keys; rotate less often or keep them for less time", maxKeyFileKeys)
	}
	return out, nil
}

// keyIDAt returns "k" and now as a compact UTC timestamp, with a suffix
// when that id is taken.
func keyIDAt(now time.Time, taken map[string]bool) string {
	base := "k" + now.UTC().Format("20060102T150405Z")
	id := base
	for i := 2; taken[id]; i++ {
		id = fmt.Sprintf("%s-%d", base, i)
	}
	return id
}
