package main

import (
	"fmt"
	"go/types"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
)

// The surface a service author learns is held below the go-sdk's (DESIGN
// 9b, ADR 73): the packages a service imports export fewer identifiers
// than the SDK's mcp package, which exports 392 by the same count
// (go-sdk v1.8.0), the one issue 39 measured with: exported types,
// functions, constants and variables, and the exported methods declared
// on exported types; neither struct fields nor interface methods. _test.go
// files are not part of a package here, so an export_test.go hook is not
// counted.
const sdkSurface = 392

// serviceAuthor matches the paths, relative to the module's root, of the
// packages a service author imports: agnara, agnaratest, di, execution,
// mcpexpose and policy, and their sub-packages. The check loads no
// package under internal/ (see checked), and none of these is package
// main.
var serviceAuthor = regexp.MustCompile(`^(agnara|agnaratest|di|execution|mcpexpose|policy)(/|$)`)

// A surface is the count of each service-author package, by path relative
// to the module's root, in path order.
type surface struct {
	pkgs  []string
	count map[string]int
	total int
}

// surfaceOf counts the service-author packages of m.
func surfaceOf(m *apidiff.Module) surface {
	s := surface{count: map[string]int{}}
	for _, p := range m.Packages {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.Path(), m.Path), "/")
		if !serviceAuthor.MatchString(rel) {
			continue
		}
		n := exportedCount(p)
		s.pkgs = append(s.pkgs, rel)
		s.count[rel] = n
		s.total += n
	}
	slices.Sort(s.pkgs)
	return s
}

// exportedCount counts p's exported package-level names (types, aliases
// included, functions, constants, variables) and the exported methods
// declared on its exported defined types. An interface's methods are part
// of its type, declared on no type, and are not counted.
func exportedCount(p *types.Package) int {
	n := 0
	scope := p.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		n++
		tn, ok := obj.(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		if named, ok := tn.Type().(*types.Named); ok {
			for m := range named.Methods() {
				if m.Exported() {
					n++
				}
			}
		}
	}
	return n
}

// check fails when the surface is not below the SDK's, listing every
// package's count so that the reader sees where the identifiers are.
func (s surface) check() error {
	if s.total < sdkSurface {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the packages a service author imports export %d identifiers; they must export fewer than go-sdk's mcp package, %d (DESIGN 9b, ADR 73):\n\n", s.total, sdkSurface)
	b.WriteString(s.table())
	b.WriteString("\nMove what only this module's packages use under internal/, or unexport it, and record each removal in api/next.txt\n" +
		"(CONTRIBUTING.md, \"The API holds still\"). The count: exported types, functions, constants, variables, and\n" +
		"the exported methods of exported types, in non-test files.")
	return fmt.Errorf("%s", b.String())
}

// table lists each package's count and the total, one a line.
func (s surface) table() string {
	width := len("total")
	for _, p := range s.pkgs {
		width = max(width, len(p))
	}
	var b strings.Builder
	for _, p := range s.pkgs {
		fmt.Fprintf(&b, "\t%-*s %4d\n", width, p, s.count[p])
	}
	fmt.Fprintf(&b, "\t%-*s %4d\n", width, "total", s.total)
	return b.String()
}
