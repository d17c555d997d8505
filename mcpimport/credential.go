package mcpimport

import (
	"context"
	"errors"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
)

// Credential failure reasons: a request made for a caller that the host
// could not authorize with a credential of the caller's own
// ([Authorizer], or the host's HTTP transport failing with one
// of these as its [execution.ReasonOf]). Nothing was sent upstream; a
// write's approval is not claimed when Authorize refuses, and its receipt
// is not_started when the transport does.
const (
	// ReasonCredentialRefused: no credential of the caller's own could be
	// had for the remote server: the caller presented no token, or the
	// authorization server refused to issue one for this caller (an
	// expired or revoked token, a resource or scope the caller's client may
	// not have) (forbidden).
	ReasonCredentialRefused execution.Reason = "mcp_credential_refused"
	// ReasonCredentialUnavailable: the authorization server that issues the
	// caller's credential for the remote server could not be reached, or
	// answered what cannot be read (unavailable).
	ReasonCredentialUnavailable execution.Reason = "mcp_credential_unavailable"
)

// The fixed messages of the credential reasons: what happened and what the
// caller can do, with nothing the authorization server said.
const (
	credentialRefusedMessage     = "no credential of the caller's own could be had for the remote server, so nothing was sent: sign in again with a token that allows it; if that does not help, the gateway's operator must allow the exchange"
	credentialUnavailableMessage = "the authorization server that issues the caller's credential for the remote server could not be reached, so nothing was sent; try again later"
)

// Authorizer is asked, with the caller, before anything is sent upstream
// on a caller's behalf: before a tools/call (for a write, before its
// approval is claimed), a resources/read and a prompts/get
// ([ConnectOptions].Authorizer). It lets a host whose HTTP transport adds
// each caller's own credential (package gateway's token exchange) get that
// credential first, so that a caller who cannot have one is refused before
// anything leaves. An error ends the request, with
// [ReasonCredentialRefused] or [ReasonCredentialUnavailable] when
// [execution.ReasonOf] gives one, else with ReasonCredentialUnavailable;
// the error itself is logged at debug, never shown to the caller. An
// Authorizer may ask the caller (a sign-in by URL: execution.Context.
// AskURL, with the *execution.Context the context carries for a call):
// execution.ErrInputRequired, or the *execution.Failure the caller's answer
// ends in, ends the request as it is. The
// transport's own failure with one of those reasons ends a request the
// same way. Requests made for no caller (discovery, pings) do not ask it.
// It must be safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, caller policy.Principal) error
}

// credentialReason returns the credential reason err carries (through any
// wrapping, as [execution.ReasonOf] reads it), or "".
func credentialReason(err error) execution.Reason {
	switch r := execution.ReasonOf(err); r {
	case ReasonCredentialRefused, ReasonCredentialUnavailable:
		return r
	}
	return ""
}

// authorized asks the session's Authorizer for caller before anything
// is sent on the caller's behalf. It returns the reason the request ends
// with and the Authorizer's error, for the host's logs; "" and nil when it
// may go; "" and an error to end the request with as it is: the
// Authorizer asked the caller (execution.ErrInputRequired) or the
// caller's answer refused (an *execution.Failure).
func (c *Catalog) authorized(ctx context.Context, caller policy.Principal) (execution.Reason, error) {
	if c.authorize == nil {
		return "", nil
	}
	err := c.authorize.Authorize(ctx, caller)
	if err == nil {
		return "", nil
	}
	if r := credentialReason(err); r != "" {
		return r, err
	}
	var f *execution.Failure
	if errors.Is(err, execution.ErrInputRequired) || errors.As(err, &f) {
		// The Authorizer asked the caller (a sign-in by URL), or the
		// caller's answer ended the call: the request ends with it.
		return "", err
	}
	return ReasonCredentialUnavailable, err
}

// authorizedFor is authorized for the caller ctx carries (a read's or a
// get's: policy.PrincipalFrom), the anonymous caller when it carries none.
func (c *Catalog) authorizedFor(ctx context.Context) (execution.Reason, error) {
	if c.authorize == nil {
		return "", nil
	}
	caller, _ := policy.PrincipalFrom(ctx)
	return c.authorized(ctx, caller)
}
