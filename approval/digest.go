package approval

import (
	"encoding/json"
	"fmt"

	"github.com/agnara-go/agnara/internal/canonjson"
)

// ArgumentsDigest returns the digest [Intent.ArgumentsDigest] must hold for
// args: "sha256:" and the lowercase hex SHA-256 of the RFC 8785 (JSON
// Canonicalization Scheme) form of args, so that equal arguments written
// differently (member order, whitespace, number spelling) have one digest,
// reproducible by any conforming implementation. Empty args digest as {}.
// Input that is not I-JSON (duplicate member names, invalid UTF-8) is an
// error wrapping ErrInvalid. Safe for concurrent use.
func ArgumentsDigest(args json.RawMessage) (string, error) {
	d, err := canonjson.Digest(normalizeArguments(args))
	if err != nil {
		return "", fmt.Errorf("%w: arguments: %v", ErrInvalid, err)
	}
	return d, nil
}
