package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRefusalLogIsBounded drives the limiter with a manual clock: at most
// burst records per window, then one summary with the count held back.
func TestRefusalLogIsBounded(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	start := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	now := start
	l := &logRate{now: func() time.Time { return now }}
	reason := errors.New("invalid token: bad signature")
	refuse := func(n int) {
		for range n {
			l.refused(context.Background(), logger, reason)
		}
	}
	type line struct {
		Msg    string `json:"msg"`
		Reason string `json:"reason"`
		Count  int    `json:"count"`
		Since  string `json:"since"`
	}
	lines := func() []line {
		var out []line
		dec := json.NewDecoder(&buf)
		for dec.More() {
			var l line
			if err := dec.Decode(&l); err != nil {
				t.Fatal(err)
			}
			out = append(out, l)
		}
		buf.Reset()
		return out
	}
	refusedLine := line{Msg: "bearer token refused", Reason: reason.Error()}
	records := func(n int) []line {
		out := make([]line, n)
		for i := range out {
			out[i] = refusedLine
		}
		return out
	}

	refuse(100)
	if diff := cmp.Diff(records(refusalLogBurst), lines()); diff != "" {
		t.Errorf("100 refusals in one window (-want +got):\n%s", diff)
	}
	now = now.Add(refusalLogInterval - time.Nanosecond)
	refuse(5)
	if got := lines(); len(got) != 0 {
		t.Errorf("still in the window: %d lines", len(got))
	}
	now = now.Add(time.Nanosecond) // the next window
	refuse(3)
	want := append([]line{{Msg: "more bearer tokens refused than logged", Count: 95, Since: start.Format(time.RFC3339)}}, records(3)...)
	if diff := cmp.Diff(want, lines()); diff != "" {
		t.Errorf("after the window (-want +got):\n%s", diff)
	}
	now = now.Add(time.Hour) // nothing was held back: no summary
	refuse(1)
	if diff := cmp.Diff(records(1), lines()); diff != "" {
		t.Errorf("quiet window (-want +got):\n%s", diff)
	}
}

// TestRefusalLogIsBoundedConcurrently: concurrent refusals in one window
// let exactly burst records through.
func TestRefusalLogIsBoundedConcurrently(t *testing.T) {
	now := time.Now()
	l := &logRate{now: func() time.Time { return now }}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		written int
	)
	for range 100 {
		wg.Go(func() {
			if ok, held, _ := l.take(); ok {
				mu.Lock()
				written++
				mu.Unlock()
			} else if held != 0 {
				t.Error("a summary within the first window")
			}
		})
	}
	wg.Wait()
	if written != refusalLogBurst {
		t.Errorf("%d records let through, want %d", written, refusalLogBurst)
	}
}

// For the tests outside the package.
const (
	RefusalLogBurst    = refusalLogBurst
	RefusalLogInterval = refusalLogInterval
)
