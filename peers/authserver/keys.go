package main

import (
	"context"
	"crypto/rsa"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// signingKey is the server's RS256 key (op.SigningKey), generated at start.
type signingKey struct {
	id  string
	key *rsa.PrivateKey
}

// SignatureAlgorithm implements op.SigningKey.
func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }

// Key implements op.SigningKey.
func (k *signingKey) Key() any { return k.key }

// ID implements op.SigningKey.
func (k *signingKey) ID() string { return k.id }

// publicKey is the public half of signingKey, published in the JWKS.
type publicKey struct{ *signingKey }

// Algorithm implements op.Key.
func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }

// Use implements op.Key.
func (k publicKey) Use() string { return "sig" }

// Key implements op.Key.
func (k publicKey) Key() any { return &k.key.PublicKey }

// SigningKey implements op.Storage.
func (s *Storage) SigningKey(context.Context) (op.SigningKey, error) { return &s.key, nil }

// SignatureAlgorithms implements op.Storage.
func (s *Storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.Storage.
func (s *Storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{publicKey{&s.key}}, nil
}
