// Command api, the API check, keeps agnara-go's exported API still between releases
// (DESIGN 9b, ADR 70). It compares the exported API of the module's public
// packages with the last release's, recorded in api/v<version>.zip, using
// golang.org/x/exp/apidiff; it fails on an incompatible change that
// api/next.txt does not record, on a record in api/next.txt that no change
// matches, and on a record whose CHANGELOG.md line is not under "Breaking"
// in the Unreleased section. It also counts the exported identifiers of
// the packages a service author imports, and fails unless they are fewer
// than the go-sdk mcp package's 392 (surface.go, ADR 73).
//
// The checked packages are every package of the module that another module
// can import: not package main (cmd/, conformance/, the example programs),
// nothing under an internal/ directory, and nothing under examples/. The
// benchmark module (bench/) and this one, api/, are modules of their own.
//
// Usage, from this directory (make api-check, make api-release):
//
//	go run . -dir ..          # check the working tree against the baseline
//	go run . -dir .. -write   # at a release: write the baseline, empty api/next.txt
//
// The baseline's version is agnara.Version unless -version names another.
// api/ is a module so that golang.org/x/exp and
// golang.org/x/tools never reach the go.mod, and so the go.sum, of a
// service that imports agnara-go, and so that the baseline is left out of
// the module's zip, which every importer downloads.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", "..", "the root of the module to check")
	flag.StringVar(&cfg.version, "version", "", "the release whose API is the baseline (default: the module's agnara.Version)")
	write := flag.Bool("write", false, "write the baseline of the release from the working tree and empty api/next.txt (make api-release)")
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	run := check
	if *write {
		run = release
	}
	msg, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "api-check:", err)
		os.Exit(1)
	}
	fmt.Println("api-check:", msg)
}
