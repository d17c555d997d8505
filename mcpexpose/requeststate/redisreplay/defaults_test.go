package redisreplay

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/docdefault"
)

// TestDocumentedDefaults holds each default to the value the doc comment
// of its [Options] field states.
func TestDocumentedDefaults(t *testing.T) {
	docdefault.Check(t, ".", []docdefault.Stated{
		{Decl: "Options.Prefix", Says: "Default: %v", Value: defaultPrefix},
		{Decl: "Options.Prefix", Says: "or %v on a Redis Cluster", Value: defaultClusterPrefix},
		{Decl: "package", Says: "%v by default", Value: defaultClusterPrefix},
		{Decl: "Options.ClockSkew", Says: "Default: %v", Value: defaultClockSkew},
	})
}

// TestDefaultClockSkewOfTheClusterTests: the cluster tests of
// conformance/server and examples/cluster leave Options.ClockSkew zero and
// wait past a new epoch's start by a clockSkew of their own before they
// seal; shorter than this package's default, their states would be
// refused. They declare it time.Second, and so must this default be.
func TestDefaultClockSkewOfTheClusterTests(t *testing.T) {
	if defaultClockSkew != time.Second {
		t.Errorf("default ClockSkew %v: set clockSkew in conformance/server/cluster_test.go and examples/cluster/cluster_test.go to it", defaultClockSkew)
	}
	for _, p := range []string{"conformance/server/cluster_test.go", "examples/cluster/cluster_test.go"} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, filepath.Join("..", "..", "..", filepath.FromSlash(p)), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if n.Name == "clockSkew" && i < len(vs.Values) {
						var b strings.Builder
						if err := printer.Fprint(&b, fset, vs.Values[i]); err != nil {
							t.Fatal(err)
						}
						got = b.String()
					}
				}
			}
		}
		if got != "time.Second" {
			t.Errorf("%s: const clockSkew = %q, want time.Second, this package's default ClockSkew", p, got)
		}
	}
}
