package redislimit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution/redislimit"
	"github.com/agnara-go/agnara/internal/enginetest"
)

// TestOpenCountsTogetherOnEachDeployment: two limiters opened on the same
// URL (single, Sentinel, Cluster) count each caller's calls together, for
// callers whose buckets are in different slots.
func TestOpenCountsTogetherOnEachDeployment(t *testing.T) {
	for _, tc := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"single", func(t *testing.T) string { return enginetest.Redis(t).URL() }},
		{"sentinel", func(t *testing.T) string { return enginetest.RedisSentinel(t).URL() }},
		{"cluster", func(t *testing.T) string { return enginetest.RedisCluster(t).URL() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			open := func() *redislimit.Limiter {
				l, closeFn, err := redislimit.Open(t.Context(), url, nil)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { closeFn() })
				return l
			}
			a, b := open(), open()
			limit := agnara.RateLimit{Rate: 0.001, Burst: 2}
			for i := range 10 {
				key := fmt.Sprint("users.get_user 0:caller", i)
				for j, l := range []*redislimit.Limiter{a, b, a} {
					_, ok, err := l.Allow(t.Context(), key, limit)
					if err != nil || ok != (j < 2) {
						t.Fatalf("%s, call %d = %v, %v; want %v (a burst of 2 across both)", key, j, ok, err, j < 2)
					}
				}
			}
		})
	}
	if _, _, err := redislimit.Open(t.Context(), "redis://:s3cret@127.0.0.1:1?addr=127.0.0.1:2&bogus=1", nil); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("Open of a bad cluster URL = %v, want an error without the password", err)
	}
}
