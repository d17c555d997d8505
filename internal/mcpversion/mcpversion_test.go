package mcpversion_test

import (
	"slices"
	"testing"

	"github.com/agnara-go/agnara/internal/mcpversion"
)

func TestSupported(t *testing.T) {
	got := mcpversion.Supported()
	if want := []string{"2026-07-28", "2025-11-25", "2025-06-18"}; !slices.Equal(got, want) {
		t.Fatalf("Supported() = %v, want %v", got, want)
	}
	got[0] = "1999-01-01"
	if mcpversion.Supported()[0] != mcpversion.Modern {
		t.Fatal("changing the returned slice changed the supported revisions")
	}
	for _, tc := range []struct {
		v    string
		want bool
	}{{"2026-07-28", true}, {"2027-01-01", true}, {"2025-11-25", false}, {"2025-06-18", false}, {"", false}} {
		if mcpversion.IsModern(tc.v) != tc.want {
			t.Errorf("IsModern(%q) = %v", tc.v, !tc.want)
		}
	}
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2027-01-01", ""} {
		if got, want := mcpversion.IsServed(v), slices.Contains(mcpversion.Supported(), v); got != want {
			t.Errorf("IsServed(%q) = %v, want %v (Supported)", v, got, want)
		}
	}
}
