// Package requeststate seals the state of MCP multi-round-trip requests: the
// opaque requestState string a server returns with an input-required result
// and the client echoes, unchanged, on its retry.
//
// A client holds the state but can do nothing useful with it except send it
// back once. It cannot read it, forge it, alter it, use it twice, or move it
// to another call:
//
//   - The state is encrypted and authenticated with AES-256-GCM under a
//     server key. Any change to any byte, any truncation or any extension
//     makes [Sealer.Open] fail.
//   - The state is bound to a [Binding]: the method, the target (tool name),
//     a digest of the call's arguments, the principal and its issuer, and
//     the audience (the server's resource identity). These are not stored in
//     the state; they are authenticated as additional data, so opening with
//     any field different fails as surely as tampering does.
//   - The state expires: it carries when it was sealed and its expiry,
//     [Options.TTL] later, and is refused from then on.
//   - The state is single-use: it carries a fresh random 128-bit id, and
//     [Sealer.Open] records that id in a [ReplayStore] until the state's
//     expiry, only after everything else has been verified. A second Open of
//     the same state fails. Several server instances that accept each
//     other's states must share both the keys and the ReplayStore; the
//     default [MemoryReplayStore] enforces single use within one process.
//   - A store that loses what it recorded (a process restart for the
//     memory store; a restart, flush or failover for Redis) refuses every
//     state sealed before the loss, since it can no longer tell whether it
//     was used: a restart costs a confirmation in flight its retry (the
//     client asks again), never a second effect. That is why the state
//     carries when it was sealed.
//
// Every invalid state gives the same error, [ErrInvalid], whose message
// reveals nothing about why it was refused. When the ReplayStore cannot tell
// whether a state was used, Open fails closed with [ErrUnavailable].
//
// # Keys and rotation
//
// A [KeyRing] holds the current key, which seals, and previous keys, which
// still open. Each key has a short id that is written, in clear, into the
// sealed state so that Open can find the key. To rotate, deploy a ring with
// the new key as current and the old one as previous on every instance; once
// the longest TTL has passed, the old key can be dropped. Nonces are random
// (96 bits), so a key should seal fewer than 2^32 states; rotate well before.
//
// # Key files
//
// A key file holds the key ring that every instance of a server shares, so
// that a state sealed by one instance opens on any other. It is a text file,
// one key a line, the current key first:
//
//	# agnara request-state keys (format 1): keep this file secret (mode 0600).
//	k20261201T090000Z 9pQ3...(43 characters)...
//	k20261202T090000Z Rm7c...(43 characters)... staged
//	k20261130T090000Z Xv0a...(43 characters)... retired=2026-12-01T09:00:00Z
//
// Each key line is the key id ([Key.ID]: 1 to 32 of A-Z a-z 0-9 _ -), one
// or more spaces or tabs, and the 32-byte secret in unpadded base64url
// (RFC 4648 §5; 43 characters). A key other than the first may end with
// retired=TIME (RFC 3339), when it stopped sealing: it still opens states,
// and [RotateKeyFile] drops it once its states have all expired; or with
// staged: the next current key, which opens states but seals none until a
// rotation makes it current ([StageKeyFile]). Blank lines and lines
// starting with '#' are ignored. The first key seals new states and must
// not be retired or staged; every key opens them. [LoadKeyRing] reads a
// file; the command 'agnara keys' writes, stages and rotates them.
//
// Secrets never appear on a command line or in an error message: errors
// name the line and the key id only.
//
// # Format
//
// A sealed state is base64url without padding (RFC 4648 §5) of
//
//	version (1 byte, 2) | key id length (1 byte) | key id | nonce (12 bytes) | ciphertext and tag
//
// The plaintext is when the state was sealed and its expiry (each unix
// milliseconds, 8 bytes big-endian), the single-use id (16 bytes) and the
// caller's data; version 1, without the sealing time, is no longer opened.
// The additional data is a length-prefixed encoding of a domain label, the
// version, the key id and the six Binding fields, in that order, so that no
// field boundary can move.
// Open accepts only the canonical encoding: at most 65536 characters, from
// the base64url alphabet only, with zero padding bits.
package requeststate

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// MaxTTL is the longest accepted [Options.TTL].
const MaxTTL = time.Hour

// Defaults and bounds, stated in the doc comments of what they apply to
// (TestDocumentedDefaults).
const (
	// defaultTTL is how long a sealed state stays valid when
	// [Options.TTL] is zero.
	defaultTTL = 5 * time.Minute
	// maxStateLen is the longest sealed state, in characters, that
	// [Sealer.Open] decodes; longer input is refused before decoding and
	// [Sealer.Seal] refuses data that would produce a longer state.
	maxStateLen = 64 << 10
	// secretSize is the length of a [Key.Secret]: an AES-256 key.
	secretSize = 32
	// maxKeyIDLen is the longest [Key.ID].
	maxKeyIDLen = 32
)

const (
	// version 2 added the sealing time; version 1 states are refused.
	version   = 2
	nonceSize = 12
	tagSize   = 16
	idSize    = 16
	timeSize  = 8 // one instant, unix milliseconds
	// timesSize is the sealing time and the expiry, which begin the
	// plaintext.
	timesSize = 2 * timeSize
	// domain separates this package's additional data from any other use
	// of the same keys.
	domain = "agnara-go/mcpexpose/requeststate"
	// minRaw is the shortest decoded state: header with a one-byte key
	// id, nonce, and the sealed times and id with their tag.
	minRaw = 2 + 1 + nonceSize + timesSize + idSize + tagSize
)

var (
	// ErrInvalid is the error [Sealer.Open] returns for any state it
	// refuses: garbage, truncated, extended or tampered, sealed with an
	// unknown key, bound to something else, expired, or already used. Its
	// message says only "invalid request state". Test with errors.Is.
	ErrInvalid = errors.New("invalid request state")
	// ErrUnavailable is the error [Sealer.Open] returns when the
	// [ReplayStore] fails, so that single use cannot be established. The
	// state is not accepted (Open fails closed); the caller decides
	// whether to report a transient failure. The store's own error is
	// wrapped (reachable with errors.As) but not part of the message.
	ErrUnavailable = errors.New("request state: replay store unavailable")
)

// unavailableError is ErrUnavailable wrapping a ReplayStore's error without
// putting its text in the message.
type unavailableError struct{ cause error }

func (e *unavailableError) Error() string   { return ErrUnavailable.Error() }
func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.cause} }

// Key is one AEAD key of a key ring.
type Key struct {
	// ID identifies the key inside sealed state: 1 to 32 characters from
	// [A-Za-z0-9_-]. It is not secret.
	ID string
	// Secret is the AES-256-GCM key: exactly 32 bytes. Generate it with
	// [GenerateKey] or another cryptographically secure source.
	Secret []byte
}

// GenerateKey returns a key with the given id and a fresh secret from
// crypto/rand. It fails when id is not a valid key id.
func GenerateKey(id string) (Key, error) {
	if err := checkKeyID(id); err != nil {
		return Key{}, err
	}
	secret := make([]byte, secretSize)
	if _, err := rand.Read(secret); err != nil {
		return Key{}, fmt.Errorf("requeststate: generating key %q: %w", id, err)
	}
	return Key{ID: id, Secret: secret}, nil
}

func checkKeyID(id string) error {
	if len(id) == 0 || len(id) > maxKeyIDLen {
		return fmt.Errorf("requeststate: key id %q must be 1 to %d characters", id, maxKeyIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("requeststate: key id %q may contain only A-Z, a-z, 0-9, '_' and '-'", id)
		}
	}
	return nil
}

// KeyRing holds the current key, used to seal, and previous keys, still
// accepted to open, for rotation. It is immutable and safe for concurrent
// use. The zero KeyRing has no key and is refused by [NewSealer].
type KeyRing struct {
	current string
	aeads   map[string]cipher.AEAD
}

// NewKeyRing returns a ring that seals with current and opens states sealed
// with current or any of previous. Every key id must be valid and distinct,
// and every secret exactly 32 bytes. The ring keeps its own copy of the key
// material: changing the secrets afterwards does not affect it.
func NewKeyRing(current Key, previous ...Key) (*KeyRing, error) {
	r := &KeyRing{current: current.ID, aeads: make(map[string]cipher.AEAD, 1+len(previous))}
	for i, k := range append([]Key{current}, previous...) {
		if err := checkKeyID(k.ID); err != nil {
			return nil, err
		}
		if len(k.Secret) != secretSize {
			return nil, fmt.Errorf("requeststate: key %q: secret is %d bytes, want %d", k.ID, len(k.Secret), secretSize)
		}
		if _, dup := r.aeads[k.ID]; dup {
			return nil, fmt.Errorf("requeststate: key id %q appears more than once (key %d)", k.ID, i)
		}
		// aes.NewCipher expands the key into its own schedule; the
		// caller's slice is not retained.
		block, err := aes.NewCipher(k.Secret)
		if err != nil {
			return nil, fmt.Errorf("requeststate: key %q: %w", k.ID, err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("requeststate: key %q: %w", k.ID, err)
		}
		r.aeads[k.ID] = aead
	}
	return r, nil
}

// CurrentID returns the id of the key that seals new state.
func (r *KeyRing) CurrentID() string { return r.current }

// Binding is what a sealed state is bound to. It is not stored in the state:
// the caller supplies it to both [Sealer.Seal] and [Sealer.Open], from the
// request at hand, and opening with any field different fails. Fill every
// field that identifies the interaction; an empty field is compared like any
// other value.
type Binding struct {
	// Method is the JSON-RPC method, e.g. "tools/call".
	Method string
	// Target is what the method acts on: for tools/call, the tool name.
	Target string
	// ArgumentsDigest is a digest of the call's arguments (for example
	// SHA-256 of their canonical JSON), so that the state cannot be
	// replayed with other arguments.
	ArgumentsDigest string
	// PrincipalID identifies the authenticated caller (e.g. the token
	// subject).
	PrincipalID string
	// PrincipalIssuer is the issuer that authenticated PrincipalID.
	PrincipalIssuer string
	// Audience is the resource or server identity the state was issued
	// by, e.g. the server's canonical resource URI.
	Audience string
}

// Options configures a [Sealer]. A nil *Options and every zero field mean
// the documented default.
type Options struct {
	// TTL is how long a sealed state stays valid: 5 minutes when zero;
	// otherwise it must be positive and at most [MaxTTL].
	TTL time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Replay enforces single use. When nil, each Sealer gets its own
	// in-process [MemoryReplayStore] on the same clock as Now, which
	// refuses states sealed before the Sealer was made. Instances that
	// open each other's states must share one store. A store given here
	// judges expiry, and when it lost its memory, by its own clock
	// (NewMemoryReplayStore: the system clock), which must agree with Now.
	Replay ReplayStore
}

// Sealer seals and opens request state with a [KeyRing]. It is safe for
// concurrent use.
type Sealer struct {
	ring   *KeyRing
	ttl    time.Duration
	now    func() time.Time
	replay ReplayStore
}

// NewSealer returns a Sealer that seals with ring's current key and opens
// with any of its keys. It fails when ring is nil or has no key, or when
// opts.TTL is negative or longer than MaxTTL.
func NewSealer(ring *KeyRing, opts *Options) (*Sealer, error) {
	if ring == nil || ring.aeads[ring.current] == nil {
		return nil, errors.New("requeststate: NewSealer needs a key ring from NewKeyRing")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.TTL == 0:
		o.TTL = defaultTTL
	case o.TTL < 0 || o.TTL > MaxTTL:
		return nil, fmt.Errorf("requeststate: TTL %v must be positive and at most %v", o.TTL, MaxTTL)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Replay == nil {
		o.Replay = &MemoryReplayStore{now: o.Now, start: storeStart(o.Now())}
	}
	return &Sealer{ring: ring, ttl: o.TTL, now: o.Now, replay: o.Replay}, nil
}

// Seal returns a sealed state carrying data, bound to b, stamped with the
// time now and expiring TTL from now. Every call draws a fresh random nonce and a fresh random 128-bit
// single-use id, so sealing the same data twice gives two unrelated states.
// Seal fails when the state would be longer than 65536 characters or when
// the system's random source fails.
func (s *Sealer) Seal(b Binding, data []byte) (string, error) {
	keyID := s.ring.current
	aead := s.ring.aeads[keyID]
	header := 2 + len(keyID)
	rawLen := header + nonceSize + timesSize + idSize + len(data) + tagSize
	if len(data) > maxStateLen || base64.RawURLEncoding.EncodedLen(rawLen) > maxStateLen {
		return "", fmt.Errorf("requeststate: %d bytes of data would exceed the %d-character state limit", len(data), maxStateLen)
	}

	raw := make([]byte, header+nonceSize, rawLen)
	raw[0] = version
	raw[1] = byte(len(keyID))
	copy(raw[2:], keyID)
	nonce := raw[header : header+nonceSize]

	plain := make([]byte, timesSize+idSize, timesSize+idSize+len(data))
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("requeststate: nonce: %w", err)
	}
	if _, err := rand.Read(plain[timesSize:]); err != nil {
		return "", fmt.Errorf("requeststate: id: %w", err)
	}
	now := s.now()
	binary.BigEndian.PutUint64(plain, uint64(now.UnixMilli()))
	binary.BigEndian.PutUint64(plain[timeSize:], uint64(now.Add(s.ttl).UnixMilli()))
	plain = append(plain, data...)

	raw = aead.Seal(raw, nonce, plain, additionalData(keyID, b))
	return base64.RawURLEncoding.EncodeToString(raw), nil
}

// Open verifies state against b and returns its data. It succeeds once per
// state: the state must have been sealed by a key of the ring, be unaltered,
// be bound to exactly b, be unexpired, and not have been opened before (nor
// sealed before its ReplayStore last lost its memory). On
// success the data is non-nil (empty when the sealed data was empty).
//
// Any refused state gives nil data and ErrInvalid. The single-use id is
// recorded in the ReplayStore only after everything else has been verified,
// so invalid attempts do not reach the store; when the store fails, Open
// returns nil data and an error matching ErrUnavailable. Open never panics,
// whatever state is.
func (s *Sealer) Open(ctx context.Context, state string, b Binding) ([]byte, error) {
	// Decode: bounded length, base64url alphabet only (the decoder would
	// otherwise skip newlines), zero padding bits (Strict): one state,
	// one encoding.
	if len(state) < base64.RawURLEncoding.EncodedLen(minRaw) || len(state) > maxStateLen {
		return nil, ErrInvalid
	}
	for i := 0; i < len(state); i++ {
		c := state[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return nil, ErrInvalid
		}
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(state)
	if err != nil {
		return nil, ErrInvalid
	}

	// Header and key.
	if len(raw) < minRaw || raw[0] != version {
		return nil, ErrInvalid
	}
	idLen := int(raw[1])
	header := 2 + idLen
	if idLen == 0 || idLen > maxKeyIDLen || len(raw) < header+nonceSize+timesSize+idSize+tagSize {
		return nil, ErrInvalid
	}
	keyID := string(raw[2:header])
	aead, ok := s.ring.aeads[keyID]
	if !ok {
		return nil, ErrInvalid
	}

	// Authenticity and binding.
	nonce := raw[header : header+nonceSize]
	plain, err := aead.Open(nil, nonce, raw[header+nonceSize:], additionalData(keyID, b))
	if err != nil || len(plain) < timesSize+idSize {
		return nil, ErrInvalid
	}

	// Expiry.
	sealed := time.UnixMilli(int64(binary.BigEndian.Uint64(plain)))
	expires := time.UnixMilli(int64(binary.BigEndian.Uint64(plain[timeSize:])))
	if !s.now().Before(expires) {
		return nil, ErrInvalid
	}

	// Single use, last.
	if ctx == nil {
		ctx = context.Background()
	}
	fresh, err := s.replay.Use(ctx, hex.EncodeToString(plain[timesSize:timesSize+idSize]), sealed, expires)
	if err != nil {
		return nil, &unavailableError{cause: err}
	}
	if !fresh {
		return nil, ErrInvalid
	}
	return plain[timesSize+idSize:], nil
}

// additionalData is the canonical, unambiguous encoding of everything a
// state is bound to besides its own bytes: each field preceded by its length
// as 8 bytes big-endian, so that no boundary can shift between fields.
func additionalData(keyID string, b Binding) []byte {
	fields := [...]string{
		domain,
		string([]byte{version}),
		keyID,
		b.Method,
		b.Target,
		b.ArgumentsDigest,
		b.PrincipalID,
		b.PrincipalIssuer,
		b.Audience,
	}
	n := 0
	for _, f := range fields {
		n += 8 + len(f)
	}
	ad := make([]byte, 0, n)
	for _, f := range fields {
		ad = binary.BigEndian.AppendUint64(ad, uint64(len(f)))
		ad = append(ad, f...)
	}
	return ad
}
