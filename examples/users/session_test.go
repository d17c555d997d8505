package main

import (
	"bytes"
	"context"
	"flag"
	"github.com/agnara-go/agnara/examples/internal/userservice"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/session.txt")

// TestSession drives the capabilities in process, as an adapter would, with
// a fixed clock, and compares the outcomes with testdata/session.txt.
func TestSession(t *testing.T) {
	store := userservice.NewStoreWithClock(func() time.Time { return time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC) })
	var out, logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if err := session(context.Background(), &out, logger, store); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("testdata/session.txt", out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/session.txt")
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != string(want) {
		t.Errorf("session output differs from testdata/session.txt:\n%s", out.String())
	}
	if n := strings.Count(logs.String(), `msg="invocation finished"`); n != 8 {
		t.Errorf("got %d invocation log lines, want 8:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "ada@example.com") {
		t.Errorf("an argument value reached the log:\n%s", logs.String())
	}
}
