package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	framework "github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestGatewaySampleAndCheck(t *testing.T) {
	code, sample, _ := agnara(time.Time{}, "gateway", "-sample")
	if code != 0 || sample != string(gateway.Sample) {
		t.Fatalf("-sample: exit %d", code)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(good, []byte(sample), 0o644)
	code, out, errOut := agnara(time.Time{}, "gateway", "-check", "-config", good)
	if code != 0 || !strings.Contains(out, "ok: 2 upstreams, 4 tools, serving 127.0.0.1:8090/mcp") {
		t.Errorf("-check of the sample: exit %d, %q %q", code, out, errOut)
	}

	bad := filepath.Join(dir, "bad.yaml")
	broken := strings.Replace(strings.Replace(sample, "command: npx", "comand: npx", 1), "title: Read the notes", "titel: Read the notes", 1)
	os.WriteFile(bad, []byte(broken), 0o644)
	code, out, errOut = agnara(time.Time{}, "gateway", "-check", "-config", bad)
	// lineOf is the line of the first line of broken holding s.
	lineOf := func(s string) int { return strings.Count(broken[:strings.Index(broken, s)], "\n") + 1 }
	want := []string{
		fmt.Sprintf(`%s:%d: upstreams[0].stdio.command: name the program to run`, bad, lineOf("stdio:")),
		fmt.Sprintf(`%s:%d: upstreams[0].stdio: unknown key "comand" (did you mean "command"?)`, bad, lineOf("comand:")),
		fmt.Sprintf(`%s:%d: upstreams[1].tools[0].title: give the tool a title`, bad, lineOf("- remote: read_graph")),
		fmt.Sprintf(`%s:%d: upstreams[1].tools[0]: unknown key "titel" (did you mean "title"?)`, bad, lineOf("titel:")),
	}
	if code != 1 || out != "" {
		t.Errorf("-check of a bad file: exit %d, stdout %q", code, out)
	}
	for _, w := range want {
		if !strings.Contains(errOut, w) {
			t.Errorf("-check of a bad file: missing %q in\n%s", w, errOut)
		}
	}

	for _, args := range [][]string{{"gateway"}, {"gateway", "-config", good, "extra"}, {"gateway", "-config", good, "-log-level", "loud"}} {
		if code, _, errOut := agnara(time.Time{}, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}

// TestGatewayCommandServes runs `agnara gateway -config` as an operator
// would, over the npm filesystem server, calls a tool through it, and stops
// it with SIGTERM: it exits 0 and its upstream process with it.
func TestGatewayCommandServes(t *testing.T) {
	node := peers.Node(t)
	server := peers.NPM(t, "@modelcontextprotocol/server-filesystem/dist/index.js")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "note.txt"), []byte("through the command"), 0o644)
	cfg := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(cfg, []byte(`listen: 127.0.0.1:0
auth:
  development: {scopes: [files:read]}
upstreams:
  - name: files
    prefix: files_
    stdio:
      command: `+node+`
      args: [`+server+`, `+dir+`]
    tools:
      - {remote: read_text_file, title: Read a text file, scopes: [files:read], profile: standard}
`), 0o644)
	if code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg); code != 0 || !strings.Contains(out, "pinned files_read_text_file (new)") {
		t.Fatalf("accept: exit %d, %q %q", code, out, errOut)
	}
	p := proctest.StartCmd(t, proctest.Build(t, "."), "gateway", "-config", cfg)
	url := p.URL

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gateway.files_read_text_file", Arguments: map[string]any{"path": filepath.Join(dir, "note.txt")}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), "through the command") {
		t.Errorf("call result %s", b)
	}
	cs.Close()

	pid := childPID(t, p.Stderr.String())
	p.Signal(syscall.SIGTERM)
	if err, ok := p.Wait(20 * time.Second); !ok || err != nil {
		t.Errorf("agnara gateway after SIGTERM: exited %v, %v\n%s", ok, err, p.Stderr)
	}
	if pid > 0 && syscall.Kill(pid, 0) == nil {
		t.Errorf("the upstream process %d outlived the gateway", pid)
	}
	if !strings.Contains(p.Stderr.String(), `msg="upstream stderr" upstream=files`) {
		t.Errorf("the upstream's stderr is not in the log:\n%s", p.Stderr)
	}
}

// childPID finds the upstream's pid in the gateway's log.
func childPID(t *testing.T, log string) int {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, `msg="upstream process started"`) {
			var pid int
			if i := strings.Index(line, "pid="); i >= 0 {
				for _, r := range line[i+4:] {
					if r < '0' || r > '9' {
						break
					}
					pid = pid*10 + int(r-'0')
				}
			}
			return pid
		}
	}
	t.Errorf("no upstream process in the log:\n%s", log)
	return 0
}

func TestVersion(t *testing.T) {
	code, out, _ := agnara(time.Time{}, "version")
	if code != 0 || out != "agnara-go "+framework.Version+"\n" {
		t.Errorf("version: exit %d, %q", code, out)
	}
}

func TestGatewayGC(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		percent int
		set     bool
	}{
		{nil, 400, true},
		{map[string]string{"GOMEMLIMIT": "256MiB"}, 400, true},
		{map[string]string{"GOGC": "100"}, 0, false},
		{map[string]string{"GOGC": "off"}, 0, false},
		{map[string]string{"GOGC": ""}, 0, false},
	} {
		lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
		if percent, set := gatewayGC(lookup); percent != tc.percent || set != tc.set {
			t.Errorf("env %v: %d %v, want %d %v", tc.env, percent, set, tc.percent, tc.set)
		}
	}
}
