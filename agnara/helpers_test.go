package agnara_test

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/registry"
)

// here returns the position of its caller in the form the agnara package
// reports registration sites: "<parent dir>/<file>:<line>". Call it on the
// same line as the registration whose site is expected.
func here() string {
	_, file, line, ok := runtime.Caller(1)
	if !ok {
		panic("runtime.Caller failed")
	}
	return fmt.Sprintf("%s:%d", filepath.Join(filepath.Base(filepath.Dir(file)), filepath.Base(file)), line)
}

// freeze is what a compiler receives from an application.
func freeze(a *agnara.App) ([]*agnara.Capability, *container.Container, error) {
	f := registry.Freeze[*agnara.Capability](a)
	return f.Capabilities, f.Container, f.Err
}

// errOf returns the mistakes recorded in c's registration itself.
func errOf(c *agnara.Capability) error { return registry.Define(c).Err }

// funcOf returns the function c registered.
func funcOf(c *agnara.Capability) any { return registry.Define(c).Func }
