package main

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// server is zitadel's op.LegacyServer with what this test peer adds on
// top: RFC 8707 resource parameters (as token audiences, checked against
// the client's audiences), RFC 8693 error codes for bad subject tokens
// and targets, and PKCE that cannot be skipped once a challenge was sent.
type server struct {
	*op.LegacyServer
	storage  *Storage
	provider op.OpenIDProvider
}

// newHandler returns the HTTP handler of the authorization server for
// issuer: zitadel's OpenID Provider endpoints, the login page, and RFC 8414
// metadata.
func newHandler(issuer string, st *Storage, logger *slog.Logger) (http.Handler, error) {
	config := &op.Config{
		CodeMethodS256:        true,
		AuthMethodPost:        true,
		GrantTypeRefreshToken: true,
		SupportedScopes:       supportedScopes(st.cfg),
	}
	// The key encrypts opaque tokens and codes; it lives as long as the
	// process, like everything else.
	if _, err := rand.Read(config.CryptoKey[:]); err != nil {
		return nil, err
	}
	provider, err := op.NewProvider(config, st, op.StaticIssuer(issuer),
		op.WithAllowInsecure(), // http on loopback
		op.WithLogger(logger),
	)
	if err != nil {
		return nil, err
	}
	s := &server{
		LegacyServer: op.NewLegacyServer(provider, *op.DefaultEndpoints),
		storage:      st,
		provider:     provider,
	}
	oidcHandler := op.RegisterLegacyServer(s, op.AuthorizeCallbackHandler(provider),
		op.WithFallbackLogger(logger))

	mux := http.NewServeMux()
	mux.Handle(loginPath, &login{storage: st, callback: issuer + op.DefaultEndpoints.Authorization.Relative() + "/callback"})
	mux.HandleFunc(metadataPath, func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = oidc.DiscoveryEndpoint
		oidcHandler.ServeHTTP(w, r2)
	})
	mux.Handle("/", oidcHandler)
	return mux, nil
}

// metadataPath is where RFC 8414 clients look for the server's metadata;
// it serves the OpenID discovery document.
const metadataPath = "/.well-known/oauth-authorization-server"

// supportedScopes lists openid, offline_access and every client's scopes.
func supportedScopes(cfg *Config) []string {
	scopes := []string{oidc.ScopeOpenID, oidc.ScopeOfflineAccess}
	for _, c := range cfg.Clients {
		for _, s := range c.Scopes {
			if !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
	}
	return scopes
}

// Discovery lists what this server supports: the code flow only, and the
// grants of supportedGrants.
func (s *server) Discovery(ctx context.Context, r *op.Request[struct{}]) (*op.Response, error) {
	resp, err := s.LegacyServer.Discovery(ctx, r)
	if err != nil {
		return nil, err
	}
	if d, ok := resp.Data.(*oidc.DiscoveryConfiguration); ok {
		d.GrantTypesSupported = supportedGrants
		d.ResponseTypesSupported = []string{string(oidc.ResponseTypeCode)}
		d.DeviceAuthorizationEndpoint = ""
		d.RequestParameterSupported = false
	}
	return resp, nil
}

// Authorize hands the request's resource parameters to the storage, which
// checks them against the client's audiences and records them.
func (s *server) Authorize(ctx context.Context, r *op.ClientRequest[oidc.AuthRequest]) (*op.Redirect, error) {
	return s.LegacyServer.Authorize(withResources(ctx, r.Form["resource"]), r)
}

// CodeExchange requires the code_verifier when the authorization request
// had a code_challenge, and narrows the token's audience to the resources
// the token request names, which must be among those authorized.
func (s *server) CodeExchange(ctx context.Context, r *op.ClientRequest[oidc.AccessTokenRequest]) (*op.Response, error) {
	ar, err := s.storage.authRequestByCode(r.Data.Code)
	if err != nil {
		return nil, oidc.ErrInvalidGrant().WithDescription("invalid code")
	}
	if ar.challenge != nil && r.Data.CodeVerifier == "" {
		return nil, oidc.ErrInvalidGrant().WithDescription("code_verifier required")
	}
	if ar.clientID != r.Client.GetID() {
		return nil, oidc.ErrInvalidGrant().WithDescription("the code was not issued to this client")
	}
	aud, err := narrow(r.Form["resource"], ar.GetAudience())
	if err != nil {
		return nil, err
	}
	return s.LegacyServer.CodeExchange(withTokenAudience(ctx, aud), r)
}

// RefreshToken narrows the token's audience to the resources the token
// request names, which must be among those of the grant.
func (s *server) RefreshToken(ctx context.Context, r *op.ClientRequest[oidc.RefreshTokenRequest]) (*op.Response, error) {
	rt, err := s.storage.refreshToken(r.Data.RefreshToken)
	if err != nil {
		return nil, oidc.ErrInvalidGrant().WithDescription("invalid refresh token")
	}
	aud, err := narrow(r.Form["resource"], rt.grantAudience())
	if err != nil {
		return nil, err
	}
	return s.LegacyServer.RefreshToken(withTokenAudience(ctx, aud), r)
}

// narrow checks that every resource asked for is in granted.
func narrow(asked, granted []string) ([]string, error) {
	for _, a := range asked {
		if !slices.Contains(granted, a) {
			return nil, oidc.ErrInvalidTarget().WithDescription("resource was not authorized for this grant")
		}
	}
	return asked, nil
}

// ClientCredentialsExchange makes the request's resources, which must be
// among the client's audiences, the token's audience.
func (s *server) ClientCredentialsExchange(ctx context.Context, r *op.ClientRequest[oidc.ClientCredentialsRequest]) (*op.Response, error) {
	c, ok := r.Client.(*client)
	if !ok {
		return nil, oidc.ErrInvalidClient()
	}
	aud, err := narrow(r.Form["resource"], c.Audiences)
	if err != nil {
		return nil, err
	}
	return s.LegacyServer.ClientCredentialsExchange(withTokenAudience(ctx, aud), r)
}

// TokenExchange (RFC 8693) checks, before zitadel does, what zitadel
// would refuse with the wrong error code: a subject token that is not a
// valid, unexpired, unrevoked access token of this server is
// invalid_grant; a resource or audience the client may not ask for is
// invalid_target. The resource and audience parameters both name the new
// token's audience.
func (s *server) TokenExchange(ctx context.Context, r *op.ClientRequest[oidc.TokenExchangeRequest]) (*op.Response, error) {
	c, ok := r.Client.(*client)
	if !ok {
		return nil, oidc.ErrInvalidClient()
	}
	if !c.hasGrant(oidc.GrantTypeTokenExchange) {
		return nil, oidc.ErrUnauthorizedClient()
	}
	d := r.Data
	switch {
	case d.SubjectTokenType != oidc.AccessTokenType:
		return nil, oidc.ErrInvalidRequest().WithDescription("subject_token_type must be " + string(oidc.AccessTokenType))
	case d.ActorToken != "":
		return nil, oidc.ErrInvalidRequest().WithDescription("actor_token is not supported")
	case d.RequestedTokenType != "" && d.RequestedTokenType != oidc.AccessTokenType:
		return nil, oidc.ErrInvalidRequest().WithDescription("only access tokens are issued (requested_token_type)")
	}
	claims, err := op.VerifyAccessToken[*oidc.AccessTokenClaims](ctx, d.SubjectToken, s.provider.AccessTokenVerifier(ctx))
	if err != nil {
		return nil, oidc.ErrInvalidGrant().WithDescription("subject_token is not a valid access token of this server")
	}
	if _, ok := s.storage.activeAccessToken(claims.JWTID); !ok {
		return nil, oidc.ErrInvalidGrant().WithDescription("subject_token is expired or revoked")
	}
	var targets []string
	for _, t := range append(slices.Clone(d.Resource), d.Audience...) {
		if !c.allowsAudience(t) {
			return nil, oidc.ErrInvalidTarget().WithDescription("resource/audience is not one of the client's audiences")
		}
		if !slices.Contains(targets, t) {
			targets = append(targets, t)
		}
	}
	// zitadel makes the token's audience of the audience parameter alone.
	d.Audience = targets
	return s.LegacyServer.TokenExchange(ctx, r)
}

// JWTProfile refuses the JWT bearer grant, which this server does not offer.
func (s *server) JWTProfile(context.Context, *op.Request[oidc.JWTProfileGrantRequest]) (*op.Response, error) {
	return nil, oidc.ErrUnsupportedGrantType()
}
