package approval

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agnara-go/agnara/policy"
)

// IdentityError is a principal id or issuer the store refuses to record or
// to judge a decision by (see [CheckIdentity]). It wraps [ErrInvalid]. Safe
// for concurrent reading.
type IdentityError struct {
	// Field is "id" or "issuer".
	Field string
	// Value is the refused text, as given.
	Value string
	// Problem says what is wrong with it, e.g. "ends with whitespace".
	Problem string
}

func (e *IdentityError) Error() string {
	return fmt.Sprintf("%v: principal %s %q %s; identities are printable text without surrounding whitespace", ErrInvalid, e.Field, e.Value, e.Problem)
}

// Unwrap returns [ErrInvalid].
func (e *IdentityError) Unwrap() error { return ErrInvalid }

// CheckIdentity reports whether a principal id and issuer can be recorded
// and compared: every store refuses others, at Prepare (the requester) and
// at every decision (the approver), with an [*IdentityError]. Both must be
// valid UTF-8 made of graphic characters (letters, marks, numbers,
// punctuation, symbols and U+0020 SPACE), neither starting nor ending with
// a space. That refuses control characters (a newline, an ANSI escape),
// invisible format characters (U+200B ZERO WIDTH SPACE, U+202E
// RIGHT-TO-LEFT OVERRIDE) and spaces other than U+0020: each can make two
// different strings look like one name, or one name look like two (ADR
// 0017). Empty values are valid here: an empty id is the anonymous
// principal, which the store refuses for its own reason.
func CheckIdentity(id, issuer string) error {
	for _, f := range [...]struct{ field, v string }{{"id", id}, {"issuer", issuer}} {
		if p := identityProblem(f.v); p != "" {
			return &IdentityError{Field: f.field, Value: f.v, Problem: p}
		}
	}
	return nil
}

// identityProblem says what is wrong with s as a principal id or issuer, or
// "" when nothing is.
func identityProblem(s string) string {
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	for i, r := range s {
		switch {
		case r == ' ':
		case unicode.IsControl(r):
			return fmt.Sprintf("contains the control character %U at byte %d", r, i)
		case unicode.IsSpace(r):
			return fmt.Sprintf("contains the space character %U at byte %d (only U+0020 is allowed, and not at either end)", r, i)
		case !unicode.IsGraphic(r):
			return fmt.Sprintf("contains the invisible or unassigned character %U at byte %d", r, i)
		}
	}
	if strings.HasPrefix(s, " ") {
		return "starts with a space"
	}
	if strings.HasSuffix(s, " ") {
		return "ends with a space"
	}
	return ""
}

// checkPrincipal is [CheckIdentity] for a principal acting on approvals.
func checkPrincipal(p policy.Principal, role string) error {
	if err := CheckIdentity(p.ID(), p.Issuer()); err != nil {
		return fmt.Errorf("%s: %w", role, err)
	}
	return nil
}

// requester is the principal in records as its requester, by its issuer
// and id: what it is compared by (policy.Principal.Key).
func requester(in Intent) policy.Principal {
	return policy.NewPrincipal(in.PrincipalID, nil).WithIssuer(in.PrincipalIssuer)
}

// isRequester reports whether p is exactly the requester of in: the same
// caller (policy.Principal.Key: the same id and issuer, byte for byte). It
// grants the requester's own rights, so it never widens the match: not to
// an anonymous principal, nor to a look-alike id (SamePerson only
// refuses).
func isRequester(p policy.Principal, in Intent) bool {
	return !p.IsAnonymous() && p.Key() == requester(in).Key()
}
