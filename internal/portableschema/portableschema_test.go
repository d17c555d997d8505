package portableschema_test

import (
	"testing"

	"github.com/agnara-go/agnara/internal/portableschema"
)

func TestKeyword(t *testing.T) {
	for _, tc := range []struct {
		k    string
		want bool
	}{
		{"type", true}, {"additionalProperties", true}, {"oneOf", true}, {"contentMediaType", true},
		{"default", false}, {"$ref", false}, {"$defs", false}, {"$schema", false}, {"allOf", false},
		{"x-vendor", false}, {"patternProperties", false}, {"", false},
	} {
		if got := portableschema.Keyword(tc.k); got != tc.want {
			t.Errorf("Keyword(%q) = %v, want %v", tc.k, got, tc.want)
		}
	}
	ks := portableschema.Keywords()
	if len(ks) != 29 {
		t.Errorf("%d keywords, want 29: %v", len(ks), ks)
	}
	for _, k := range ks {
		if !portableschema.Keyword(k) {
			t.Errorf("Keywords() lists %q, which Keyword refuses", k)
		}
	}
	ks[0] = "default"
	if portableschema.Keyword("default") {
		t.Error("changing the returned slice changed the set")
	}
}
