package main

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequestLifetime bounds the time from /authorize to redeeming the code.
const authRequestLifetime = 10 * time.Minute

// Storage is the in-memory op.Storage of the server: the configured
// clients and users, the authorization requests in progress, and the
// issued tokens. It also implements op.ClientCredentialsStorage,
// op.TokenExchangeStorage and op.CanGetPrivateClaimsFromRequest.
// Everything is lost when the process ends, as a test peer wants.
type Storage struct {
	cfg *Config
	key signingKey

	mu           sync.Mutex
	clients      map[string]*client
	users        map[string]UserConfig // by username
	authRequests map[string]*authRequest
	codes        map[string]string // code → auth request id
	access       map[string]*accessToken
	refresh      map[string]*refreshToken
}

var (
	_ op.Storage                        = (*Storage)(nil)
	_ op.ClientCredentialsStorage       = (*Storage)(nil)
	_ op.TokenExchangeStorage           = (*Storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*Storage)(nil)
)

// newStorage returns a storage holding cfg's clients and users, with a
// new RS256 signing key.
func newStorage(cfg *Config) (*Storage, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	s := &Storage{
		cfg:          cfg,
		key:          signingKey{id: rand.Text()[:16], key: key},
		clients:      map[string]*client{},
		users:        map[string]UserConfig{},
		authRequests: map[string]*authRequest{},
		codes:        map[string]string{},
		access:       map[string]*accessToken{},
		refresh:      map[string]*refreshToken{},
	}
	for _, c := range cfg.Clients {
		s.clients[c.ID] = &client{c}
	}
	for _, u := range cfg.Users {
		s.users[u.Username] = u
	}
	return s, nil
}

// newID returns a random, unguessable identifier.
func newID() string { return rand.Text() }

// client returns the registered client id, or nil.
func (s *Storage) client(id string) *client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clients[id]
}

// CreateAuthRequest implements op.Storage. It checks PKCE (S256 only;
// required of public clients) and the RFC 8707 resources, which the
// server put in ctx (withResources).
func (s *Storage) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	c := s.client(req.ClientID)
	if c == nil {
		return nil, oidc.ErrInvalidClient()
	}
	var challenge *oidc.CodeChallenge
	switch {
	case req.CodeChallenge != "" && req.CodeChallengeMethod != oidc.CodeChallengeMethodS256:
		return nil, oidc.ErrInvalidRequest().WithDescription("code_challenge_method must be S256")
	case req.CodeChallenge != "":
		challenge = &oidc.CodeChallenge{Challenge: req.CodeChallenge, Method: oidc.CodeChallengeMethodS256}
	case c.Public:
		return nil, oidc.ErrInvalidRequest().WithDescription("a public client must use PKCE (code_challenge with S256)")
	}
	resources := resourcesFrom(ctx)
	for _, r := range resources {
		if !c.allowsAudience(r) {
			return nil, oidc.ErrInvalidTarget().WithDescription("resource is not one of the client's audiences")
		}
	}
	ar := &authRequest{
		id:           newID(),
		created:      time.Now(),
		clientID:     req.ClientID,
		redirectURI:  req.RedirectURI,
		state:        req.State,
		nonce:        req.Nonce,
		scopes:       req.Scopes,
		responseType: req.ResponseType,
		responseMode: req.ResponseMode,
		challenge:    challenge,
		resources:    resources,
		subject:      userID,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests[ar.id] = ar
	cp := *ar
	return &cp, nil
}

// AuthRequestByID implements op.Storage.
func (s *Storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok || time.Since(ar.created) > authRequestLifetime {
		return nil, errors.New("unknown or expired authorization request")
	}
	cp := *ar
	return &cp, nil
}

// AuthRequestByCode implements op.Storage. When the token request names
// resources (the server put them in ctx, withTokenAudience), the access
// token is for those alone.
func (s *Storage) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	ar, err := s.authRequestByCode(code)
	if err != nil {
		return nil, err
	}
	ar.tokenAudience = tokenAudienceFrom(ctx)
	return ar, nil
}

// authRequestByCode returns a copy of the completed request a code was
// issued for.
func (s *Storage) authRequestByCode(code string) (*authRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[s.codes[code]]
	if !ok || !ar.done || time.Since(ar.created) > authRequestLifetime {
		return nil, errors.New("unknown, used or expired code")
	}
	cp := *ar
	return &cp, nil
}

// SaveAuthCode implements op.Storage.
func (s *Storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.authRequests[id]; !ok {
		return errors.New("unknown authorization request")
	}
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest implements op.Storage; it also makes the request's
// code unusable, so that a code is redeemed once.
func (s *Storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for code, rid := range s.codes {
		if rid == id {
			delete(s.codes, code)
		}
	}
	return nil
}

// completeAuthRequest records that subject signed in for request id.
func (s *Storage) completeAuthRequest(id, subject string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ar, ok := s.authRequests[id]
	if !ok || time.Since(ar.created) > authRequestLifetime {
		return errors.New("unknown or expired authorization request")
	}
	ar.subject, ar.done, ar.authTime = subject, true, time.Now()
	return nil
}

// checkPassword returns the subject of the user with these credentials.
func (s *Storage) checkPassword(username, password string) (string, bool) {
	s.mu.Lock()
	u, ok := s.users[username]
	s.mu.Unlock()
	if !ok || subtle.ConstantTimeCompare([]byte(u.Password), []byte(password)) != 1 {
		return "", false
	}
	return u.Subject, true
}

// CreateAccessToken implements op.Storage: it records a new access token
// and returns its id, which becomes the JWT's jti.
func (s *Storage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.newAccessToken(req, "")
	return at.id, at.expiration, nil
}

// newAccessToken records an access token for req; s.mu is held.
func (s *Storage) newAccessToken(req op.TokenRequest, refresh string) *accessToken {
	at := &accessToken{
		id:         newID(),
		clientID:   requestClientID(req),
		subject:    req.GetSubject(),
		audience:   req.GetAudience(),
		scopes:     req.GetScopes(),
		expiration: time.Now().Add(s.cfg.accessLifetime),
		refresh:    refresh,
	}
	if len(at.audience) == 0 {
		at.audience = []string{at.clientID}
	}
	if te, ok := req.(op.TokenExchangeRequest); ok {
		at.act = s.actLocked(te)
	}
	s.access[at.id] = at
	return at
}

// CreateAccessAndRefreshTokens implements op.Storage: for a code grant
// with offline_access it issues a refresh token; for a refresh_token grant
// it rotates the refresh token (the old one stops working).
func (s *Storage) CreateAccessAndRefreshTokens(_ context.Context, req op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var rt refreshToken
	switch r := req.(type) {
	case *authRequest:
		rt = refreshToken{
			clientID:  r.clientID,
			subject:   r.subject,
			scopes:    r.scopes,
			resources: r.resources,
			authTime:  r.authTime,
			amr:       r.GetAMR(),
		}
	case *refreshRequest:
		old, ok := s.refresh[current]
		if !ok || old.clientID != r.rt.clientID {
			return "", "", time.Time{}, oidc.ErrInvalidGrant().WithDescription("invalid refresh token")
		}
		delete(s.refresh, current)
		rt = *old // the scopes of a rotated refresh token do not change
	default:
		return "", "", time.Time{}, oidc.ErrInvalidRequest().WithDescription("refresh tokens are not issued for this grant")
	}
	rt.token = newID()
	rt.expiration = time.Now().Add(s.cfg.refreshLifetime)
	s.refresh[rt.token] = &rt
	at := s.newAccessToken(req, rt.token)
	return at.id, rt.token, at.expiration, nil
}

// TokenRequestByRefreshToken implements op.Storage. When the token
// request names resources (withTokenAudience), the access token is for
// those alone.
func (s *Storage) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	rt, err := s.refreshToken(token)
	if err != nil {
		return nil, err
	}
	aud := tokenAudienceFrom(ctx)
	if len(aud) == 0 {
		aud = rt.grantAudience()
	}
	return &refreshRequest{rt: *rt, audience: aud}, nil
}

// refreshToken returns a copy of a valid refresh token.
func (s *Storage) refreshToken(token string) (*refreshToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refresh[token]
	if !ok || time.Now().After(rt.expiration) {
		return nil, errors.New("unknown, revoked or expired refresh token")
	}
	cp := *rt
	return &cp, nil
}

// grantAudience is the audience of the grant a refresh token continues.
func (rt *refreshToken) grantAudience() []string {
	if len(rt.resources) > 0 {
		return rt.resources
	}
	return []string{rt.clientID}
}

// TerminateSession implements op.Storage; the server keeps no sessions.
func (s *Storage) TerminateSession(context.Context, string, string) error { return nil }

// GetRefreshTokenInfo implements op.Storage.
func (s *Storage) GetRefreshTokenInfo(_ context.Context, _ string, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rt, ok := s.refresh[token]
	if !ok {
		return "", "", op.ErrInvalidRefreshToken
	}
	return rt.subject, rt.token, nil
}

// RevokeToken implements op.Storage (RFC 7009): tokenOrID is an access
// token's id or a refresh token. Revoking a refresh token also revokes the
// access tokens issued with it. An unknown token is not an error.
func (s *Storage) RevokeToken(_ context.Context, tokenOrID, _ string, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at, ok := s.access[tokenOrID]; ok {
		if at.clientID != clientID {
			return oidc.ErrUnauthorizedClient().WithDescription("the token was not issued to this client")
		}
		at.revoked = true
		return nil
	}
	rt, ok := s.refresh[tokenOrID]
	if !ok {
		return nil
	}
	if rt.clientID != clientID {
		return oidc.ErrUnauthorizedClient().WithDescription("the token was not issued to this client")
	}
	delete(s.refresh, tokenOrID)
	for _, at := range s.access {
		if at.refresh == tokenOrID {
			at.revoked = true
		}
	}
	return nil
}

// activeAccessToken returns a copy of the access token with this id when
// it is neither revoked nor expired.
func (s *Storage) activeAccessToken(id string) (*accessToken, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.access[id]
	if !ok || at.revoked || time.Now().After(at.expiration) {
		return nil, false
	}
	cp := *at
	return &cp, true
}

// GetClientByClientID implements op.Storage.
func (s *Storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c := s.client(id); c != nil {
		return c, nil
	}
	return nil, errors.New("unknown client")
}

// AuthorizeClientIDSecret implements op.Storage.
func (s *Storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	c := s.client(id)
	if c == nil || c.Public || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return errors.New("invalid client credentials")
	}
	return nil
}

// ClientCredentials implements op.ClientCredentialsStorage.
func (s *Storage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := s.AuthorizeClientIDSecret(ctx, id, secret); err != nil {
		return nil, oidc.ErrInvalidClient().WithParent(err)
	}
	return s.client(id), nil
}

// ClientCredentialsTokenRequest implements op.ClientCredentialsStorage:
// every scope asked for must be one of the client's, and the audience is
// the resources of the request (withTokenAudience), or the client.
func (s *Storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c := s.client(id)
	if c == nil {
		return nil, oidc.ErrInvalidClient()
	}
	for _, sc := range scopes {
		if !c.IsScopeAllowed(sc) {
			return nil, oidc.ErrInvalidScope().WithDescription("scope %q is not allowed for this client", sc)
		}
	}
	aud := tokenAudienceFrom(ctx)
	if len(aud) == 0 {
		aud = []string{id}
	}
	return &clientCredentialsRequest{clientID: id, scopes: scopes, audience: aud}, nil
}

// Health implements op.Storage.
func (s *Storage) Health(context.Context) error { return nil }

// scopeClaims are the private claims of an access token: its scope.
func scopeClaims(scopes []string) map[string]any {
	return map[string]any{"scope": strings.Join(scopes, " ")}
}

// GetPrivateClaimsFromRequest implements op.CanGetPrivateClaimsFromRequest.
func (s *Storage) GetPrivateClaimsFromRequest(_ context.Context, req op.TokenRequest, _ []string) (map[string]any, error) {
	return scopeClaims(req.GetScopes()), nil
}

// GetPrivateClaimsFromScopes implements op.Storage.
func (s *Storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return scopeClaims(scopes), nil
}

// SetUserinfoFromScopes implements op.Storage, for ID tokens: the subject
// and, with the profile scope, the username.
func (s *Storage) SetUserinfoFromScopes(_ context.Context, info *oidc.UserInfo, userID, _ string, scopes []string) error {
	s.setUserinfo(info, userID, scopes)
	return nil
}

// setUserinfo fills info for subject.
func (s *Storage) setUserinfo(info *oidc.UserInfo, subject string, scopes []string) {
	info.Subject = subject
	if !slices.Contains(scopes, oidc.ScopeProfile) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.users {
		if u.Subject == subject {
			info.PreferredUsername = u.Username
		}
	}
}

// SetUserinfoFromToken implements op.Storage, for the userinfo endpoint.
func (s *Storage) SetUserinfoFromToken(_ context.Context, info *oidc.UserInfo, tokenID, _, _ string) error {
	at, ok := s.activeAccessToken(tokenID)
	if !ok {
		return errors.New("access token is invalid, expired or revoked")
	}
	s.setUserinfo(info, at.subject, at.scopes)
	return nil
}

// SetIntrospectionFromToken implements op.Storage (RFC 7662).
func (s *Storage) SetIntrospectionFromToken(_ context.Context, resp *oidc.IntrospectionResponse, tokenID, _, _ string) error {
	at, ok := s.activeAccessToken(tokenID)
	if !ok {
		return errors.New("access token is invalid, expired or revoked")
	}
	resp.Subject, resp.ClientID, resp.Scope = at.subject, at.clientID, at.scopes
	resp.Audience, resp.JWTID, resp.TokenType = at.audience, at.id, oidc.BearerToken
	resp.Expiration = oidc.FromTime(at.expiration)
	return nil
}

// GetKeyByIDAndClientID implements op.Storage; the JWT profile grant and
// private_key_jwt client authentication are not supported.
func (s *Storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("client keys are not supported")
}

// ValidateJWTProfileScopes implements op.Storage; see GetKeyByIDAndClientID.
func (s *Storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, oidc.ErrUnsupportedGrantType()
}
