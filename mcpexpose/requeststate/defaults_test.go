package requeststate

import (
	"testing"

	"github.com/agnara-go/agnara/internal/docdefault"
)

// TestDocumentedDefaults holds each default and bound to the value the
// doc comments state, mcpexpose's ServerOptions.StateTTL (which leaves a
// zero to this package) included.
func TestDocumentedDefaults(t *testing.T) {
	docdefault.Check(t, ".", []docdefault.Stated{
		{Decl: "Options.TTL", Says: "%v when zero", Value: defaultTTL},
		{Decl: "package", Says: "at most %v characters", Value: maxStateLen},
		{Decl: "Sealer.Seal", Says: "longer than %v characters", Value: maxStateLen},
		{Decl: "Key.Secret", Says: "exactly %v bytes", Value: secretSize},
		{Decl: "Key.ID", Says: "1 to %v characters", Value: maxKeyIDLen},
		{Decl: "ParseKeyFile", Says: "not %v bytes of base64url", Value: secretSize},
		{Decl: "ParseKeyFile", Says: "more than %v keys", Value: maxKeyFileKeys},
		{Decl: "StageKeyFile", Says: "past %v keys", Value: maxKeyFileKeys},
		{Decl: "RotateKeyFile", Says: "more than %v keys", Value: maxKeyFileKeys},
	})
	docdefault.Check(t, "..", []docdefault.Stated{
		{Decl: "ServerOptions.StateTTL", Says: "Default: %v", Value: defaultTTL},
	})
}
