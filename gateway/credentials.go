package gateway

import (
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpimport"
)

// revisionError is an upstream refused for the revision it speaks: a
// permanent failure ([mcpimport.ProtocolUnsupported]).
type revisionError struct{ msg string }

func (e *revisionError) Error() string { return e.msg }

// FailureReason returns [mcpimport.ProtocolUnsupported].
func (e *revisionError) FailureReason() execution.Reason { return mcpimport.ProtocolUnsupported }

// credentials returns the upstream's credentials: whose authority its
// requests carry.
func (u *upstream) credentials() string {
	if h := u.cfg.HTTP; h != nil && h.Credentials != "" {
		return h.Credentials
	}
	return CredentialsGateway
}

// authorizer is the upstream session's mcpimport.ConnectOptions.Authorizer:
// with credentials "token_exchange", the caller's exchanged token, got
// before anything is sent; nil otherwise.
func (u *upstream) authorizer() mcpimport.Authorizer {
	if s := u.source(); s != nil {
		return s
	}
	return nil // not a nil credentialSource in a non-nil interface
}

// source is where a caller's own token for the upstream comes from: its
// exchanger or its consent client; nil in the gateway's identity.
func (u *upstream) source() credentialSource {
	switch {
	case u.exchange != nil:
		return u.exchange
	case u.consent != nil:
		return u.consent
	}
	return nil
}
