package lintgate

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// module is this module's path.
const module = "github.com/agnara-go/agnara"

// internalImportsAllowed lists the public packages of this module that a
// package under an internal/ directory may import, each with its reason.
// The machinery under internal/ serves the public packages; it imports one
// of them only to carry that package's own types, never to borrow a helper
// (what two packages share moves under internal/ itself, as
// internal/httpserver did for mcpexpose.NewHTTPServer; ADR 72). Paths are
// from the module root.
var internalImportsAllowed = []struct{ importer, imported, why string }{
	{"internal/registry", "policy", "that record holds the application's policy.Scopes and policy.ConfirmationVerifier"},
	{"mcpexpose/internal/projection", "execution", "mcpexpose's own machinery, projecting execution's outcomes: execution is below mcpexpose"},
	{"mcpexpose/internal/tasktest", "agnara", "a test kit, imported by tests only: it builds task worlds through the public API, as a service would"},
	{"mcpexpose/internal/tasktest", "di", "a test kit, imported by tests only: it builds task worlds through the public API, as a service would"},
	{"mcpexpose/internal/tasktest", "execution", "a test kit, imported by tests only: it builds task worlds through the public API, as a service would"},
	{"mcpexpose/internal/tasktest", "mcpexpose", "a test kit, imported by tests only: it builds task worlds through the public API, as a service would"},
	{"mcpexpose/internal/tasktest", "mcpexpose/tasks", "a test kit, imported by tests only: it builds task worlds through the public API, as a service would"},
}

// isInternal reports whether the slash-separated path from the module root
// is in or under an internal/ directory.
func isInternal(dir string) bool {
	return slices.Contains(strings.Split(dir, "/"), "internal")
}

// publicImports returns the messages for the imports of src, the file at
// rel, of this module's public packages that internalImportsAllowed does
// not list. Only files under an internal/ directory are read, except the
// examples' (examples/internal holds example code, which imports the
// product as any user does).
func publicImports(rel string, src any) ([]string, error) {
	dir := path.Dir(rel)
	if !isInternal(dir) || strings.HasPrefix(rel, "examples/") {
		return nil, nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		pkg, ok := strings.CutPrefix(p, module+"/")
		if !ok || isInternal(pkg) {
			continue
		}
		if slices.ContainsFunc(internalImportsAllowed, func(a struct{ importer, imported, why string }) bool {
			return a.importer == dir && a.imported == pkg
		}) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: imports public package %s: the machinery under internal/ serves the public packages and does not borrow from them; move what both need under internal/ (ADR 72), or, if %s carries that package's own types, list it in internalImportsAllowed with the reason", fset.Position(imp.Pos()), pkg, dir))
	}
	return out, nil
}

// TestInternalImportsNoPublicPackage walks every Go file of the module
// that is not a test and fails on each import by internal machinery of a
// public package that internalImportsAllowed does not list.
func TestInternalImportsNoPublicPackage(t *testing.T) {
	top := root(t)
	read := 0
	goFiles(t, top, func(file, rel string) error {
		if !isInternal(rel) {
			return nil
		}
		read++
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		ms, err := publicImports(rel, src)
		for _, m := range ms {
			t.Error(m)
		}
		return err
	})
	if read < 20 {
		t.Fatalf("read only %d files under internal/ directories: the walk is broken", read)
	}
}

// The rule itself.
func TestPublicImports(t *testing.T) {
	src := func(imports ...string) string {
		s := "package p\nimport (\n"
		for _, i := range imports {
			s += strconv.Quote(i) + "\n"
		}
		return s + ")\n"
	}
	for _, tc := range []struct {
		name, rel, src string
		want           []string // a word of each message
	}{
		{"internal imports internal", "internal/health/metrics.go", src(module+"/internal/hostcheck", "net/http"), nil},
		{"internal borrows a public helper", "internal/health/metrics.go", src(module+"/internal/hostcheck", module+"/mcpexpose"), []string{"imports public package mcpexpose"}},
		{"a nested internal package too", "mcpexpose/internal/projection/result.go", src(module + "/mcpexpose/tasks"), []string{"imports public package mcpexpose/tasks"}},
		{"listed, with its reason", "internal/registry/registry.go", src(module + "/policy"), nil},
		{"listed for another import only", "internal/registry/registry.go", src(module+"/di", module+"/policy"), []string{"imports public package di"}},
		{"listed for another importer only", "internal/site/site.go", src(module + "/di"), []string{"imports public package di"}},
		{"a public package may", "gateway/gateway.go", src(module+"/mcpexpose", module+"/internal/health"), nil},
		{"example code may", "examples/internal/userservice/userservice.go", src(module + "/agnara"), nil},
		{"another module's path", "internal/x/x.go", src("github.com/agnara-go/agnara-extra/y"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := publicImports(tc.rel, tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("messages %q, want %d saying %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("message %q does not say %q", got[i], w)
				}
			}
		})
	}
}
