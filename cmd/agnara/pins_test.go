package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/proctest"
)

// TestGatewayDiffAndAccept is the operator's review, with the commands:
// `agnara gateway diff` shows every bound tool of the users example not
// yet pinned and exits 1; `accept -tool` pins one, leaving the other
// held; the gateway serves only the pinned one until `accept` pins the
// other and SIGHUP makes it re-read the lock file; a changed binding shows
// in diff as what changed; a name the config does not bind is refused with
// nothing written.
func TestGatewayDiffAndAccept(t *testing.T) {
	users := startUsers(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	config := `listen: 127.0.0.1:0
auth:
  development: {scopes: [directory:read]}
upstreams:
  - name: directory
    http: {url: ` + users + `}
    tools:
      - {remote: users.get_user, name: get_user, title: Get a user, scopes: [directory:read]}
      - {remote: users.list_users, name: list_users, title: List the users, scopes: [directory:read]}
`
	os.WriteFile(cfg, []byte(config), 0o644)
	lock := filepath.Join(dir, "gateway.lock")

	code, out, errOut := agnara(time.Time{}, "gateway", "diff", "-config", cfg)
	for _, w := range []string{"get_user (upstream directory, remote users.get_user): not pinned: held until accepted\n",
		"list_users (upstream directory, remote users.list_users): not pinned: held until accepted\n", "  description:\n    + "} {
		if code != 1 || !strings.Contains(out, w) {
			t.Errorf("diff without a lock: exit %d, want 1 and %q in\n%s%s", code, w, out, errOut)
		}
	}
	if _, err := os.Stat(lock); err == nil {
		t.Error("diff wrote the lock file")
	}

	code, out, errOut = agnara(time.Time{}, "gateway", "accept", "-config", cfg, "-tool", "get_user")
	if code != 0 || !strings.Contains(out, "pinned get_user (new)\n") ||
		!strings.Contains(out, "left list_users as it was (gateway_definition_unaccepted; not named by -tool)\n") || !strings.Contains(out, "wrote "+lock+": 1 pins") {
		t.Fatalf("accept -tool get_user: exit %d, %q %q", code, out, errOut)
	}

	p := proctest.StartCmd(t, proctest.Build(t, "."), "gateway", "-config", cfg)
	list := func() string {
		t.Helper()
		code, out, errOut := tools(t, "list", p.URL)
		if code != 0 {
			t.Fatalf("list: exit %d, %q %q", code, out, errOut)
		}
		return out
	}
	if out := list(); !strings.Contains(out, ": 1 tools\n") || !strings.Contains(out, "gateway.get_user ") {
		t.Errorf("served before list_users is accepted:\n%s", out)
	}
	code, _, errOut = tools(t, "call", p.URL, "gateway.list_users")
	if code != 1 || !strings.Contains(errOut, "unavailable (gateway_definition_unaccepted)") {
		t.Errorf("the unaccepted tool: exit %d, %q", code, errOut)
	}

	if code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg); code != 0 || !strings.Contains(out, "pinned list_users (new)\n") {
		t.Fatalf("accept: exit %d, %q %q", code, out, errOut)
	}
	p.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(list(), ": 2 tools\n") {
		if time.Now().After(deadline) {
			t.Fatalf("list_users is not served after accept and SIGHUP:\n%s", p.Stderr)
		}
		time.Sleep(50 * time.Millisecond) // polling the gateway's list, not waiting for time
	}
	if code, out, _ := agnara(time.Time{}, "gateway", "diff", "-config", cfg); code != 0 || !strings.Contains(out, "pins every bound tool as its upstream offers it") {
		t.Errorf("diff after accept: exit %d, %q", code, out)
	}

	os.WriteFile(cfg, []byte(strings.Replace(config, "title: Get a user", "title: Get one user", 1)), 0o644)
	code, out, _ = agnara(time.Time{}, "gateway", "diff", "-config", cfg)
	if code != 1 || !strings.Contains(out, "get_user (upstream directory, remote users.get_user): changed: policy\n") ||
		!strings.Contains(out, `-   "title": "Get a user"`) || !strings.Contains(out, `+   "title": "Get one user"`) {
		t.Errorf("diff of a changed binding: exit %d, %q", code, out)
	}
	before, _ := os.ReadFile(lock)
	code, _, errOut = agnara(time.Time{}, "gateway", "accept", "-config", cfg, "-tool", "nosuch")
	after, _ := os.ReadFile(lock)
	if code != 1 || !strings.Contains(errOut, `nothing written: "nosuch" binds no tool of the config`) || string(before) != string(after) {
		t.Errorf("accept -tool nosuch: exit %d, %q; lock changed: %v", code, errOut, string(before) != string(after))
	}
}

// TestAcceptFailsWhenADefinitionCannotBeRead: accept pins what it can read,
// but exits 1 and says to run it again when a bound tool's upstream cannot
// be reached (as on a first run while npx downloads a server), so that a
// script does not take a lock without that tool for done.
func TestAcceptFailsWhenADefinitionCannotBeRead(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	os.WriteFile(cfg, []byte(`listen: 127.0.0.1:0
auth:
  development: {scopes: [files:read]}
upstreams:
  - name: gone
    stdio: {command: `+filepath.Join(dir, "no-such-server")+`}
    tools:
      - {remote: read, title: Read, scopes: [files:read], profile: standard}
`), 0o644)
	code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg)
	if code != 1 || !strings.Contains(out, "could not pin read: its definition could not be read (mcp_connect_failed)") || !strings.Contains(errOut, "run accept again") {
		t.Fatalf("accept of an unreachable upstream: exit %d, want 1 and the advice to run it again; %q %q", code, out, errOut)
	}
}
