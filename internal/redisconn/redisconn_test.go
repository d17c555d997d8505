package redisconn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/redisconn"
	"github.com/redis/go-redis/v9"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@127.0.0.1:6379/0", "redis://:xxxxx@127.0.0.1:6379/0"},
		{"rediss://user:s3cret@db:6380", "rediss://user:xxxxx@db:6380"},
		{"redis://user@db", "redis://user@db"},
		{"redis://s:26379/0?master_name=m&password=s3cret&addr=t:26379", "redis://s:26379/0?master_name=m&password=xxxxx&addr=t:26379"},
		{"redis://:a@s:26379/0?master_name=m&password=s3cret", "redis://:xxxxx@s:26379/0?master_name=m&password=xxxxx"},
		{"redis://n1:7000?addr=n2:7000&x=a@b", "redis://n1:xxxxx@b"}, // a query with "@" reads as userinfo: too much hidden, never too little
		{"redis://u:s3/cret@127.0.0.1:1/0", "redis://u:xxxxx@127.0.0.1:1/0"},
		{"redis://:s3?cret@127.0.0.1:1/0", "redis://:xxxxx@127.0.0.1:1/0"},
		{"not a url", "(malformed URL)"},
	} {
		if got := redisconn.RedactURL(tc.url); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	for _, url := range []string{"redis://:s3cret@db", "redis://s:1/0?master_name=m&password=s3cret", "redis://s:1/0?master_name=m&password=s3%63ret"} {
		if got := redisconn.RedactErr(errors.New("auth s3cret refused"), url); strings.Contains(got, "s3cret") {
			t.Errorf("RedactErr(%s) kept the password: %q", url, got)
		}
	}
}

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want redisconn.Kind
	}{
		{"redis://127.0.0.1:6379/0", redisconn.Single},
		{"rediss://:p@db:6380/2?dial_timeout=1s", redisconn.Single},
		{"redis://s1:26379/0?master_name=m&addr=s2:26379", redisconn.Sentinel},
		{"redis://s1:26379/0?master_name=m", redisconn.Sentinel},
		{"redis://n1:7000?addr=n2:7000&addr=n3:7000", redisconn.Cluster},
		{"redis://n1:7000?addr=n1:7000", redisconn.Cluster},
		{"%%", redisconn.Single},
	} {
		if got := redisconn.KindOf(tc.url); got != tc.want {
			t.Errorf("KindOf(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

// TestDialNeverShowsThePassword: malformed URLs of each form and a server
// that does not answer (nothing listens on port 1) are errors without the
// password.
func TestDialNeverShowsThePassword(t *testing.T) {
	for _, url := range []string{
		"redis://:s3cret@127.0.0.1:1/x",
		"redis://:s3cret@127.0.0.1:1/0",
		"redis://127.0.0.1:1/0?master_name=&password=s3cret",
		"redis://127.0.0.1:1/0?master_name=m&password=s3cret&bogus=1",
		"redis://127.0.0.1:1/0?master_name=m&password=s3cret",
		"redis://:s3cret@127.0.0.1:1?addr=127.0.0.1:2&bogus=1",
		"redis://:s3cret@127.0.0.1:1?addr=127.0.0.1:2",
	} {
		c, err := redisconn.Dial(context.Background(), "test", url, 300*time.Millisecond)
		if err == nil {
			c.Close()
			t.Fatalf("Dial(%s) succeeded", redisconn.RedactURL(url))
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("Dial error %q", err)
		}
	}
	// A password with "/" or "?" unencoded makes the URL unparsable, and
	// a parser's error quotes pieces of it: neither half may show.
	for _, url := range []string{
		"redis://u:s3/cret@127.0.0.1:1/0",
		"redis://:s3?cret@127.0.0.1:1/0",
		"redis://u:s3/cret@127.0.0.1:1/0?master_name=m",
		"redis://:s3?cret@127.0.0.1:1?addr=127.0.0.1:2",
	} {
		c, err := redisconn.Dial(context.Background(), "test", url, 300*time.Millisecond)
		if err == nil {
			c.Close()
			t.Fatalf("Dial(%s) succeeded", redisconn.RedactURL(url))
		}
		if msg := err.Error(); strings.Contains(msg, "s3") || strings.Contains(msg, "cret") || !strings.Contains(msg, "percent-encode") {
			t.Errorf("Dial error %q", msg)
		}
	}
}

// TestDialEachDeployment: one URL syntax reaches a single Redis, a
// Sentinel set's master and a Cluster, and each client writes and reads.
func TestDialEachDeployment(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
		kind redisconn.Kind
	}{
		{"single", func(t *testing.T) string { return enginetest.Redis(t).URL() }, redisconn.Single},
		{"sentinel", func(t *testing.T) string { return enginetest.RedisSentinel(t).URL() }, redisconn.Sentinel},
		{"cluster", func(t *testing.T) string { return enginetest.RedisCluster(t).URL() }, redisconn.Cluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			if got := redisconn.KindOf(url); got != tc.kind {
				t.Fatalf("KindOf(%s) = %v, want %v", url, got, tc.kind)
			}
			c, err := redisconn.Dial(t.Context(), "test", url, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, isCluster := c.(*redis.ClusterClient)
			if isCluster != (tc.kind == redisconn.Cluster) {
				t.Errorf("client %T for a %v URL", c, tc.kind)
			}
			for i := range 20 {
				k := fmt.Sprint("key", i)
				if err := c.Set(t.Context(), k, i, time.Minute).Err(); err != nil {
					t.Fatal(err)
				}
				if got, err := c.Get(t.Context(), k).Int(); err != nil || got != i {
					t.Fatalf("GET %s = %d, %v", k, got, err)
				}
			}
		})
	}
}
