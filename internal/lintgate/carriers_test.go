package lintgate

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// contextKeysAllowed lists the context keys the server's packages put
// values under, each with its reason. A request's record reaches the one
// owner of the request as an argument (ADR 74, ADR 75): never in a
// context for the SDK to hand back, so no key of a record is listed, and
// a new key is added here only with the reason it is not a carrier of
// what a call is. Paths are from the module root.
var contextKeysAllowed = []struct{ dir, key, why string }{
	{"mcpexpose", "verifiedKey", "the verified token facts, for the SDK's own bearer middleware, which reads them from the request's context"},
	{"mcpexpose", "taskListenKey", "a 2026-07-28 listen's response writer, for its task notifications: the SDK's handler has no room for a writer"},
	{"mcpexpose", "elicitAnswerKey", "where a sending middleware leaves a client's answer to a question asked through the SDK's session"},
	{"policy", "principalKey", "the principal a capability runs as, for the service's own code (policy.FromContext)"},
}

// contextValuesAllowed lists the types of the server's packages that
// answer context keys themselves (a Value method), each with its reason.
var contextValuesAllowed = []struct{ dir, typ, why string }{
	{"execution", "Context", "the context a capability's handler is given: the principal and the call's own facts, for the service's code (execution.FromContext)"},
}

// recvName names the receiver type expression e: T or *T gives T.
func recvName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// contextKeys returns the messages for the context.WithValue calls in
// src, the file at rel, whose key is not a composite literal that
// contextKeysAllowed lists for the file's directory.
func contextKeys(rel string, src any) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, 0)
	if err != nil {
		return nil, err
	}
	dir := path.Dir(rel)
	var out []string
	for _, d := range f.Decls {
		// A type that answers context keys itself (a Value method beside
		// an embedded context) carries values as WithValue does.
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv == nil || fd.Name.Name != "Value" || fd.Type.Params.NumFields() != 1 {
			continue
		}
		recv := recvName(fd.Recv.List[0].Type)
		if !slices.ContainsFunc(contextValuesAllowed, func(a struct{ dir, typ, why string }) bool { return a.dir == dir && a.typ == recv }) {
			out = append(out, fmt.Sprintf("%s: %s answers context keys itself (a Value method): a request's record and the edge's state reach a call as arguments, never in a context (ADR 75, ADR 77); if this is not what a call is, list the type in contextValuesAllowed with the reason", fset.Position(fd.Pos()), recv))
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 3 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "WithValue" {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); !ok || x.Name != "context" {
			return true
		}
		key := ""
		switch k := call.Args[1].(type) {
		case *ast.CompositeLit:
			if id, ok := k.Type.(*ast.Ident); ok {
				key = id.Name
			}
		case *ast.SelectorExpr:
			if x, ok := k.X.(*ast.Ident); ok {
				key = x.Name + "." + k.Sel.Name
			}
		}
		if !slices.ContainsFunc(contextKeysAllowed, func(a struct{ dir, key, why string }) bool {
			return a.dir == dir && a.key == key
		}) {
			out = append(out, fmt.Sprintf("%s: a value under the context key %q: a request's record reaches its owner as an argument, never in a context (ADR 75); if this is not what a call is, list the key in contextKeysAllowed with the reason", fset.Position(call.Pos()), orUnnamed(key)))
		}
		return true
	})
	return out, nil
}

func orUnnamed(key string) string {
	if key == "" {
		return "(not a literal)"
	}
	return key
}

// serverDirs are the directories whose context keys are checked: the
// server's packages, where a record could travel.
var serverDirs = []string{"mcpexpose", "policy", "agnara", "execution", "di"}

// TestContextCarriesNoRecord walks the server's packages' files that are
// not tests and fails on each context value under a key that
// contextKeysAllowed does not list.
func TestContextCarriesNoRecord(t *testing.T) {
	top := root(t)
	read := 0
	goFiles(t, top, func(file, rel string) error {
		if !slices.Contains(serverDirs, path.Dir(rel)) || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		read++
		src, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		ms, err := contextKeys(rel, src)
		for _, m := range ms {
			t.Error(m)
		}
		return err
	})
	if read < 50 {
		t.Fatalf("read only %d files of the server's packages: the walk is broken", read)
	}
}

// The rule itself: the record's old key, which carried it from the edge
// and the middleware to the SDK's handlers, is refused, as is a key the
// rule cannot name; the listed keys pass.
func TestContextKeys(t *testing.T) {
	src := `package mcpexpose
import "context"
func a(ctx context.Context, rec any) context.Context { return context.WithValue(ctx, recordKey{}, rec) }
func b(ctx context.Context, k, v any) context.Context { return context.WithValue(ctx, k, v) }
func c(ctx context.Context, ti any) context.Context { return context.WithValue(ctx, verifiedKey{}, ti) }
`
	ms, err := contextKeys("mcpexpose/x.go", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || !strings.Contains(ms[0], `"recordKey"`) || !strings.Contains(ms[1], "(not a literal)") {
		t.Errorf("messages = %q, want recordKey and the unnamed key refused", ms)
	}
	if ms, _ := contextKeys("gateway/x.go", src); len(ms) != 3 {
		t.Errorf("in another directory, %d refused, want all 3 (none listed there)", len(ms))
	}
	// The edge's capabilities as they were carried before ADR 77: a type
	// embedding the request's context and answering a key with itself.
	carrier := `package mcpexpose
import "context"
type edgeCaps struct{ context.Context }
func (e *edgeCaps) Value(key any) any { return e.Context.Value(key) }
`
	if ms, _ := contextKeys("mcpexpose/x.go", carrier); len(ms) != 1 || !strings.Contains(ms[0], "edgeCaps answers context keys") {
		t.Errorf("messages = %q, want edgeCaps refused", ms)
	}
	if ms, _ := contextKeys("execution/x.go", strings.Replace(carrier, "edgeCaps", "Context", -1)); len(ms) != 0 {
		t.Errorf("execution.Context refused: %q", ms)
	}
}
