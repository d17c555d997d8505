package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// idClaims are an ID token's claims beyond the registered ones (OpenID
// Connect Core section 2). Scope is not an OpenID Connect claim: it is a
// development convenience, so that a relying party can read the user's
// granted scopes (such as an approver scope) from the ID token alone.
type idClaims struct {
	Nonce             string           `json:"nonce,omitempty"`
	AuthTime          *jwt.NumericDate `json:"auth_time"`
	AccessTokenHash   string           `json:"at_hash"`
	Scope             string           `json:"scope"`
	PreferredUsername string           `json:"preferred_username"`
}

// authorizationCode redeems an authorization code for the authenticated
// client id (RFC 6749 section 4.1.3, RFC 7636 section 4.5).
//
// A code is spent by the first request that presents it, whatever comes of
// it: a wrong redirect_uri or code_verifier burns it too, so that nothing
// can be tried twice against one code. A replay is refused with
// invalid_grant; the tokens already issued for the code stay valid, because
// this issuer keeps no record of tokens and so cannot revoke them (RFC 6749
// section 4.1.2 says it SHOULD).
func (is *issuer) authorizationCode(clientID string, form url.Values) (*tokenResponse, *tokenError) {
	code, redirectURI, verifier := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier")
	switch {
	case code == "":
		return nil, badRequest("invalid_request", "code is missing")
	case redirectURI == "":
		return nil, badRequest("invalid_request", "redirect_uri is missing: send the one of the authorization request")
	case verifier == "":
		return nil, badRequest("invalid_request", "code_verifier is missing: this issuer requires PKCE")
	case !validCodeVerifier(verifier):
		return nil, badRequest("invalid_request", "code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, '-', '.', '_' and '~' (RFC 7636 section 4.1)")
	}
	resource, terr := resourceParam(form)
	if terr != nil {
		return nil, terr
	}

	g, st := is.codes.take(code)
	switch st {
	case missing:
		return nil, badRequest("invalid_grant", "unknown or expired authorization code (codes live %v)", codeTTL)
	case used:
		return nil, badRequest("invalid_grant", "authorization code already used: codes are single use")
	}
	req := g.request
	if req.clientID != clientID {
		return nil, badRequest("invalid_grant", "the authorization code was issued to another client")
	}
	if req.redirectURI != redirectURI {
		return nil, badRequest("invalid_grant", "redirect_uri differs from the one of the authorization request")
	}
	sum := sha256.Sum256([]byte(verifier))
	if subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(req.challenge)) != 1 {
		return nil, badRequest("invalid_grant", "code_verifier does not match the code_challenge")
	}
	// RFC 8707 section 2.2: a resource named when authorizing binds the
	// grant; otherwise the token request may name one.
	switch {
	case req.resource != "" && resource != "" && resource != req.resource:
		return nil, badRequest("invalid_target", "resource differs from the one of the authorization request")
	case req.resource != "":
		resource = req.resource
	case resource == "":
		resource = is.cfg.Audience
	}

	now := is.cfg.Now()
	scope := strings.Join(g.granted, " ")
	access, terr := is.accessToken(g.user, clientID, resource, scope, now)
	if terr != nil {
		return nil, terr
	}
	// at_hash: the left half of the access token's SHA-256 (OpenID Connect
	// Core section 3.1.3.6).
	atSum := sha256.Sum256([]byte(access))
	id, err := jwt.Signed(is.idSigner).Claims(jwt.Claims{
		Issuer:   is.cfg.Issuer,
		Subject:  g.user,
		Audience: jwt.Audience{clientID},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(is.cfg.TTL)),
	}).Claims(idClaims{
		Nonce:             req.nonce,
		AuthTime:          jwt.NewNumericDate(time.Unix(g.authTime, 0)),
		AccessTokenHash:   base64.RawURLEncoding.EncodeToString(atSum[:sha256.Size/2]),
		Scope:             scope,
		PreferredUsername: g.user,
	}).Serialize()
	if err != nil {
		is.logf("signing an ID token: %v", err)
		return nil, &tokenError{status: http.StatusInternalServerError, Code: "server_error", Description: "could not sign the ID token"}
	}
	is.logf("token issued: user %q via client %q, scope %q, aud %q, expires in %v", g.user, clientID, scope, resource, is.cfg.TTL)
	return &tokenResponse{
		AccessToken: access,
		TokenType:   "Bearer",
		ExpiresIn:   int64(is.cfg.TTL / time.Second),
		Scope:       scope,
		IDToken:     id,
	}, nil
}

// validCodeVerifier reports whether s is a code_verifier (RFC 7636 section
// 4.1): 43 to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" /
// "~".
func validCodeVerifier(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}
