package enginetest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// HAProxyServer is a haproxy process started by [HAProxy]. Its methods are
// safe for concurrent use.
type HAProxyServer struct {
	p      *process
	config string
}

// HAProxy writes config to haproxy.cfg in a temporary directory, checks it
// (haproxy -c), starts haproxy on it in the foreground (-db), and waits
// until it accepts connections on each of the listen ports, which the
// config must bind on 127.0.0.1. The process is stopped when the test ends.
//
// Logs sent to stderr (log stderr format raw local0 in the global section)
// are kept and shown when it fails to start; read them with Output.
func HAProxy(t testing.TB, config string, listen ...int) *HAProxyServer {
	t.Helper()
	if len(listen) == 0 {
		t.Fatal("enginetest: HAProxy needs the port it listens on, to know when it is ready")
	}
	bin := lookPath(t, "haproxy", "haproxy", "/usr/sbin")
	cfg := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatalf("enginetest: %v", err)
	}
	// The check reports every mistake with its line at once, where a
	// failed start would show only the first one among startup noise.
	if out, err := exec.Command(bin, "-c", "-f", cfg).CombinedOutput(); err != nil {
		t.Fatalf("enginetest: haproxy -c refuses the config: %v\n%s\n--- config ---\n%s", err, out, numbered(config))
	}
	p := start(t, exec.Command(bin, "-f", cfg, "-db"))
	for _, port := range listen {
		waitDial(t, p, "haproxy", port)
	}
	return &HAProxyServer{p: p, config: cfg}
}

// Output returns what haproxy wrote to stdout and stderr so far.
func (h *HAProxyServer) Output() string { return h.p.output() }

// ConfigPath returns the file haproxy runs on.
func (h *HAProxyServer) ConfigPath() string { return h.config }

// Stop stops haproxy and waits for it to exit; stopping twice is harmless.
func (h *HAProxyServer) Stop() { h.p.stop() }

// numbered returns text with line numbers, to read haproxy's errors by.
func numbered(text string) string {
	var b strings.Builder
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		fmt.Fprintf(&b, "%3d  %s\n", i+1, line)
	}
	return b.String()
}
