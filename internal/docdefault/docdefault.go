// Package docdefault holds a doc comment to the value it states. The
// defaults and bounds of the service-author packages are unexported
// constants; the doc comment of the field (or function) they apply to is
// where a reader learns them ("Default: 1 MiB."). A package's test lists,
// for each constant, the declaration and the phrase that states it, and
// [Check] fails when the phrase with the constant's value, written as
// [Format] writes it, is not in that declaration's doc comment: a value
// changed in the code without its doc, or the reverse.
package docdefault

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Bytes is a size in bytes, written "1 MiB", "64 KiB" or "100 bytes".
type Bytes int64

// Stated is one value a doc comment states.
type Stated struct {
	// Decl names the declaration whose doc comment states the value:
	// "Type.Field" for a struct field, "Type.Method" for a method,
	// "Name" for a function, type, constant or variable, "package" for
	// the package comment.
	Decl string
	// Says is the phrase, with %v where the value goes: "Default: %v".
	Says string
	// Value is the constant the code applies: a [time.Duration], a
	// [Bytes], an int or a string.
	Value any
}

// Format writes v as a doc comment states it: a duration in its largest
// whole unit ("1 second", "30 minutes", "7 days"), [Bytes] in KiB or MiB
// when whole, an integer in decimal, a string quoted as in Go source.
func Format(v any) string {
	switch x := v.(type) {
	case time.Duration:
		units := []struct {
			d    time.Duration
			name string
		}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}, {time.Millisecond, "millisecond"}}
		for _, u := range units {
			if x != 0 && x%u.d == 0 {
				return plural(int64(x/u.d), u.name)
			}
		}
		return x.String()
	case Bytes:
		switch {
		case x != 0 && x%(1<<20) == 0:
			return strconv.FormatInt(int64(x>>20), 10) + " MiB"
		case x != 0 && x%(1<<10) == 0:
			return strconv.FormatInt(int64(x>>10), 10) + " KiB"
		}
		return plural(int64(x), "byte")
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v)
}

func plural(n int64, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.FormatInt(n, 10) + " " + unit + "s"
}

// Check fails t for each of stated whose phrase, with its value, is not in
// the doc comment of its declaration among the non-test Go files of dir.
// Line breaks and runs of spaces count as one space, and the phrase must
// end where a word ends ("Default: 1" is not found in "Default: 1000").
func Check(t testing.TB, dir string, stated []Stated) {
	t.Helper()
	all, err := docs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stated {
		doc, ok := all[s.Decl]
		if !ok {
			t.Errorf("%s: no doc comment of %s", dir, s.Decl)
			continue
		}
		phrase := strings.Replace(s.Says, "%v", Format(s.Value), 1)
		if !says(doc, phrase) {
			t.Errorf("%s: the doc comment of %s does not say %q, the value the code applies; it reads:\n%s", dir, s.Decl, phrase, doc)
		}
	}
}

// says reports whether doc contains phrase, spaces folded and ending where
// a word ends.
func says(doc, phrase string) bool {
	re := regexp.MustCompile(regexp.QuoteMeta(fold(phrase)) + `(?:\W|$)`)
	return re.MatchString(fold(doc))
}

func fold(s string) string { return strings.Join(strings.Fields(s), " ") }

// docs returns the doc comments of the declarations of the non-test Go
// files of dir, keyed as [Stated.Decl] names them.
func docs(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if f.Doc != nil {
			out["package"] += f.Doc.Text()
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				key := d.Name.Name
				if d.Recv != nil && len(d.Recv.List) == 1 {
					key = receiver(d.Recv.List[0].Type) + "." + key
				}
				out[key] = d.Doc.Text()
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch sp := spec.(type) {
					case *ast.TypeSpec:
						out[sp.Name.Name] = join(d.Doc, sp.Doc)
						if st, ok := sp.Type.(*ast.StructType); ok {
							for _, f := range st.Fields.List {
								for _, n := range f.Names {
									out[sp.Name.Name+"."+n.Name] = f.Doc.Text()
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							out[n.Name] = join(d.Doc, sp.Doc)
						}
					}
				}
			}
		}
	}
	return out, nil
}

// join is the doc of a spec: its own comment, or its group's.
func join(group, spec *ast.CommentGroup) string {
	return group.Text() + spec.Text()
}

// receiver names a method's receiver type, without pointer or type
// parameters.
func receiver(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
