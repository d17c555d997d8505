package mcpimport

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agnara-go/agnara/internal/schemacheck"
)

// FuzzSchemaProfile checks schemas from remote servers, which are untrusted.
// Whatever arrives, checkSchema must not panic and must answer the same way
// twice; a refusal is a bounded, caller-safe *profileError; an acceptance is
// a closed object schema that compiles, and is refused once a keyword
// outside the profile is added to it.
//
// Each input is checked as a whole schema and as the schema of a property
// of a valid root: random bytes seldom form a whole schema the profile
// accepts, but small JSON objects are often acceptable property schemas,
// and that is where the keyword rules and the compiler meet.
func FuzzSchemaProfile(f *testing.F) {
	// The checked-in corpus is in testdata/fuzz/FuzzSchemaProfile.
	f.Fuzz(func(t *testing.T, raw []byte) {
		profileFuzzCheck(t, raw)
		wrapped := append([]byte(`{"type":"object","additionalProperties":false,"properties":{"q":`), raw...)
		profileFuzzCheck(t, append(wrapped, "}}"...))
		standardFuzzCheck(t, raw)
	})
}

// standardFuzzCheck checks raw against the standard profile: the same
// answer twice, a bounded caller-safe refusal that is no compiler panic, or
// an acceptance that compiles.
func standardFuzzCheck(t *testing.T, raw []byte) {
	t.Helper()
	const limit = 64 << 10
	err := checkStandardSchema(raw, limit)
	if again := checkStandardSchema(raw, limit); !profileSameError(err, again) {
		t.Fatalf("standard profile: two answers for %q: %v, then %v", raw, err, again)
	}
	if err != nil {
		var pe *profileError
		if !errors.As(err, &pe) {
			t.Fatalf("standard profile: error %v is a %T, want a *profileError", err, err)
		}
		if strings.Contains(pe.Reason, "(the compiler failed)") {
			t.Fatalf("standard profile: the compiler panicked on %q", raw)
		}
		if msg := err.Error(); len(pe.Reason) > 200 || len(msg) > 400 || !utf8.ValidString(msg) {
			t.Fatalf("standard profile: message is not caller-safe (%d bytes): %q", len(msg), msg)
		}
		return
	}
	if _, err := schemacheck.Compile(raw); err != nil {
		t.Fatalf("standard profile accepted %q, which does not compile: %v", raw, err)
	}
}

func profileFuzzCheck(t *testing.T, raw []byte) {
	t.Helper()
	const limit = 64 << 10
	err := checkSchema(raw, limit)
	if again := checkSchema(raw, limit); !profileSameError(err, again) {
		t.Fatalf("two answers for %q: %v, then %v", raw, err, again)
	}
	if err != nil {
		var pe *profileError
		if !errors.As(err, &pe) {
			t.Fatalf("error %v is a %T, want a *profileError", err, err)
		}
		if pe.Reason == profileCompilerPanicked {
			t.Fatalf("the compiler panicked on %q; rule such input out before it gets there", raw)
		}
		if msg := err.Error(); len(pe.Reason) > 200 || len(msg) > 400 || !utf8.ValidString(msg) {
			t.Fatalf("message is not caller-safe (%d bytes): %q", len(msg), msg)
		}
		return
	}
	if len(raw) > limit {
		t.Fatalf("accepted %d bytes, over the limit", len(raw))
	}
	if _, err := schemacheck.Compile(raw); err != nil {
		t.Fatalf("accepted %q, which does not compile: %v", raw, err)
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		t.Fatalf("accepted %q, which is not a JSON object: %v", raw, err)
	}
	if root["type"] != "object" || root["additionalProperties"] != false {
		t.Fatalf("accepted %q, whose root is not a closed object", raw)
	}
	// The root's first member is now a keyword outside the profile.
	body := bytes.TrimLeft(raw, " \t\r\n")[1:]
	extended := append([]byte(`{"default":0,`), body...)
	var pe *profileError
	if err := checkSchema(extended, 2*limit); !errors.As(err, &pe) || pe.Pointer != "" || pe.Reason != `keyword "default" is outside the profile` {
		t.Fatalf("with a root default: got %v, want the default refused at the root", err)
	}
}

func profileSameError(a, b error) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Error() == b.Error()
}
