package execution_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// reasonConstants returns every Reason constant the module's non-test
// source defines (in package execution as Reason, elsewhere as
// execution.Reason), value to where it is defined.
func reasonConstants(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		isReason := func(e ast.Expr) bool {
			switch x := e.(type) {
			case *ast.Ident:
				return f.Name.Name == "execution" && x.Name == "Reason"
			case *ast.SelectorExpr:
				pkg, ok := x.X.(*ast.Ident)
				return ok && pkg.Name == "execution" && x.Sel.Name == "Reason"
			}
			return false
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Type == nil || !isReason(vs.Type) {
					continue
				}
				for i, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: Reason constant %s is not a string literal", fset.Position(v.Pos()), vs.Names[i])
						continue
					}
					s, _ := strconv.Unquote(lit.Value)
					rel, _ := filepath.Rel(root, path)
					out[s] = append(out[s], filepath.ToSlash(rel)+"."+vs.Names[i].Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestEveryReasonIsDocumented: the failure vocabulary has one owner per
// name. Every Reason constant in the module is a distinct snake_case name,
// none is a code's name, and docs/capabilities.md's "Failure reasons"
// table lists exactly these.
func TestEveryReasonIsDocumented(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	defined := reasonConstants(t, root)
	if len(defined) < 40 {
		t.Fatalf("found %d reasons; the walk missed the packages that define them", len(defined))
	}
	name := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	codes := map[string]bool{}
	for _, c := range []string{"internal_failure", "invalid_input", "forbidden", "not_found", "conflict", "timeout", "interaction_required", "unavailable"} {
		codes[c] = true
	}
	for r, where := range defined {
		if len(where) > 1 {
			t.Errorf("%q is defined %d times: %v", r, len(where), where)
		}
		if !name.MatchString(r) {
			t.Errorf("%q (%v) is not a snake_case name", r, where)
		}
		if codes[r] {
			t.Errorf("%q (%v) is a code's name", r, where)
		}
	}

	doc, err := os.ReadFile(filepath.Join(root, "docs", "capabilities.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Failure reasons\n")
	if !ok {
		t.Fatal(`docs/capabilities.md has no "## Failure reasons" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []string
	row := regexp.MustCompile("(?m)^\\| `([a-z0-9_]+)` \\|")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}
	var want []string
	for r := range defined {
		want = append(want, r)
	}
	slices.Sort(want)
	slices.Sort(documented)
	if diff := cmp.Diff(want, documented); diff != "" {
		t.Errorf("the reasons defined (-) and those docs/capabilities.md lists (+) differ:\n%s", diff)
	}
}
