// Package lintgate holds the tests that keep agnara-go's library code free
// of what a library must not do: panic (a bad option or input is an error),
// print to standard output (fmt.Print, print, println: it may be a
// protocol stream, as on stdio), or log through the global "log" package
// (records go to the caller's *slog.Logger). Programs (package main:
// examples/, cmd/, conformance/) and tests are exempt.
//
// They hold every Go file of the product to 600 lines (tests, generated
// files, examples/ and the conformance fixture aside; cmd/ counts): a
// longer file mixes concepts, and is split by concept into files named
// after them (ADR 72). And the machinery under an internal/ directory
// imports no public package of the module unless a list names the pair and
// why (the record internal/registry carries holds di's and policy's
// types): what a public package and the machinery both need lives under
// internal/.
//
// They also keep build outputs out of the repository: no tracked file may
// be an executable (ELF, Mach-O, PE, WebAssembly, or the executable bit on
// anything but a #! script) or larger than 1 MiB unless the test's allow
// list names it with a reason (lockfiles, recorded traffic, the docs'
// images), and the binary `go build` leaves in each program's directory
// must be ignored by git. Those checks ask git what is tracked; where there
// is no git clone (a source archive) they skip, or fail under
// AGNARA_REQUIRE_PEERS=1, as make test and CI run them (internal/peers).
//
// They run with every `go test ./...`, so `make test` and `make check` fail
// on a violation, naming the file, line and what to do instead.
package lintgate
