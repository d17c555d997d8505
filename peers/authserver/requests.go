package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// authRequest is an authorization request in progress (op.AuthRequest):
// created at /authorize, completed by the login page, turned into a code,
// and redeemed once at the token endpoint.
type authRequest struct {
	id           string
	created      time.Time
	clientID     string
	redirectURI  string
	state        string
	nonce        string
	scopes       []string
	responseType oidc.ResponseType
	responseMode oidc.ResponseMode
	challenge    *oidc.CodeChallenge
	// resources are the RFC 8707 resources of the authorization request:
	// the audience of every token of this grant.
	resources []string
	// tokenAudience, on the copy handed out for one token request, narrows
	// the audience of that request's access token to the resources it
	// names (a subset of resources).
	tokenAudience []string

	subject  string
	done     bool
	authTime time.Time
}

var _ op.AuthRequest = (*authRequest)(nil)

// LogValue keeps zitadel's log records of a request free of anything but
// its id and client.
func (a *authRequest) LogValue() slog.Value {
	return slog.GroupValue(slog.String("id", a.id), slog.String("client_id", a.clientID))
}

// GetID implements op.AuthRequest.
func (a *authRequest) GetID() string { return a.id }

// GetACR implements op.AuthRequest.
func (a *authRequest) GetACR() string { return "" }

// GetAMR implements op.AuthRequest: a password was checked.
func (a *authRequest) GetAMR() []string {
	if a.done {
		return []string{"pwd"}
	}
	return nil
}

// GetAudience implements op.AuthRequest: the resources asked for, or the
// client id when there were none.
func (a *authRequest) GetAudience() []string {
	switch {
	case len(a.tokenAudience) > 0:
		return a.tokenAudience
	case len(a.resources) > 0:
		return a.resources
	}
	return []string{a.clientID}
}

// GetAuthTime implements op.AuthRequest.
func (a *authRequest) GetAuthTime() time.Time { return a.authTime }

// GetClientID implements op.AuthRequest.
func (a *authRequest) GetClientID() string { return a.clientID }

// GetCodeChallenge implements op.AuthRequest.
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }

// GetNonce implements op.AuthRequest.
func (a *authRequest) GetNonce() string { return a.nonce }

// GetRedirectURI implements op.AuthRequest.
func (a *authRequest) GetRedirectURI() string { return a.redirectURI }

// GetResponseType implements op.AuthRequest.
func (a *authRequest) GetResponseType() oidc.ResponseType { return a.responseType }

// GetResponseMode implements op.AuthRequest.
func (a *authRequest) GetResponseMode() oidc.ResponseMode { return a.responseMode }

// GetScopes implements op.AuthRequest.
func (a *authRequest) GetScopes() []string { return a.scopes }

// GetState implements op.AuthRequest.
func (a *authRequest) GetState() string { return a.state }

// GetSubject implements op.AuthRequest.
func (a *authRequest) GetSubject() string { return a.subject }

// Done implements op.AuthRequest: the user has signed in.
func (a *authRequest) Done() bool { return a.done }

// refreshToken is an issued refresh token; its value is also its id.
type refreshToken struct {
	token      string
	clientID   string
	subject    string
	scopes     []string
	resources  []string // the grant's audience, kept across refreshes
	authTime   time.Time
	amr        []string
	expiration time.Time
}

// refreshRequest is a refresh_token grant request (op.RefreshTokenRequest).
type refreshRequest struct {
	rt       refreshToken
	audience []string // this access token's audience
}

var _ op.RefreshTokenRequest = (*refreshRequest)(nil)

// GetAMR implements op.RefreshTokenRequest.
func (r *refreshRequest) GetAMR() []string { return r.rt.amr }

// GetAudience implements op.RefreshTokenRequest.
func (r *refreshRequest) GetAudience() []string { return r.audience }

// GetAuthTime implements op.RefreshTokenRequest.
func (r *refreshRequest) GetAuthTime() time.Time { return r.rt.authTime }

// GetClientID implements op.RefreshTokenRequest.
func (r *refreshRequest) GetClientID() string { return r.rt.clientID }

// GetScopes implements op.RefreshTokenRequest.
func (r *refreshRequest) GetScopes() []string { return r.rt.scopes }

// GetSubject implements op.RefreshTokenRequest.
func (r *refreshRequest) GetSubject() string { return r.rt.subject }

// SetCurrentScopes implements op.RefreshTokenRequest: a refresh may ask
// for fewer scopes.
func (r *refreshRequest) SetCurrentScopes(scopes []string) { r.rt.scopes = scopes }

// clientCredentialsRequest is a client_credentials grant request
// (op.TokenRequest): the client is the subject.
type clientCredentialsRequest struct {
	clientID string
	scopes   []string
	audience []string
}

// GetSubject implements op.TokenRequest.
func (r *clientCredentialsRequest) GetSubject() string { return r.clientID }

// GetAudience implements op.TokenRequest.
func (r *clientCredentialsRequest) GetAudience() []string { return r.audience }

// GetScopes implements op.TokenRequest.
func (r *clientCredentialsRequest) GetScopes() []string { return r.scopes }

// accessToken records an issued access token by its id (the JWT's jti), so
// that it can be revoked and its scopes found when it is exchanged.
type accessToken struct {
	id         string
	clientID   string
	subject    string
	audience   []string
	scopes     []string
	expiration time.Time
	refresh    string         // the refresh token it came with, if any
	act        map[string]any // the RFC 8693 act claim, for exchanged tokens
	revoked    bool
}

// requestClientID returns the client a token request is for.
func requestClientID(req op.TokenRequest) string {
	switch r := req.(type) {
	case interface{ GetClientID() string }:
		return r.GetClientID()
	case *clientCredentialsRequest:
		return r.clientID
	}
	return ""
}

// ctxKey keys the per-request values the server hands the storage.
type ctxKey int

const (
	resourcesKey     ctxKey = iota // the resources of an authorization request
	tokenAudienceKey               // the resources of a token request
)

// withResources carries the resource parameters of an authorization
// request to CreateAuthRequest, which checks them.
func withResources(ctx context.Context, resources []string) context.Context {
	return context.WithValue(ctx, resourcesKey, resources)
}

// resourcesFrom returns what withResources put in ctx.
func resourcesFrom(ctx context.Context) []string {
	r, _ := ctx.Value(resourcesKey).([]string)
	return r
}

// withTokenAudience carries the (checked) resource parameters of a token
// request to the storage, as the audience of the token it issues.
func withTokenAudience(ctx context.Context, aud []string) context.Context {
	return context.WithValue(ctx, tokenAudienceKey, aud)
}

// tokenAudienceFrom returns what withTokenAudience put in ctx.
func tokenAudienceFrom(ctx context.Context) []string {
	a, _ := ctx.Value(tokenAudienceKey).([]string)
	return a
}
