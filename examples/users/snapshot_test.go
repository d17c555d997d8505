package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestSnapshotIsReviewed: testdata/snapshot.json is what -dump-snapshot
// prints, so that a change to what the example exposes (a tool, a schema, a
// scope) shows in review as a diff of that file. Rewrite it with
// go test ./examples/users/ -run TestSnapshotIsReviewed -update.
func TestSnapshotIsReviewed(t *testing.T) {
	var got bytes.Buffer
	if err := dumpSnapshot(&got, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "snapshot.json")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the snapshot changed; review it and run with -update:\n%s", got.Bytes())
	}
}
