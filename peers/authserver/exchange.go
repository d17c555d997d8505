package main

import (
	"context"
	"slices"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// ValidateTokenExchangeRequest implements op.TokenExchangeStorage. The
// server has already checked the subject token, the client's grant and
// the audience; this checks them again, issues access tokens only, and
// sets the scopes: those asked for that the subject token has, or all of
// the subject token's when none are asked for.
func (s *Storage) ValidateTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) error {
	switch req.GetRequestedTokenType() {
	case "":
		req.SetRequestedTokenType(oidc.AccessTokenType)
	case oidc.AccessTokenType:
	default:
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued (requested_token_type)")
	}
	if req.GetExchangeSubjectTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("subject_token_type must be an access token")
	}
	subject, ok := s.activeAccessToken(req.GetExchangeSubjectTokenIDOrToken())
	if !ok {
		return oidc.ErrInvalidGrant().WithDescription("subject_token is invalid, expired or revoked")
	}
	c := s.client(req.GetClientID())
	if c == nil || !c.hasGrant(oidc.GrantTypeTokenExchange) {
		return oidc.ErrUnauthorizedClient()
	}
	for _, aud := range append(slices.Clone(req.GetAudience()), req.GetResourses()...) {
		if !c.allowsAudience(aud) {
			return oidc.ErrInvalidTarget().WithDescription("audience is not one of the client's audiences")
		}
	}
	scopes := subject.scopes
	if asked := req.GetScopes(); len(asked) > 0 {
		scopes = nil
		for _, sc := range asked {
			if slices.Contains(subject.scopes, sc) && !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
		if len(scopes) == 0 {
			return oidc.ErrInvalidScope().WithDescription("none of the scopes asked for is granted to the subject token")
		}
	}
	req.SetCurrentScopes(scopes)
	return nil
}

// CreateTokenExchangeRequest implements op.TokenExchangeStorage; exchanges
// are not recorded beyond the token they issue.
func (s *Storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest implements
// op.TokenExchangeStorage: the scope, and the RFC 8693 act claim naming
// the exchanging client (nesting the subject token's own act, if any).
func (s *Storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, req op.TokenExchangeRequest) (map[string]any, error) {
	claims := scopeClaims(req.GetScopes())
	s.mu.Lock()
	claims["act"] = s.actLocked(req)
	s.mu.Unlock()
	return claims, nil
}

// actLocked returns the act claim of a token exchanged by req; s.mu is
// held.
func (s *Storage) actLocked(req op.TokenExchangeRequest) map[string]any {
	act := map[string]any{"sub": req.GetClientID()}
	if prev, ok := s.access[req.GetExchangeSubjectTokenIDOrToken()]; ok && prev.act != nil {
		act["act"] = prev.act
	}
	return act
}

// SetUserinfoFromTokenExchangeRequest implements op.TokenExchangeStorage.
func (s *Storage) SetUserinfoFromTokenExchangeRequest(_ context.Context, info *oidc.UserInfo, req op.TokenExchangeRequest) error {
	info.Subject = req.GetSubject()
	return nil
}
