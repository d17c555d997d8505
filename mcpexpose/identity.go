package mcpexpose

import (
	"context"
	"slices"
	"time"

	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

// Keys of auth.TokenInfo.Extra that a token verifier sets so that the
// identity handed to the [IdentityMapper] carries the client, issuer and
// resource of the token. Values must be strings. Package mcpexpose/oidc sets
// them; a custom auth.TokenVerifier may too.
const (
	ExtraClientID = "agnara.client_id"
	ExtraIssuer   = "agnara.issuer"
	ExtraResource = "agnara.resource"
	// ExtraTokenID names the token itself, without holding it: a digest of
	// it, or its jti (Identity.TokenID). Package gateway's verifier sets it
	// to find the very token a call's request presented.
	ExtraTokenID = "agnara.token_id"
)

// Identity is what is known, verified and credential-free, about the caller
// of one request: facts from its access token, never the token itself and
// never arbitrary claims.
type Identity struct {
	// ClientID is the OAuth client the token was issued to.
	ClientID string
	// Issuer is the authorization server that issued the token.
	Issuer string
	// Subject is the user (or service) the token was issued for.
	Subject string
	// Resource is the resource (audience) the token was issued for.
	Resource string
	// Scopes are the token's scopes.
	Scopes []string
	// Expiry is when the token expires.
	Expiry time.Time
	// TokenID identifies the token the request presented, when the token
	// verifier names one (ExtraTokenID): a digest or a jti, never the
	// token. Requests presenting the same token have the same.
	TokenID string
}

// IdentityMapper decides who a verified caller is, as a principal. It is the
// application's trusted boundary: it must say explicitly whether the acting
// principal is the OAuth client, the subject, or both. An error refuses the
// request; it is logged and never shown to the caller.
//
// A mapper is called once per tools/list or tools/call request that carries
// a verified token, the first time a stage needs the caller (over HTTP with
// step-up, the step-up check; otherwise the server), and its answer serves
// every later stage of that request. Over HTTP it is also called once per
// handshake-era initialize, to count the session against
// Limits.MaxSessionsPerPrincipal. It must be safe for concurrent use.
type IdentityMapper func(ctx context.Context, id Identity) (policy.Principal, error)

// SubjectPrincipal is the default [IdentityMapper]: the principal's id is
// the token's subject (or, for client-credentials tokens without one, the
// client id), its scopes the token's scopes, its issuer the token's issuer.
func SubjectPrincipal(_ context.Context, id Identity) (policy.Principal, error) {
	actor := id.Subject
	if actor == "" {
		actor = id.ClientID
	}
	return policy.NewPrincipal(actor, id.Scopes).WithIssuer(id.Issuer), nil
}

// identityOf copies the credential-free facts out of verified token info.
func identityOf(ti *auth.TokenInfo) Identity {
	str := func(k string) string {
		s, _ := ti.Extra[k].(string)
		return s
	}
	return Identity{
		ClientID: str(ExtraClientID),
		Issuer:   str(ExtraIssuer),
		Subject:  ti.UserID,
		Resource: str(ExtraResource),
		Scopes:   slices.Clone(ti.Scopes),
		Expiry:   ti.Expiration,
		TokenID:  str(ExtraTokenID),
	}
}

// tokenKey is the key (policy.Principal.Key) of the caller a verified
// token speaks for, before the identity mapper: its issuer and subject;
// "" for no token, or a token without a subject. A handshake-era session
// belongs to it (sessions.stranger): the requests of a session that are
// not mapped (GET, DELETE, notifications) are still told apart by it.
func tokenKey(ti *auth.TokenInfo) string {
	if ti == nil {
		return ""
	}
	issuer, _ := ti.Extra[ExtraIssuer].(string)
	return policy.NewPrincipal(ti.UserID, nil).WithIssuer(issuer).Key()
}
