package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"io"
	"os"
	"slices"
	"strings"

	"golang.org/x/exp/apidiff"
	"golang.org/x/tools/go/gcexportdata"
	"golang.org/x/tools/go/packages"
)

// load type-checks the packages of the module at dir that the check
// covers (see checked) and returns them as an apidiff.Module. With trim,
// the packages are compiled with -trimpath, so that the positions their
// export data records name files by module path, not by where the
// checkout happens to be: a baseline written from any directory is the
// same bytes.
func load(dir string, trim bool) (*apidiff.Module, *token.FileSet, error) {
	list, err := packages.Load(&packages.Config{Dir: dir, Mode: packages.NeedName | packages.NeedModule}, "./...")
	if err != nil {
		return nil, nil, fmt.Errorf("listing the packages of %s: %w", dir, err)
	}
	var modPath string
	var paths []string
	for _, p := range list {
		if p.Module == nil {
			return nil, nil, fmt.Errorf("%s is not in a module: check the -dir flag", p.PkgPath)
		}
		modPath = p.Module.Path
		if checked(modPath, p) {
			paths = append(paths, p.PkgPath)
		}
	}
	if len(paths) == 0 {
		return nil, nil, fmt.Errorf("found no package to check in %s: check the -dir flag", dir)
	}
	fset := token.NewFileSet()
	cfg := &packages.Config{Dir: dir, Mode: packages.NeedName | packages.NeedTypes, Fset: fset}
	if trim {
		cfg.BuildFlags = []string{"-trimpath"}
	}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the packages of %s: %w", dir, err)
	}
	m := &apidiff.Module{Path: modPath}
	var errs []error
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e)
		}
		m.Packages = append(m.Packages, p.Types)
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("the module does not build, fix it first: %w", errors.Join(errs...))
	}
	slices.SortFunc(m.Packages, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	return m, fset, nil
}

// checked reports whether the API check covers package p of the module
// modPath: a package another module can import, outside examples/.
func checked(modPath string, p *packages.Package) bool {
	if p.Name == "main" {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, modPath), "/")
	if rel == "examples" || strings.HasPrefix(rel, "examples/") {
		return false
	}
	return !slices.Contains(strings.Split(rel, "/"), "internal")
}

// The baseline is a zip archive in the format cmd/apidiff's -m -w writes,
// so that `apidiff -m api/v0.1.0.zip github.com/agnara-go/agnara` reads
// it too: an entry "module" holds the module path, and one entry per
// package, its import path plus ".x", holds the package's export data.
// Export data is self-contained (it declares what the package uses of its
// dependencies), so each package is read on its own.

// writeBaseline writes m, whose positions are in fset, to the file name. Entries are in package order
// and zip's timestamps are left zero, so that the same API gives the same
// bytes.
func writeBaseline(name string, m *apidiff.Module, fset *token.FileSet) error {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	e, err := w.Create("module")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(e, m.Path); err != nil {
		return err
	}
	for _, p := range m.Packages {
		e, err := w.Create(p.Path() + ".x")
		if err != nil {
			return err
		}
		if err := gcexportdata.Write(e, fset, p); err != nil {
			return fmt.Errorf("writing the export data of %s: %w", p.Path(), err)
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(name, buf.Bytes(), 0o644)
}

// readBaseline reads a file written by writeBaseline (or by apidiff -m -w).
func readBaseline(name string) (*apidiff.Module, error) {
	z, err := zip.OpenReader(name)
	if err != nil {
		return nil, err
	}
	defer z.Close()
	m := &apidiff.Module{}
	fset := token.NewFileSet()
	for _, f := range z.File {
		data, err := readEntry(f)
		if err != nil {
			return nil, err
		}
		if f.Name == "module" {
			m.Path = string(data)
			continue
		}
		path, ok := strings.CutSuffix(f.Name, ".x")
		if !ok {
			return nil, fmt.Errorf("%s: unexpected entry %q", name, f.Name)
		}
		p, err := gcexportdata.Read(bytes.NewReader(data), fset, map[string]*types.Package{}, path)
		if err != nil {
			return nil, fmt.Errorf("%s: reading %s: %w", name, path, err)
		}
		m.Packages = append(m.Packages, p)
	}
	if m.Path == "" {
		return nil, fmt.Errorf("%s names no module", name)
	}
	return m, nil
}

func readEntry(f *zip.File) ([]byte, error) {
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
