package gateway

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// sealingKey decodes the connections key: 32 bytes, base64 (standard or
// URL alphabet, padded or not).
func sealingKey(v string) ([]byte, error) {
	v = strings.TrimSpace(v)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(v); err == nil {
			if len(k) != 32 {
				return nil, fmt.Errorf("the key is %d bytes: want 32 random bytes, base64 (openssl rand -base64 32)", len(k))
			}
			return k, nil
		}
	}
	return nil, errors.New("the key is not base64: want 32 random bytes, base64 (openssl rand -base64 32)")
}

// sealer encrypts and authenticates what the gateway keeps outside its
// memory (grants in the approval store, the pages' cookies and links) with
// AES-256-GCM. Each sealed value is bound to a purpose and to whom it is
// for (the additional data), so that one cannot stand in for another: a
// grant sealed for alice does not open as bob's, nor a link as a cookie.
type sealer struct{ aead cipher.AEAD }

func newSealer(key []byte) (*sealer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead}, nil
}

// seal returns the nonce and the ciphertext of plain, bound to ad.
func (s *sealer) seal(ad string, plain []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	rand.Read(nonce) // never fails (crypto/rand)
	return s.aead.Seal(nonce, nonce, plain, []byte(ad))
}

// open returns what seal sealed with ad, or false.
func (s *sealer) open(ad string, sealed []byte) ([]byte, bool) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, false
	}
	plain, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(ad))
	return plain, err == nil
}

// sealText is seal for a cookie or a URL: base64url without padding.
func (s *sealer) sealText(ad string, plain []byte) string {
	return base64.RawURLEncoding.EncodeToString(s.seal(ad, plain))
}

// openText opens what sealText sealed, refusing anything over max bytes.
func (s *sealer) openText(ad, text string, max int) ([]byte, bool) {
	if len(text) > max {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return nil, false
	}
	return s.open(ad, b)
}
