package redisconn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/redisconn"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"rediss://user:s3cret@db:6380", "rediss://user:xxxxx@db:6380"},
		{"redis://user@db", "redis://user@db"},
		{"not a url", "(malformed URL)"},
	} {
		if got := redisconn.RedactURL(tc.url); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	if got := redisconn.RedactErr(errors.New("auth s3cret refused"), "redis://:s3cret@db"); strings.Contains(got, "s3cret") {
		t.Errorf("RedactErr kept the password: %q", got)
	}
}

// TestDialNeverShowsThePassword: a malformed URL and a server that does not
// answer (nothing listens on port 1) are errors without the password.
func TestDialNeverShowsThePassword(t *testing.T) {
	for _, url := range []string{"redis://:s3cret@127.0.0.1:1/x", "redis://:s3cret@127.0.0.1:1/0"} {
		c, err := redisconn.Dial(context.Background(), "test", url, 200*time.Millisecond)
		if err == nil {
			c.Close()
			t.Fatalf("Dial(%s) succeeded", redisconn.RedactURL(url))
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("Dial error %q", err)
		}
	}
}
