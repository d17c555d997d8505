package inbox

import (
	"fmt"
	"testing"
	"time"
)

func TestMakeRoom(t *testing.T) {
	now := time.Now()
	m := map[string]time.Time{}
	for i := range 4 {
		m[fmt.Sprint(i)] = now.Add(time.Duration(i)*time.Hour - 30*time.Minute) // "0" expired
	}
	makeRoom(m, 5, now, func(t time.Time) time.Time { return t })
	if len(m) != 4 {
		t.Fatalf("not full: %d entries left, want 4", len(m))
	}
	makeRoom(m, 4, now, func(t time.Time) time.Time { return t })
	if _, ok := m["0"]; ok || len(m) != 3 {
		t.Fatalf("full: %v, want the expired one dropped", m)
	}
	makeRoom(m, 2, now, func(t time.Time) time.Time { return t })
	if len(m) != 1 {
		t.Fatalf("over full: %d entries left, want room for one more", len(m))
	}
}
