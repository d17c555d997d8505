package agnara_test

import (
	"fmt"
	"path/filepath"
	"runtime"
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
