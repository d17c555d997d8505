package gateway_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/gateway"
)

// TestHealthAnswersOnlyLoopbackNames: on a loopback listener /healthz
// answers only loopback Host names, as the MCP endpoint does, so that a
// page on a rebound name learns nothing of the gateway (issue 28).
func TestHealthAnswersOnlyLoopbackNames(t *testing.T) {
	_, url, _ := started(t, gateway.Config{Upstreams: []gateway.Upstream{selfUpstream(t, "self", readTool("pid"))}}, nil)
	base := strings.TrimSuffix(url, "/mcp")
	for _, c := range []struct {
		host   string
		status int
	}{
		{"evil.example", http.StatusMisdirectedRequest},
		{strings.TrimPrefix(base, "http://"), http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+"/healthz", nil)
		req.Host = c.host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status {
			t.Errorf("/healthz as %s: %d %q, want %d", c.host, res.StatusCode, body, c.status)
		}
	}
}
