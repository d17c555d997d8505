package mcpexpose_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
)

var update = flag.Bool("update", false, "rewrite the golden wire files in testdata")

// TestGoldenWire replays each testdata/*.txtar exchange against the fixture
// server over HTTP at 2026-07-28 and compares the status (with any
// WWW-Authenticate challenge) and the JSON-RPC response with the file.
// Sections: "token" (optional bearer token), "request" (the JSON-RPC
// request), "status" and "response" (golden).
func TestGoldenWire(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden wire files: %v", err)
	}
	f := newFixture(t)
	srv := serve(t, f, &mcpexpose.HandlerOptions{
		Tokens:   tokens,
		Server:   &mcpexpose.ServerOptions{Identity: mapper},
		Resource: &mcpexpose.Resource{URL: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://issuer.test"}},
	})
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar := readArchive(t, file)
			req, _ := http.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(ar.get("request")))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(ar.get("request")), &msg); err != nil {
				t.Fatalf("request is not JSON: %v", err)
			}
			req.Header.Set("Mcp-Method", msg.Method)
			if msg.Params.Name != "" {
				req.Header.Set("Mcp-Name", msg.Params.Name)
			}
			if tok := strings.TrimSpace(ar.get("token")); tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got := responseMessage(t, resp.Header.Get("Content-Type"), body)
			status := strconv.Itoa(resp.StatusCode) + "\n"
			if c := resp.Header.Get("WWW-Authenticate"); c != "" {
				status += "WWW-Authenticate: " + c + "\n"
			}
			if *update {
				ar.set("status", status)
				ar.set("response", got)
				if err := os.WriteFile(file, ar.bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if ar.get("status") != status || ar.get("response") != got {
				t.Errorf("%s: got status %s and response:\n%s\nwant status %s and response:\n%s", file, status, got, ar.get("status"), ar.get("response"))
			}
		})
	}
}

// responseMessage extracts the JSON-RPC response from a JSON or SSE body and
// indents it.
func responseMessage(t *testing.T, contentType string, body []byte) string {
	t.Helper()
	data := mcptest.Message(contentType, body)
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(data), "", "  "); err != nil {
		t.Fatalf("response is not JSON (%s): %q", contentType, body)
	}
	return buf.String() + "\n"
}

// archive is a minimal txtar: a comment, then "-- name --" sections.
type archive struct {
	comment string
	names   []string
	files   map[string]string
}

func readArchive(t testing.TB, path string) *archive {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ar := &archive{files: map[string]string{}}
	cur := ""
	var sb strings.Builder
	flush := func() {
		if cur == "" {
			ar.comment = sb.String()
		} else {
			ar.files[cur] = sb.String()
		}
		sb.Reset()
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		trimmed := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(trimmed, "-- ") && strings.HasSuffix(trimmed, " --") && len(trimmed) > 6 {
			flush()
			cur = strings.TrimSuffix(strings.TrimPrefix(trimmed, "-- "), " --")
			ar.names = append(ar.names, cur)
			continue
		}
		sb.WriteString(line)
	}
	flush()
	return ar
}

func (a *archive) get(name string) string { return a.files[name] }

func (a *archive) set(name, content string) {
	if _, ok := a.files[name]; !ok {
		a.names = append(a.names, name)
	}
	a.files[name] = content
}

func (a *archive) bytes() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, n := range a.names {
		fmt.Fprintf(&b, "-- %s --\n%s", n, a.files[n])
	}
	return b.Bytes()
}
