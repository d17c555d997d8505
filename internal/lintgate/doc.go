// Package lintgate holds the test that keeps agnara-go's library code free
// of what a library must not do: panic (a bad option or input is an error),
// print to standard output (fmt.Print, print, println: it may be a
// protocol stream, as on stdio), or log through the global "log" package
// (records go to the caller's *slog.Logger). Programs (package main:
// examples/, cmd/, conformance/) and tests are exempt.
//
// It runs with every `go test ./...`, so `make test` and `make check` fail
// on a violation, naming the file, line and what to use instead.
package lintgate
