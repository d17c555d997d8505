package mcpversion_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// TestImported: the import side accepts every revision the SDK client
// negotiates (the older handshake-era ones included), the served ones
// among them, newest first.
func TestImported(t *testing.T) {
	got := mcpversion.Imported()
	if want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}; !slices.Equal(got, want) {
		t.Fatalf("Imported() = %v, want %v", got, want)
	}
	got[4] = "1999-01-01"
	if mcpversion.Imported()[4] != mcpversion.Handshake20241105 {
		t.Fatal("changing the returned slice changed the imported revisions")
	}
	if sdk := mcp.SupportedProtocolVersions(); !slices.Equal(sdk, mcpversion.Imported()) {
		t.Errorf("the SDK client negotiates %v, the import side accepts %v: one of them changed", sdk, mcpversion.Imported())
	}
	for _, v := range mcpversion.Supported() {
		if !mcpversion.IsImported(v) {
			t.Errorf("served revision %s is not imported", v)
		}
	}
	for _, v := range []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "2024-10-07", "2027-01-01", ""} {
		if got, want := mcpversion.IsImported(v), slices.Contains(mcpversion.Imported(), v); got != want {
			t.Errorf("IsImported(%q) = %v, want %v (Imported)", v, got, want)
		}
	}
}

// TestTasksExtensionHasOneOwner: the tasks extension's identifier is the
// one SEP-2663 names, and no other non-test Go file of the module writes
// it: the server, the importer, agnaratest and the command-line client all
// declare it through TasksExtension.
func TestTasksExtensionHasOneOwner(t *testing.T) {
	if mcpversion.TasksExtension != "io.modelcontextprotocol/tasks" {
		t.Errorf("TasksExtension = %q, want SEP-2663's io.modelcontextprotocol/tasks", mcpversion.TasksExtension)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	owner, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Dir(path) == owner {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, err := strconv.Unquote(lit.Value); err == nil && v == mcpversion.TasksExtension {
					t.Errorf("%s writes %q: use mcpversion.TasksExtension", fset.Position(lit.Pos()), v)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
