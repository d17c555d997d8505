package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestSurfaceCounts counts a small module whose every declaration says
// whether it counts: exported package-level names and the exported methods
// of exported types in the service-author packages, nothing of a test
// file, an internal package, another package or a program.
func TestSurfaceCounts(t *testing.T) {
	dir := module(t, map[string]string{
		// agnara: Version (base) and 10 more.
		"agnara/more.go": `package agnara

type T struct{ A, B int } // 1; fields do not count

func (T) M()  {} // 1
func (*T) P() {} // 1
func (T) m()  {}

type t struct{}

func (t) X() {} // an exported method of an unexported type

type I interface{ M(); N() } // 1; its methods are part of its type

type A = T // 1

var V, w = 1, 2 // 1

const C, c = 1, 2 // 1

func F() {} // 1
func f() {}

type G[X any] struct{} // 1

func (G[X]) M() {} // 1
`,
		"agnara/more_test.go":       "package agnara\n\nfunc Hook() {}\n\nvar Knob = 1\n",
		"agnara/ext_test.go":        "package agnara_test\n\nfunc Exported() {}\n",
		"execution/sub/sub.go":      "package sub\n\nfunc S() {}\n",
		"mcpexpose/internal/x/x.go": "package x\n\nfunc X() {}\n",
		"mcpexposed/e.go":           "package mcpexposed\n\nfunc E() {}\n",
		"policy/policy.go":          "package policy\n\ntype Principal struct{}\n\nfunc (Principal) ID() string { return \"\" }\n",
		"gateway/gateway.go":        "package gateway\n\nfunc New() {}\n",
		"cmd/agnara/main.go":        "package main\n\nfunc Exported() {}\n\nfunc main() {}\n",
	})
	m, _, err := load(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	s := surfaceOf(m)
	want := map[string]int{"agnara": 11, "execution/sub": 1, "policy": 2}
	if !maps.Equal(want, s.count) {
		t.Errorf("counts %v, want %v", s.count, want)
	}
	if s.total != 14 {
		t.Errorf("total %d, want 14", s.total)
	}
	if want := []string{"agnara", "execution/sub", "policy"}; !slices.Equal(s.pkgs, want) {
		t.Errorf("packages %q, want %q", s.pkgs, want)
	}
}

// TestSurfaceLimit: the check passes while the service-author packages
// export fewer identifiers than the SDK's mcp package, 392, and fails at
// 392, printing the count and each package's.
func TestSurfaceLimit(t *testing.T) {
	// di with n constants; agnara's Version makes the total n+1.
	di := func(n int) map[string]string {
		var b strings.Builder
		b.WriteString("package di\n\nconst (\n")
		for i := range n {
			fmt.Fprintf(&b, "\tK%d = %d\n", i, i)
		}
		b.WriteString(")\n")
		return map[string]string{"di/di.go": b.String()}
	}
	for _, tt := range []struct {
		name  string
		total int
		want  []string // substrings of the error; none: the check passes
	}{
		{name: "one below", total: sdkSurface - 1},
		{name: "at the SDK's", total: sdkSurface, want: []string{
			"the packages a service author imports export 392 identifiers; they must export fewer than go-sdk's mcp package, 392",
			"\tagnara    1\n\tdi      391\n\ttotal   392\n",
			"Move what only this module's packages use under internal/",
		}},
		{name: "above", total: sdkSurface + 8, want: []string{"export 400 identifiers", "\ttotal   400\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := module(t, nil)
			if _, err := release(config{dir: dir}); err != nil {
				t.Fatalf("release: %v", err)
			}
			write(t, dir, di(tt.total-1))
			msg, err := check(config{dir: dir})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("check failed:\n%v", err)
				}
				if want := fmt.Sprintf("the packages a service author imports export %d identifiers (fewer than go-sdk mcp's 392)", tt.total); !strings.Contains(msg, want) {
					t.Errorf("check passed saying %q, want it to say %q", msg, want)
				}
				return
			}
			if err == nil {
				t.Fatalf("check passed (%s), want it to fail with %q", msg, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("check failed with\n%v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}
