// Package adrcheck holds the tests that keep the architecture decision
// records in adr/ the way ADR 63 says they are kept: a decision that
// changes gets a new record that supersedes the old one, and the old one
// stays, marked, with a link.
//
// They fail when two records share a number, when a record's heading
// number is not its file's, when a Status names a record without linking
// its file, when a record is superseded or amended and the other record
// does not say so too, when adr/README.md (the index) is not what the
// records' titles and statuses make it, and when code or docs outside adr/
// and CHANGELOG.md cite a superseded record without the one in force. `go
// test ./internal/adrcheck -update` rewrites the index.
//
// They run with every `go test ./...`, so `make test` and `make check`
// fail on a violation, naming the file and what to do instead.
package adrcheck
