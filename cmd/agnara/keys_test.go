package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

func agnara(at time.Time, args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = (&cli{stdout: &out, stderr: &errOut, clock: clockAt(at)}).main(args)
	return code, out.String(), errOut.String()
}

func TestKeysGenerateRotateList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.keys")
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

	code, out, errOut := agnara(t0, "keys", "generate", "-o", path)
	if code != 0 || !strings.Contains(out, "current key k20261201T090000Z") {
		t.Fatalf("generate: exit %d, %q %q", code, out, errOut)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("generated file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	first, err := requeststate.ReadKeyFile(path)
	if err != nil || len(first) != 1 {
		t.Fatalf("generated file holds %d keys: %v", len(first), err)
	}

	// Generating over an existing file is refused, and changes nothing.
	code, _, errOut = agnara(t0, "keys", "generate", "-o", path)
	if code != 1 || !strings.Contains(errOut, "exists") || !strings.Contains(errOut, "agnara keys rotate") {
		t.Errorf("generate over a file: exit %d, %q", code, errOut)
	}
	if again, _ := requeststate.ReadKeyFile(path); !bytes.Equal(again[0].Secret, first[0].Secret) {
		t.Error("a refused generate replaced the key")
	}

	// Rotation adds a current key and keeps the old one for opening.
	code, out, errOut = agnara(t0.Add(time.Minute), "keys", "rotate", path)
	if code != 0 || !strings.Contains(out, "current key k20261201T090100Z") || strings.Contains(out, "dropped") {
		t.Fatalf("rotate: exit %d, %q %q", code, out, errOut)
	}
	rotated, err := requeststate.ReadKeyFile(path)
	if err != nil || len(rotated) != 2 || rotated[1].ID != first[0].ID || !bytes.Equal(rotated[1].Secret, first[0].Secret) {
		t.Fatalf("after rotate: %d keys, %v", len(rotated), err)
	}

	// list shows ids and roles, never a secret.
	code, out, _ = agnara(t0, "keys", "list", path)
	if code != 0 || !strings.Contains(out, "k20261201T090100Z  seals, opens") || !strings.Contains(out, "k20261201T090000Z  opens         2026-12-01T09:01:00Z") {
		t.Errorf("list: exit %d\n%s", code, out)
	}
	raw, _ := os.ReadFile(path)
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(line, "#") && strings.Contains(out, f[1]) {
			t.Errorf("list printed the secret of %s", f[0])
		}
	}

	// Staging adds a key that opens only; the next rotation makes it current.
	code, out, errOut = agnara(t0.Add(time.Hour), "keys", "stage", path)
	if code != 0 || !strings.Contains(out, "staged k20261201T100000Z") {
		t.Fatalf("stage: exit %d, %q %q", code, out, errOut)
	}
	if code, out, _ = agnara(t0, "keys", "list", path); code != 0 || !strings.Contains(out, "k20261201T100000Z  opens (staged)") {
		t.Errorf("list after stage: exit %d\n%s", code, out)
	}
	if code, _, errOut = agnara(t0.Add(time.Hour), "keys", "stage", path); code != 1 || !strings.Contains(errOut, "staged already") {
		t.Errorf("stage twice: exit %d, %q", code, errOut)
	}
	stagedKeys, _ := requeststate.ReadKeyFile(path)
	code, out, _ = agnara(t0.Add(61*time.Minute), "keys", "rotate", path)
	if code != 0 || !strings.Contains(out, "current key k20261201T100000Z") || !strings.Contains(out, "dropped k20261201T090000Z") {
		t.Fatalf("rotate after stage: exit %d, %q; want the staged key current and the key retired an hour ago dropped", code, out)
	}
	if now, _ := requeststate.ReadKeyFile(path); !bytes.Equal(now[0].Secret, stagedKeys[1].Secret) {
		t.Error("rotate did not make the staged key current")
	}

	// Past -keep, the retired keys are dropped.
	code, out, _ = agnara(t0.Add(3*time.Hour), "keys", "rotate", path, "-keep", "30m")
	if code != 0 || !strings.Contains(out, "dropped k20261201T090100Z") {
		t.Errorf("rotate past keep: exit %d, %q", code, out)
	}
	if keys, _ := requeststate.ReadKeyFile(path); len(keys) != 2 {
		t.Errorf("after dropping one key, %d keys, want 2", len(keys))
	}
}

func TestKeysRefusesMistakes(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.keys")
	if err := os.WriteFile(bad, []byte("k1 not-a-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.keys")
	if code, _, errOut := agnara(time.Now(), "keys", "generate", "-o", good); code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no group", nil, "usage: agnara <group>"},
		{"unknown group", []string{"secrets"}, `unknown command group "secrets"`},
		{"no command", []string{"keys"}, "missing command"},
		{"unknown command", []string{"keys", "delete"}, `unknown command "delete"`},
		{"generate without -o", []string{"keys", "generate"}, "-o FILE is required"},
		{"generate with a positional", []string{"keys", "generate", "x"}, "give the file with -o"},
		{"generate into a missing directory", []string{"keys", "generate", "-o", filepath.Join(dir, "no", "such")}, "writing key file"},
		{"rotate without a file", []string{"keys", "rotate"}, "key file to rotate is required"},
		{"stage without a file", []string{"keys", "stage"}, "key file is required"},
		{"rotate a missing file", []string{"keys", "rotate", filepath.Join(dir, "missing")}, "no such file"},
		{"rotate a malformed file", []string{"keys", "rotate", bad}, `line 1: key "k1": the secret must be 32 bytes`},
		{"rotate with a negative keep", []string{"keys", "rotate", good, "-keep", "-1h"}, "negative keep"},
		{"list two files", []string{"keys", "list", bad, bad}, "unexpected argument"},
		{"unknown flag", []string{"keys", "list", "-x", bad}, "flag provided but not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := agnara(time.Now(), tc.args...)
			if code != 1 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", code, errOut, tc.want)
			}
		})
	}
	if raw, _ := os.ReadFile(bad); string(raw) != "k1 not-a-secret\n" {
		t.Error("a refused rotate changed the file")
	}
	for _, args := range [][]string{{"help"}, {"keys", "help"}, {"keys", "rotate", "-h"}} {
		if code, out, _ := agnara(time.Now(), args...); code != 0 || !strings.Contains(out, "usage: agnara") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
}
