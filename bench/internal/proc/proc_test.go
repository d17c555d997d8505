package proc

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 1234, stime 56.
	stat := "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 56 0 0 20 0 3 0 100 1000000 200 18446744073709551615\n"
	got, err := ParseStat([]byte(stat))
	if err != nil || got != 1290 {
		t.Fatalf("ParseStat = %d, %v; want 1290", got, err)
	}
	if _, err := ParseStat([]byte("4242 (x) S 1")); err == nil {
		t.Fatal("short stat: no error")
	}
}

func TestSelf(t *testing.T) {
	if _, err := CPUTicks(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if rss, err := RSS(os.Getpid()); err != nil || rss <= 0 {
		t.Fatalf("RSS = %d, %v", rss, err)
	}
	if n := ClockTicks(); n <= 0 {
		t.Fatalf("ClockTicks = %d", n)
	}
}
