package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestThreeCommandFlow runs the README's flow with the real programs: the
// development issuer, the users example with -issuer, and this client,
// which gets a token, calls a users:read tool, and is refused a users:admin
// tool with the 403 step-up challenge.
func TestThreeCommandFlow(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"devissuer", "users"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, p), "../"+p).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", p, err, out)
		}
	}
	issuerURL := startProgram(t, filepath.Join(dir, "devissuer"), "-addr", "127.0.0.1:0")
	mcpURL := startProgram(t, filepath.Join(dir, "users"), "-addr", "127.0.0.1:0", "-issuer", issuerURL)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base := config{Issuer: issuerURL, MCP: mcpURL, ClientID: "demo", ClientSecret: "demo-secret", Scope: "users:read", Args: "{}"}

	var out bytes.Buffer
	read := base
	read.Tool = "users.list_users"
	if err := run(ctx, read, &out); err != nil {
		t.Fatalf("users:read call: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "protocol: 2026-07-28") || !strings.Contains(out.String(), `{"result":[]}`) {
		t.Errorf("users:read call printed:\n%s", out.String())
	}

	out.Reset()
	admin := base
	admin.Tool, admin.Args = "users.delete_user", `{"id":"1"}`
	err := run(ctx, admin, &out)
	var refused *refusedError
	if !errors.As(err, &refused) || refused.StatusCode != 403 {
		t.Fatalf("users:admin call with a users:read token = %v, want the 403 refusal\n%s", err, out.String())
	}
	want := `Bearer error="insufficient_scope", scope="users:admin", resource_metadata="` + strings.TrimSuffix(mcpURL, "/mcp") + `/.well-known/oauth-protected-resource/mcp"`
	if len(refused.WWWAuthenticate) != 1 || refused.WWWAuthenticate[0] != want {
		t.Errorf("challenge = %q, want %q", refused.WWWAuthenticate, want)
	}
}

// startProgram starts a program that prints its URL on its first line of
// output, and stops it when the test ends.
func startProgram(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		if s.Scan() {
			line <- strings.TrimSpace(s.Text())
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case url := <-line:
		return url
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start within 30s", filepath.Base(bin))
	}
	return ""
}
