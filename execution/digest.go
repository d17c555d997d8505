package execution

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agnara-go/agnara/internal/canonjson"
)

// ArgumentsDigest returns the one digest agnara binds a call's arguments
// to: "sha256:" followed by the lowercase hex SHA-256 of the arguments'
// RFC 8785 (JSON Canonicalization Scheme) form (ADR 0009). Equal arguments
// written differently (member order, whitespace, escapes such as "\u0061"
// for "a", number spellings such as 1.0 for 1) have one digest, and any
// conforming implementation in another language reproduces it. Empty
// arguments and null digest as {}.
//
// Input that is not I-JSON is refused, never silently repaired: a duplicate
// member name (which JSON decoders resolve differently, so that a digest
// over "the last one wins" could describe other arguments than those a
// handler reads), invalid UTF-8, a lone surrogate escape, a number beyond
// the range of a double, trailing data. The error is then a [*Failure] with
// code [InvalidInput] that says what is wrong and where, so that a pipeline
// stage returning it answers the caller as for any other bad input.
//
// Confirmation evidence (policy.Confirmation), sealed request state and
// durable approvals (package approval) are all bound to this digest, so that
// evidence given for some arguments cannot be used for others. Safe for
// concurrent use.
func ArgumentsDigest(args json.RawMessage) (string, error) {
	d, err := canonjson.Digest(NormalizeArguments(args))
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "canonjson: ")
		return "", invalidInput([]Violation{{Path: "", Message: "arguments are not I-JSON: " + msg}}, false)
	}
	return d, nil
}

// NormalizeArguments returns args without surrounding whitespace, and {} for
// empty arguments and null: the arguments a call without any stands for,
// as [ArgumentsDigest] digests them. It returns args itself (trimmed) or a
// new slice; it never modifies args.
func NormalizeArguments(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{}`)
	}
	return t
}
