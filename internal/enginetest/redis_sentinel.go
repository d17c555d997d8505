package enginetest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the master name a [RedisSentinelSet]'s sentinels
// monitor.
const SentinelMaster = "agnara"

// RedisSentinelSet is a throwaway Redis Sentinel deployment on 127.0.0.1:
// one master, one replica of it and three sentinels monitoring them
// (quorum 2, a master down after five seconds: with one second, a node
// stalled by a loaded machine was failed over when no test asked for it),
// without persistence.
type RedisSentinelSet struct {
	t         testing.TB
	mu        sync.Mutex
	bin       string
	data      map[string]*process // master and replica, by address
	dirs      map[string]string   // their directories
	sentinels []*process
	sentPorts []int
}

// RedisSentinel starts a master, a replica and three sentinels on free
// loopback ports, each in its own temporary directory, waits until the
// replica has synced and every sentinel knows the replica and the other two
// sentinels (so that a failover can be agreed on), and stops them when the
// test ends.
func RedisSentinel(t testing.TB) *RedisSentinelSet {
	t.Helper()
	bin := lookPath(t, "redis-server", "redis-server")
	s := &RedisSentinelSet{t: t, bin: bin, data: map[string]*process{}, dirs: map[string]string{}}
	masterPort, replicaPort := FreePort(t), FreePort(t)
	for _, port := range []int{masterPort, replicaPort} {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		s.dirs[addr] = t.TempDir()
		var extra []string
		if port == replicaPort {
			extra = []string{"--replicaof", "127.0.0.1", strconv.Itoa(masterPort)}
		}
		s.startData(addr, extra...)
	}
	replica := "127.0.0.1:" + strconv.Itoa(replicaPort)
	waitInfo(t, s.data[replica], replica, "master_link_status:up", func(ctx context.Context, rc *redis.Client) (string, error) {
		return rc.Info(ctx, "replication").Result()
	})
	for range 3 {
		port, dir := FreePort(t), t.TempDir()
		conf := filepath.Join(dir, "sentinel.conf")
		body := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\n"+
			"sentinel down-after-milliseconds %[3]s 5000\nsentinel failover-timeout %[3]s 10000\nsentinel parallel-syncs %[3]s 1\n",
			port, dir, SentinelMaster, masterPort)
		if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
			t.Fatalf("enginetest: sentinel config: %v", err)
		}
		p := start(t, exec.Command(bin, conf, "--sentinel"))
		waitDial(t, p, "redis-server --sentinel", port)
		s.sentinels, s.sentPorts = append(s.sentinels, p), append(s.sentPorts, port)
	}
	for i, addr := range s.SentinelAddrs() {
		waitInfo(t, s.sentinels[i], addr, "known 1 replicas, 2 sentinels", func(ctx context.Context, rc *redis.Client) (string, error) {
			m, err := rc.Do(ctx, "SENTINEL", "MASTER", SentinelMaster).Result()
			if err != nil {
				return "", err
			}
			f := fields(m)
			return fmt.Sprintf("known %s replicas, %s sentinels", f["num-slaves"], f["num-other-sentinels"]), nil
		})
	}
	return s
}

// startData starts the data node at addr, empty, with extra arguments.
func (s *RedisSentinelSet) startData(addr string, extra ...string) {
	s.t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	args := append([]string{"--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dirs[addr],
		"--protected-mode", "yes", "--daemonize", "no"}, extra...)
	p := start(s.t, exec.Command(s.bin, args...))
	n, _ := strconv.Atoi(port)
	waitDial(s.t, p, "redis-server (sentinel set)", n)
	s.mu.Lock()
	s.data[addr] = p
	s.mu.Unlock()
}

// Restart starts the data node at addr again after KillMaster, empty, on
// the same port, and waits until the sentinels have made it a replica of
// the current master and it has synced, as an operator's restart of a
// crashed master ends.
func (s *RedisSentinelSet) Restart(addr string) {
	s.t.Helper()
	s.mu.Lock()
	p := s.data[addr]
	s.mu.Unlock()
	if p != nil && !p.exited() {
		s.t.Fatalf("enginetest: %s is running", addr)
	}
	s.startData(addr)
	s.mu.Lock()
	p = s.data[addr]
	s.mu.Unlock()
	waitInfo(s.t, p, addr, "master_link_status:up", func(ctx context.Context, rc *redis.Client) (string, error) {
		return rc.Info(ctx, "replication").Result()
	})
}

// fields turns a SENTINEL MASTER answer (a flat list of names and values,
// or a map under RESP3) into a map.
func fields(v any) map[string]string {
	out := map[string]string{}
	switch v := v.(type) {
	case []any:
		for i := 0; i+1 < len(v); i += 2 {
			out[fmt.Sprint(v[i])] = fmt.Sprint(v[i+1])
		}
	case map[any]any:
		for k, x := range v {
			out[fmt.Sprint(k)] = fmt.Sprint(x)
		}
	}
	return out
}

// SentinelAddrs returns the sentinels' host:port addresses.
func (s *RedisSentinelSet) SentinelAddrs() []string {
	addrs := make([]string, len(s.sentPorts))
	for i, port := range s.sentPorts {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(port)
	}
	return addrs
}

// URL returns the deployment's URL in the form of go-redis's
// ParseFailoverURL: the first sentinel, the master name and the other
// sentinels as addr parameters, database 0.
func (s *RedisSentinelSet) URL() string {
	addrs := s.SentinelAddrs()
	return "redis://" + addrs[0] + "/0?master_name=" + SentinelMaster + "&addr=" + strings.Join(addrs[1:], "&addr=")
}

// Master returns the address the sentinels currently give for the master.
func (s *RedisSentinelSet) Master() string {
	s.t.Helper()
	rc := redis.NewSentinelClient(&redis.Options{Addr: s.SentinelAddrs()[0]})
	defer rc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hp, err := rc.GetMasterAddrByName(ctx, SentinelMaster).Result()
	if err != nil || len(hp) != 2 {
		s.t.Fatalf("enginetest: SENTINEL get-master-addr-by-name: %v, %v", hp, err)
	}
	return net.JoinHostPort(hp[0], hp[1])
}

// KillMaster ends the current master at once with SIGKILL and returns its
// address; the sentinels then promote the replica ([RedisSentinelSet.WaitFailover]).
func (s *RedisSentinelSet) KillMaster() string {
	s.t.Helper()
	master := s.Master()
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.data[master]
	if p == nil {
		s.t.Fatalf("enginetest: the sentinels name %s, which this set did not start", master)
	}
	if !p.exited() {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	return master
}

// WaitFailover waits until every sentinel names a master other than old
// and that master answers as one (role:master), or fails the test after
// 60 s; it returns the new master's address.
func (s *RedisSentinelSet) WaitFailover(old string) string {
	s.t.Helper()
	var master string
	for i, addr := range s.SentinelAddrs() {
		got := waitInfo(s.t, s.sentinels[i], addr, "127.0.0.1:", func(ctx context.Context, rc *redis.Client) (string, error) {
			hp, err := rc.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", SentinelMaster).StringSlice()
			if err != nil || len(hp) != 2 || net.JoinHostPort(hp[0], hp[1]) == old {
				return fmt.Sprint(hp), err
			}
			return net.JoinHostPort(hp[0], hp[1]), nil
		})
		if master != "" && got != master {
			s.t.Fatalf("enginetest: sentinels disagree on the new master: %s and %s", master, got)
		}
		master = got
	}
	waitInfo(s.t, s.data[master], master, "role:master", func(ctx context.Context, rc *redis.Client) (string, error) {
		return rc.Info(ctx, "replication").Result()
	})
	return master
}

// Replica returns the address of the data node the sentinels do not name
// as master.
func (s *RedisSentinelSet) Replica() string {
	s.t.Helper()
	master := s.Master()
	for addr := range s.data {
		if addr != master {
			return addr
		}
	}
	s.t.Fatal("enginetest: the sentinel set has no replica")
	return ""
}

// Freeze stops the data node at addr with SIGSTOP, as a stalled host
// would: it keeps its connections but reads and acknowledges nothing until
// the returned function (also run when the test ends) resumes it.
func (s *RedisSentinelSet) Freeze(addr string) (thaw func()) {
	s.t.Helper()
	s.mu.Lock()
	p := s.data[addr]
	s.mu.Unlock()
	if p == nil || p.exited() {
		s.t.Fatalf("enginetest: no running data node at %s", addr)
	}
	syscall.Kill(-p.cmd.Process.Pid, syscall.SIGSTOP)
	var once sync.Once
	thaw = func() { once.Do(func() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT) }) }
	s.t.Cleanup(thaw)
	return thaw
}

// Detach makes the replica at addr stop replicating (REPLICAOF a port
// nothing listens on), keeping the data it has: the writes it then misses
// are what asynchronous replication loses when a master dies before its
// replica has them. The returned function points it back at master (which
// may be dead by then: the sentinels then promote it, without those writes).
func (s *RedisSentinelSet) Detach(addr string) (reattach func(master string)) {
	s.t.Helper()
	replicaof := func(hostport string) {
		s.t.Helper()
		host, port, _ := net.SplitHostPort(hostport)
		rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer rc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
			s.t.Fatalf("enginetest: REPLICAOF %s on %s: %v", hostport, addr, err)
		}
	}
	replicaof("127.0.0.1:" + strconv.Itoa(FreePort(s.t)))
	return replicaof
}
