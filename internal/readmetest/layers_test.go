package readmetest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// edgeFiles are the files of package mcpexpose that make its HTTP edge:
// what reads an HTTP request, keeps sessions and streams, and writes the
// answer. Every other file of the package is the protocol's features
// (tools, resources, prompts, completion, tasks, audit, the server they
// run in), which the edge calls and which never reach into the edge
// (docs/architecture.md, "Inside mcpexpose"; ADR 77).
var edgeFiles = []string{
	"callstream.go", "edge.go", "edgeask.go", "events.go", "fastpath.go",
	"handler.go", "handshake.go", "http.go", "httpserver.go", "keepalive.go", "listen.go",
	"polled.go", "resume.go", "sessions.go", "streams.go",
}

// backRefs returns, for the type-checked files of a package, each
// reference from a file not in edge to a declaration (package-level,
// method or field) in a file in edge, as "from.go:line -> to.go: name".
func backRefs(fset *token.FileSet, pkg *types.Package, info *types.Info, edge []string) []string {
	var out []string
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from, to := fset.Position(id.Pos()), fset.Position(obj.Pos())
		if slices.Contains(edge, filepath.Base(from.Filename)) || !slices.Contains(edge, filepath.Base(to.Filename)) {
			continue
		}
		out = append(out, fmt.Sprintf("%s:%d -> %s: %s", filepath.Base(from.Filename), from.Line, filepath.Base(to.Filename), obj.Name()))
	}
	slices.Sort(out)
	return out
}

// TestFeaturesDoNotReachIntoTheEdge type-checks package mcpexpose and
// fails on each reference from a feature's file to a declaration of the
// edge's: the features are called by the edge, never the other way, so
// that the edge could move to a package of its own without the features
// following it. It also fails when a listed edge file is gone.
func TestFeaturesDoNotReachIntoTheEdge(t *testing.T) {
	root := moduleRoot(t)
	dir := filepath.Join(root, "mcpexpose")
	for _, f := range edgeFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("edgeFiles lists %s: %v", f, err)
		}
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: exportData(t, fset, root, module+"/mcpexpose")}).Check(module+"/mcpexpose", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	refs := backRefs(fset, pkg, info, edgeFiles)
	for _, r := range refs {
		t.Errorf("a feature reaches into the edge: %s (move the declaration to the features, or pass what the feature needs as an argument, as callRoute does)", r)
	}
	edgeRefs := 0
	for id, obj := range info.Uses {
		if obj.Pkg() == pkg && obj.Pos().IsValid() && slices.Contains(edgeFiles, filepath.Base(fset.Position(id.Pos()).Filename)) && !slices.Contains(edgeFiles, filepath.Base(fset.Position(obj.Pos()).Filename)) {
			edgeRefs++
		}
	}
	t.Logf("mcpexpose: %d files, %d of them the edge; the edge refers to the features %d times, the features to the edge %d times", len(files), len(edgeFiles), edgeRefs, len(refs))
}

// The rule on two files whose references are known: a feature calling
// the edge is reported, the edge calling a feature is not.
func TestBackRefs(t *testing.T) {
	feature := "package p\n\nfunc F() int { return E() }\n\nfunc G() int { return 1 }\n"
	edge := "package p\n\nfunc E() int { return G() }\n"
	fset := token.NewFileSet()
	var files []*ast.File
	for name, src := range map[string]string{"feature.go": feature, "edge.go": edge} {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{}).Check("p", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	got := backRefs(fset, pkg, info, []string{"edge.go"})
	if want := []string{"feature.go:3 -> edge.go: E"}; !slices.Equal(got, want) {
		t.Errorf("backRefs = %q, want %q", got, want)
	}
}
