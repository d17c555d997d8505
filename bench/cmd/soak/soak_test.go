package main

import (
	"context"
	"testing"
	"time"
)

// TestSoak builds the users example and soaks it for two seconds with four
// clients (two per era): no unexpected outcome, no descriptor or memory
// growth, every kind of request exercised.
func TestSoak(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := run(ctx, options{clients: 4, duration: 2 * time.Second, idle: time.Second, fdSlack: 8})
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

// TestFailures checks the exit criteria.
func TestFailures(t *testing.T) {
	ok := summary{start: sample{rss: 10 << 20, fds: 10}, end: sample{rss: 80 << 20, fds: 18}}
	if f := ok.failures(8); len(f) != 0 {
		t.Errorf("within bounds: %v", f)
	}
	bad := summary{unexpected: 1, start: sample{rss: 10 << 20, fds: 10}, end: sample{rss: 81 << 20, fds: 19}}
	if f := bad.failures(8); len(f) != 3 {
		t.Errorf("out of bounds: %v, want 3 failures", f)
	}
}
