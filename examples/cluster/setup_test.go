package cluster

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/proctest"
)

// scopes lets the development principal of every instance call every tool,
// delete_user (users:admin) included.
const scopes = "users:read users:write users:admin"

// programs are the binaries the test runs, built once.
type programs struct {
	users, agnara string
}

func build(t *testing.T) programs {
	t.Helper()
	return programs{users: proctest.Build(t, "../users"), agnara: proctest.Build(t, "../../cmd/agnara")}
}

// keys runs the agnara command (keys generate, keys rotate) and fails the
// test with its output when it fails.
func (p programs) keys(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(p.agnara, append([]string{"keys"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("agnara keys %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// newKeyFile writes a fresh key file with agnara keys generate.
func (p programs) newKeyFile(t *testing.T) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "state-keys")
	p.keys(t, "generate", "-o", file)
	return file
}

// instance is one running users example. proctest.Start does not hand out
// its process, and these tests must kill one: hence this small copy of it.
type instance struct {
	name string
	url  string // http://127.0.0.1:PORT/mcp
	addr string // 127.0.0.1:PORT
	cmd  *exec.Cmd
	done chan struct{}
	logs *lockedBuffer
}

// startInstance starts the users example on a free loopback port with the
// shared key file and replay store, and the extra flags, and waits for the
// URL it prints once listening. It is stopped when the test ends; its
// standard error is shown if the test fails.
func startInstance(t *testing.T, p programs, name, keyFile, redisURL string, extra ...string) *instance {
	t.Helper()
	args := append([]string{"-addr", "127.0.0.1:0", "-dev-scopes", scopes, "-state-keys", keyFile, "-replay-redis", redisURL, "-metrics-addr", "off"}, extra...)
	cmd := exec.Command(p.users, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in := &instance{name: name, cmd: cmd, done: make(chan struct{}), logs: &lockedBuffer{}}
	cmd.Stderr = in.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- strings.TrimSpace(s.Text())
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(in.done)
	}()
	t.Cleanup(func() {
		in.stop()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, in.logs.tail(4000))
		}
	})
	select {
	case in.url = <-line:
	case <-in.done:
		t.Fatalf("%s exited before listening: %s\n%s", name, strings.Join(args, " "), in.logs.tail(4000))
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30s", name)
	}
	u, err := url.Parse(in.url)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Path != "/mcp" {
		t.Fatalf("%s printed %q, want its MCP URL on 127.0.0.1", name, in.url)
	}
	in.addr = u.Host
	return in
}

// stop interrupts the instance and waits for it (killing it after 10 s).
func (in *instance) stop() {
	select {
	case <-in.done:
		return
	default:
	}
	in.cmd.Process.Signal(os.Interrupt)
	select {
	case <-in.done:
	case <-time.After(10 * time.Second):
		in.cmd.Process.Kill()
		<-in.done
	}
}

// kill ends the instance at once, as a crash or a lost machine would: no
// graceful shutdown, connections reset.
func (in *instance) kill(t *testing.T) {
	t.Helper()
	if err := in.cmd.Process.Kill(); err != nil {
		t.Fatalf("kill %s: %v", in.name, err)
	}
	<-in.done
}

// cluster is a number of users instances behind HAProxy running
// haproxy.cfg.
type cluster struct {
	instances []*instance
	proxy     string // the MCP URL through HAProxy
	stats     string // HAProxy's stats page, CSV
	haproxy   *enginetest.HAProxyServer
}

// startCluster starts n instances and HAProxy in front of them, and waits
// until HAProxy's health checks see every instance up.
func startCluster(t *testing.T, p programs, n int, keyFile, redisURL string, extra ...string) *cluster {
	t.Helper()
	c := &cluster{}
	for i := range n {
		c.instances = append(c.instances, startInstance(t, p, fmt.Sprintf("users%d", i+1), keyFile, redisURL, extra...))
	}
	front, stats := enginetest.FreePort(t), enginetest.FreePort(t)
	var servers []string
	for _, in := range c.instances {
		servers = append(servers, in.addr)
	}
	c.haproxy = enginetest.HAProxy(t, proxyConfig(t, front, stats, servers), front, stats)
	c.proxy = fmt.Sprintf("http://127.0.0.1:%d/mcp", front)
	c.stats = fmt.Sprintf("http://127.0.0.1:%d/stats;csv", stats)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("haproxy output:\n%s", tail(c.haproxy.Output(), 6000))
		}
	})
	for _, in := range c.instances {
		c.waitStatus(t, in, "UP")
	}
	return c
}

// proxyConfig returns haproxy.cfg, as committed, with its front address,
// stats address and server lines pointed at this test's ports. Every line
// it replaces must be there exactly once, so that the test runs the file an
// operator copies and notices when the file changes shape.
func proxyConfig(t *testing.T, front, stats int, servers []string) string {
	t.Helper()
	b, err := os.ReadFile("haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	replace := func(old, new string) {
		t.Helper()
		if n := strings.Count(cfg, old); n != 1 {
			t.Fatalf("haproxy.cfg holds %q %d times, want once", old, n)
		}
		cfg = strings.Replace(cfg, old, new, 1)
	}
	replace("bind 127.0.0.1:8080 ", fmt.Sprintf("bind 127.0.0.1:%d ", front))
	replace("bind 127.0.0.1:8404 ", fmt.Sprintf("bind 127.0.0.1:%d ", stats))
	// The committed file names three instances; a test may run fewer.
	for i := 1; i <= 3; i++ {
		line := fmt.Sprintf("\tserver users%d 127.0.0.1:%d", i, 8080+i)
		if i <= len(servers) {
			replace(line, fmt.Sprintf("\tserver users%d %s", i, servers[i-1]))
		} else {
			replace(line, "\t# "+strings.TrimSpace(line))
		}
	}
	if len(servers) > 3 {
		t.Fatalf("haproxy.cfg names 3 servers, not %d", len(servers))
	}
	return cfg
}

// status returns HAProxy's view of each server of the users backend
// (UP, DOWN, ...), from its stats page.
func (c *cluster) status(t *testing.T) map[string]string {
	t.Helper()
	resp, err := http.Get(c.stats)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := csv.NewReader(resp.Body)
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		t.Fatalf("stats CSV: %v", err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[strings.TrimPrefix(name, "# ")] = i
	}
	out := map[string]string{}
	for _, row := range rows[1:] {
		if row[col["pxname"]] == "users" && strings.HasPrefix(row[col["svname"]], "users") {
			out[row[col["svname"]]] = row[col["status"]]
		}
	}
	return out
}

// waitStatus waits (at most 10 s) until HAProxy reports in's server in
// state want: its health checks run every second.
func (c *cluster) waitStatus(t *testing.T, in *instance, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := c.status(t)[in.name]
		if got == want { // not "UP 1/2": up, but a check failed
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy reports %s %q after 10s, want %s", in.name, got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lockedBuffer collects a process's output, safe for its writes and a
// reader at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return tail(l.b.String(), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
