package readmetest

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// module is this module's path.
const module = "github.com/agnara-go/agnara"

// moduleRoot is the module's root directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// architecture reads docs/architecture.md and returns it with the module
// root.
func architecture(t *testing.T) (doc, root string) {
	t.Helper()
	root = moduleRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b), root
}

// stageName is a file and a function as docs/architecture.md names a
// stage: "`mcpexpose/edge.go` `Handler.ServeHTTP`", in the text or in two
// cells of a table row. A function is "Recv.Name" for a method.
var stageName = regexp.MustCompile("`([a-z][a-z0-9_/]*\\.go)`[ |]*`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")

// declares reports whether the Go file src declares the function fn
// ("Name", or "Recv.Name" for a method of Recv or *Recv).
func declares(src []byte, fn string) (bool, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.SkipObjectResolution)
	if err != nil {
		return false, err
	}
	recv, name, method := strings.Cut(fn, ".")
	if !method {
		name, recv = recv, ""
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name {
			continue
		}
		if recv == "" && fd.Recv == nil {
			return true, nil
		}
		if recv != "" && fd.Recv != nil && len(fd.Recv.List) == 1 {
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.Name == recv {
				return true, nil
			}
		}
	}
	return false, nil
}

// TestArchitectureNamesExist fails when docs/architecture.md names a file
// and a function in it that are not there: the stages of a call it walks
// through are the code's.
func TestArchitectureNamesExist(t *testing.T) {
	doc, root := architecture(t)
	matches := stageName.FindAllStringSubmatch(doc, -1)
	if len(matches) < 30 {
		t.Fatalf("docs/architecture.md names %d file and function pairs; the call it walks through has more stages: is the pattern broken?", len(matches))
	}
	for _, m := range matches {
		file, fn := m[1], m[2]
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
		if err != nil {
			t.Errorf("docs/architecture.md names %s (with %s): no such file", file, fn)
			continue
		}
		ok, err := declares(src, fn)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if !ok {
			t.Errorf("docs/architecture.md names %s in %s: the file declares no such function", fn, file)
		}
	}
}

func TestDeclares(t *testing.T) {
	src := []byte("package p\ntype T struct{}\nfunc (t *T) M() {}\nfunc (T) V() {}\nfunc F() {}\n")
	for fn, want := range map[string]bool{
		"F": true, "T.M": true, "T.V": true,
		"M": false, "U.M": false, "T.F": false, "G": false,
	} {
		got, err := declares(src, fn)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("declares(%s) = %t, want %t", fn, got, want)
		}
	}
}

// libraryImports returns, for every library package of the module (not
// package main, not under an internal/ directory, not under examples/ or
// another module), the library packages of the module its non-test files
// import, as paths from the module root.
func libraryImports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if p != root && (name == "testdata" || name == "node_modules" || name == "internal" || name == "examples" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil && p != root {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		pkg := path.Dir(rel)
		if _, ok := out[pkg]; !ok {
			out[pkg] = []string{}
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if dep, ok := strings.CutPrefix(ip, module+"/"); ok && !slices.Contains(strings.Split(dep, "/"), "internal") && !slices.Contains(out[pkg], dep) {
				out[pkg] = append(out[pkg], dep)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, deps := range out {
		slices.Sort(deps)
	}
	return out
}

// importRow is a row of docs/architecture.md's table of imports:
// "| `pkg` | `dep`, `dep` |", or "| `pkg` | none |".
var importRow = regexp.MustCompile("(?m)^\\| `([a-z][a-z0-9/]*)` \\| (.*) \\|$")

// TestArchitectureImports fails when docs/architecture.md's table of who
// imports whom differs from the code: a package missing or gone, or an
// import added or removed.
func TestArchitectureImports(t *testing.T) {
	doc, root := architecture(t)
	_, table, ok := strings.Cut(doc, "\n## Who imports whom\n")
	if !ok {
		t.Fatal(`docs/architecture.md has no "## Who imports whom" section`)
	}
	table, _, _ = strings.Cut(table, "\n## ")
	documented := map[string][]string{}
	for _, m := range importRow.FindAllStringSubmatch(table, -1) {
		deps := []string{}
		if m[2] != "none" {
			for _, d := range strings.Split(m[2], ", ") {
				deps = append(deps, strings.Trim(d, "`"))
			}
		}
		slices.Sort(deps)
		documented[m[1]] = deps
	}
	if diff := cmp.Diff(libraryImports(t, root), documented); diff != "" {
		t.Errorf("docs/architecture.md's table of imports differs from the code (-code +doc):\n%s", diff)
	}
}

// coupling is what TestCoupling measures of a package.
type coupling struct {
	Files, Lines int
	// Refs counts the identifiers in one file that refer to a package-level
	// declaration, method or struct field declared in another file of the
	// package; Objects, the distinct declarations so referred to; Pairs,
	// the ordered pairs of files with at least one such reference.
	Refs, Objects, Pairs int
}

// measure type-checks files, the non-test files of package path, and
// counts their references across files.
func measure(fset *token.FileSet, path string, files []*ast.File, srcs [][]byte, imp types.Importer) (coupling, error) {
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{Importer: imp}).Check(path, fset, files, info)
	if err != nil {
		return coupling{}, err
	}
	c := coupling{Files: len(files)}
	for _, src := range srcs {
		c.Lines += bytes.Count(src, []byte("\n"))
	}
	objects := map[types.Object]bool{}
	pairs := map[[2]string]bool{}
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue // another package's, or a predeclared or implicit one
		}
		from, to := fset.Position(id.Pos()).Filename, fset.Position(obj.Pos()).Filename
		if from == to {
			continue
		}
		c.Refs++
		objects[obj] = true
		pairs[[2]string{from, to}] = true
	}
	c.Objects, c.Pairs = len(objects), len(pairs)
	return c, nil
}

// exportData returns an importer reading the export data the go command
// builds for pkg's dependencies (`go list -export`): type-checking a
// package of this module from it takes a fraction of a second where
// checking every dependency from source takes many.
func exportData(t *testing.T, fset *token.FileSet, root, pkg string) types.Importer {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}={{.Export}}{{end}}", pkg)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", pkg, err)
	}
	exports := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(l, "=")
		exports[k] = v
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
}

// TestCoupling checks the measure on two files whose references are known,
// then measures package mcpexpose and logs it: docs/architecture.md states
// what `go test -run TestCoupling -v ./internal/readmetest` printed.
func TestCoupling(t *testing.T) {
	a := []byte("package p\n\ntype T struct{ F int }\n\nfunc (t T) M() int { return t.F }\n\nfunc A() int { return B() + C }\n")
	b := []byte("package p\n\nconst C = 1\n\nfunc B() int {\n\tvar t T\n\treturn t.M() + t.F + A()\n}\n")
	fset := token.NewFileSet()
	var files []*ast.File
	for name, src := range map[string][]byte{"a.go": a, "b.go": b} {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	got, err := measure(fset, "p", files, [][]byte{a, b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// a.go refers to B and C; b.go to T, its method M, its field F and A.
	// t.F in a.go, and the local t in b.go, are references within a file.
	want := coupling{Files: 2, Lines: 15, Refs: 6, Objects: 6, Pairs: 2}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("the measure of the two files (-want +got):\n%s", diff)
	}

	root := moduleRoot(t)
	dir := filepath.Join(root, "mcpexpose")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset = token.NewFileSet()
	files = nil
	var srcs [][]byte
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files, srcs = append(files, f), append(srcs, src)
	}
	m, err := measure(fset, module+"/mcpexpose", files, srcs, exportData(t, fset, root, module+"/mcpexpose"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mcpexpose: %d files, %d lines, %d references across files to %d declarations, between %d of the %d ordered pairs of files",
		m.Files, m.Lines, m.Refs, m.Objects, m.Pairs, m.Files*(m.Files-1))
}
