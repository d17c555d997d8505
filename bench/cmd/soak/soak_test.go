package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSoak builds the users example and soaks it for two seconds with four
// clients (two per era): no unexpected outcome, no descriptor or memory
// growth, every kind of request exercised, every quiet checkpoint taken.
func TestSoak(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := run(ctx, options{clients: 4, duration: 2 * time.Second, warmup: 500 * time.Millisecond, idle: time.Second, fdSlack: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + s.String())
	for _, f := range s.failures(8) {
		t.Error(f)
	}
	for era, mix := range map[string][]string{"modern": modernMix, "legacy": legacyMix} {
		for _, k := range mix {
			if s.counts[era][k] == 0 {
				t.Errorf("%s %s: never run", era, k)
			}
		}
	}
	if s.start.rss <= 0 || s.start.threads <= 0 || s.start.fds <= 0 {
		t.Errorf("start sample %+v", s.start)
	}
	if len(s.quiet) < 3 || slices.ContainsFunc(s.quiet, func(c checkpoint) bool { return c.heap <= 0 }) {
		t.Errorf("quiet checkpoints %+v", s.quiet)
	}
}

func TestParseStatus(t *testing.T) {
	p, err := parseStatus("Name:\tusers\nVmRSS:\t   12345 kB\nThreads:\t7\n")
	if err != nil || p.rss != 12345<<10 || p.threads != 7 {
		t.Fatalf("parseStatus = %+v, %v", p, err)
	}
	if _, err := parseStatus("Name:\tusers\n"); err == nil {
		t.Fatal("no fields: no error")
	}
}

// quiet returns checkpoints every 5 s from 10 s to 60 s with the given
// live heaps, in MiB.
func quiet(mibs ...float64) []checkpoint {
	cs := make([]checkpoint, len(mibs))
	for i, m := range mibs {
		cs[i] = checkpoint{at: time.Duration(10+5*i) * time.Second, heap: int64(m * (1 << 20))}
	}
	return cs
}

// TestFailures checks the exit criteria.
func TestFailures(t *testing.T) {
	flat := quiet(6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6)
	ok := summary{duration: time.Minute, warmup: 10 * time.Second, start: sample{rss: 10 << 20, fds: 10}, end: sample{rss: 80 << 20, fds: 18}, quiet: flat}
	if f := ok.failures(8); len(f) != 0 {
		t.Errorf("within bounds: %v", f)
	}
	bad := summary{duration: time.Minute, warmup: 10 * time.Second, unexpected: 1, start: sample{rss: 10 << 20, fds: 10}, end: sample{rss: 81 << 20, fds: 19}, quiet: flat}
	if f := bad.failures(8); len(f) != 3 {
		t.Errorf("out of bounds: %v, want 3 failures", f)
	}
}

// TestFlatMemory checks the flat-memory criterion on quiet checkpoints taken
// every 5 s from 10 s to 60 s: the soak before the event store was bounded
// (b8 in the investigation), after it, a working set that fills up in the
// first half, the bound itself, and missing readings.
func TestFlatMemory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		quiet []checkpoint
		fail  string // a failure containing this, "" for none
	}{
		{"leak", quiet(3.6, 4.8, 5.8, 6.8, 8.1, 8.7, 9.6, 11.0, 12.9, 13.8, 14.8), "memory not flat"},
		{"bounded", quiet(5.9, 6.1, 6.3, 6.3, 6.4, 6.6, 6.5, 6.6, 6.6, 6.7, 6.9), ""},
		{"fills in the first half", quiet(2, 3, 4, 5, 6, 6.2, 6.2, 6.3, 6.3, 6.4, 6.4), ""},
		{"within the bound", quiet(10, 10, 10, 10, 10, 10, 14, 14, 14, 14, 14), ""},
		{"just over the bound", quiet(10, 10, 10, 10, 10, 10, 14.01, 14.01, 14.01, 14.01, 14.01), "memory not flat"},
		{"one high reading", quiet(6, 6, 6, 6, 6, 6, 6, 30, 6, 6, 6), ""},
		{"no reading in a half", quiet(6, 6, 6, 6, 6, 6, 0, 0, 0, 0, 0), "no live heap reading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := summary{duration: time.Minute, warmup: 10 * time.Second, quiet: tc.quiet}
			f := s.failures(8)
			switch {
			case tc.fail == "" && len(f) != 0:
				t.Errorf("failures %q, want none", f)
			case tc.fail != "" && (len(f) != 1 || !strings.Contains(f[0], tc.fail)):
				t.Errorf("failures %q, want one with %q", f, tc.fail)
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{{[]int64{3, 1, 2}, 2}, {[]int64{4, 1, 3, 2}, 2}, {[]int64{5}, 5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
