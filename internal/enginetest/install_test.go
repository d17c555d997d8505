package enginetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAptInstallWaitsForTheLock runs .ci/apt-install (what `make engines`
// installs with) against a stand-in apt-get on PATH: the real one would
// change this machine's packages and needs root, and a held lock cannot be
// arranged on demand without racing the system's own apt. The stand-in
// answers with apt-get's lock error the first N times, then succeeds, and
// records each call.
func TestAptInstallWaitsForTheLock(t *testing.T) {
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "apt-install"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		locked   int    // calls answered with the lock error
		other    string // an error other than the lock's, at the first call
		wait     string // APT_LOCK_WAIT
		ok       bool
		calls    int
		wantText string
	}{
		{name: "waits while the lock is held", locked: 3, wait: "60", ok: true, calls: 5},
		{name: "free lock", locked: 0, wait: "60", ok: true, calls: 2},
		{name: "another error fails at once", other: "E: Unable to locate package nosuch", wait: "60", ok: false, calls: 1, wantText: "Unable to locate package"},
		{name: "gives up after APT_LOCK_WAIT", locked: 1000, wait: "0", ok: false, calls: 1, wantText: "Could not get lock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(dir, "calls")
			stub := `#!/bin/sh
echo "$*" >> "` + log + `"
n=$(wc -l < "` + log + `")
if [ -n "$OTHER" ]; then echo "$OTHER" >&2; exit 100; fi
if [ "$n" -le "$LOCKED" ]; then
	echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
	echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
	exit 100
fi
`
			if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(script, "redis-server", "haproxy")
			cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"),
				"LOCKED="+strconv.Itoa(tc.locked), "OTHER="+tc.other, "APT_LOCK_WAIT="+tc.wait, "APT_LOCK_POLL=0")
			out, err := cmd.CombinedOutput()
			if (err == nil) != tc.ok {
				t.Fatalf("apt-install: err %v, want ok=%v\n%s", err, tc.ok, out)
			}
			if tc.wantText != "" && !strings.Contains(string(out), tc.wantText) {
				t.Errorf("output lacks %q:\n%s", tc.wantText, out)
			}
			b, _ := os.ReadFile(log)
			calls := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(calls) != tc.calls {
				t.Fatalf("apt-get called %d times, want %d: %q", len(calls), tc.calls, calls)
			}
			if tc.ok {
				if last := calls[len(calls)-1]; !strings.Contains(last, "install") || !strings.HasSuffix(last, "redis-server haproxy") {
					t.Errorf("last call %q, want the install of both packages", last)
				}
				if tc.locked > 0 && !strings.Contains(string(out), "waiting for it") {
					t.Errorf("apt-install did not say it waits:\n%s", out)
				}
			}
		})
	}
}
