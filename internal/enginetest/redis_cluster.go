package enginetest

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisClusterServer is a throwaway Redis Cluster of three masters (no
// replicas) on 127.0.0.1, without persistence, its 16384 slots split
// between them.
type RedisClusterServer struct {
	nodes []*process
	ports []int
}

// RedisCluster starts three redis-server processes in cluster mode, each on
// a free loopback port with its cluster bus on another, joins them with
// redis-cli --cluster create, waits until every node reports the cluster
// ok, and stops them when the test ends.
func RedisCluster(t testing.TB) *RedisClusterServer {
	t.Helper()
	bin := lookPath(t, "redis-server", "redis-server")
	cli := lookPath(t, "redis-cli", "redis-tools")
	c := &RedisClusterServer{}
	for range 3 {
		port, bus, dir := FreePort(t), FreePort(t), t.TempDir()
		cmd := exec.Command(bin,
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-port", strconv.Itoa(bus),
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
			"--save", "", "--appendonly", "no", "--dir", dir,
			"--protected-mode", "yes", "--daemonize", "no")
		p := start(t, cmd)
		waitDial(t, p, "redis-server (cluster)", port)
		c.nodes, c.ports = append(c.nodes, p), append(c.ports, port)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	create := exec.CommandContext(ctx, cli, append([]string{"--cluster", "create"}, append(c.Addrs(), "--cluster-replicas", "0", "--cluster-yes")...)...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("enginetest: redis-cli --cluster create: %v\n%s", err, out)
	}
	for i, addr := range c.Addrs() {
		waitInfo(t, c.nodes[i], addr, "cluster_state:ok", func(ctx context.Context, rc *redis.Client) (string, error) {
			return rc.ClusterInfo(ctx).Result()
		})
	}
	return c
}

// Addrs returns the nodes' host:port addresses.
func (c *RedisClusterServer) Addrs() []string {
	addrs := make([]string, len(c.ports))
	for i, port := range c.ports {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	return addrs
}

// URL returns the cluster's URL in the form of go-redis's ParseClusterURL:
// the first node, and the others as addr parameters.
func (c *RedisClusterServer) URL() string {
	addrs := c.Addrs()
	return "redis://" + addrs[0] + "?addr=" + strings.Join(addrs[1:], "&addr=")
}

// waitInfo polls query on the Redis at addr until its answer contains want,
// or fails the test after 30 s (or when p has exited) with the last answer.
func waitInfo(t testing.TB, p *process, addr, want string, query func(context.Context, *redis.Client) (string, error)) string {
	t.Helper()
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rc.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		got, err := query(ctx, rc)
		cancel()
		if err == nil && strings.Contains(got, want) {
			return got
		}
		if p != nil && p.exited() {
			t.Fatalf("enginetest: %s exited while waiting for %q:\n%s", addr, want, p.output())
		}
		if time.Now().After(deadline) {
			t.Fatalf("enginetest: %s did not report %q within 30s: %q, %v\n%s", addr, want, got, err, p.output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
