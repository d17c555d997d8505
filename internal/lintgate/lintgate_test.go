package lintgate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// root is the module root: the nearest directory above this one with a
// go.mod.
func root(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// ignoredDir reports whether the walks skip a directory named name, as the
// go command does for ./... (testdata, and names starting with . or _,
// such as internal/readmetest's temporary _snippet directories, which may
// come and go while this test runs), and node_modules.
func ignoredDir(name string) bool {
	return name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// violations lists what file src (at path, for messages) does that library
// code must not, or nil for a file of package main.
func violations(fset *token.FileSet, path string, src any) ([]string, error) {
	f, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	if f.Name.Name == "main" {
		return nil, nil // a program may print and exit
	}
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	fmtName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := ""
		if imp.Name != nil {
			name = imp.Name.Name
		}
		switch p {
		case "log":
			report(imp, `imports the global "log" package: log through a *slog.Logger the caller configures`)
		case "fmt":
			fmtName = "fmt"
			if name != "" {
				fmtName = name
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch fn := call.Fun.(type) {
		case *ast.Ident:
			switch fn.Name {
			case "panic":
				report(call, "calls panic: return an error that says what to fix")
			case "print", "println":
				report(call, "calls %s: library code writes nothing to the process's output", fn.Name)
			}
		case *ast.SelectorExpr:
			if pkg, ok := fn.X.(*ast.Ident); ok && fmtName != "" && pkg.Name == fmtName && strings.HasPrefix(fn.Sel.Name, "Print") {
				report(call, "calls fmt.%s: library code writes nothing to standard output (it may be the protocol stream); log through a *slog.Logger", fn.Sel.Name)
			}
		}
		return true
	})
	return out, nil
}

// goFiles calls fn with every Go file of the module that is not a test,
// not in a testdata folder and not in a separate module (bench/, api/):
// its path, and its slash-separated path from the module root. It fails
// the test when it reads fewer than 50, a broken walk.
func goFiles(t *testing.T, top string, fn func(path, rel string) error) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(top, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != top && ignoredDir(name) {
				return filepath.SkipDir
			}
			if path != top {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module (bench/)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		files++
		rel, err := filepath.Rel(top, path)
		if err != nil {
			return err
		}
		return fn(path, filepath.ToSlash(rel))
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("read only %d Go files under %s: the walk is broken", files, top)
	}
}

// TestLibraryCodeDoesNotPanicPrintOrUseTheGlobalLogger walks every Go file
// of the module that is not a test, not generated, not in a testdata
// folder and not in a separate module, and fails on each violation.
func TestLibraryCodeDoesNotPanicPrintOrUseTheGlobalLogger(t *testing.T) {
	top := root(t)
	fset := token.NewFileSet()
	var all []string
	goFiles(t, top, func(path, rel string) error {
		vs, err := violations(fset, path, nil)
		if err != nil {
			return err
		}
		for _, v := range vs {
			all = append(all, strings.Replace(v, path, rel, 1))
		}
		return nil
	})
	for _, v := range all {
		t.Error(v)
	}
}

// The gate itself: each forbidden construct is reported, and what is
// allowed is not.
func TestViolations(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"panic", "package p\nfunc f() { panic(\"x\") }", []string{"calls panic"}},
		{"println", "package p\nfunc f() { println(1); print(2) }", []string{"calls println", "calls print"}},
		{"fmt.Printf", "package p\nimport \"fmt\"\nfunc f() { fmt.Printf(\"x\"); fmt.Println() }", []string{"calls fmt.Printf", "calls fmt.Println"}},
		{"renamed fmt", "package p\nimport f \"fmt\"\nfunc g() { f.Print(1) }", []string{"calls fmt.Print"}},
		{"global log", "package p\nimport \"log\"\nfunc f() { log.Println(1) }", []string{`imports the global "log" package`}},
		{"allowed", "package p\nimport (\"fmt\"; \"log/slog\")\nfunc f() error { slog.Info(\"x\"); _ = fmt.Sprintf(\"%d\", 1); return fmt.Errorf(\"x\") }", nil},
		{"a program may", "package main\nimport \"fmt\"\nfunc main() { fmt.Println(1); panic(2) }", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := violations(token.NewFileSet(), "x.go", tc.src)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %q does not say %q", got[i], w)
				}
			}
		})
	}
}
