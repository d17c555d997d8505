package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agnara-go/agnara/internal/proctest"
)

// TestSideRoutesAnswerOnlyLoopbackNames: the routes beside the MCP
// endpoints of the users example (/healthz, /debug/*) and of this gateway
// (/healthz, /debug/vars, which shows the command line and so any
// PostgreSQL password on it) answer only loopback Host names on a loopback
// listener: a page on a rebound name reads none of them (issue 28).
func TestSideRoutesAnswerOnlyLoopbackNames(t *testing.T) {
	usersURL := proctest.Start(t, proctest.Build(t, "../users"), "-addr", "127.0.0.1:0", "-debug-goroutines")
	gwURL := proctest.Start(t, proctest.Build(t, "."), "-addr", "127.0.0.1:0", "-upstream", usersURL)
	users, gw := strings.TrimSuffix(usersURL, "/mcp"), strings.TrimSuffix(gwURL, "/mcp")
	for _, u := range []string{
		users + "/healthz", users + "/debug/goroutines", users + "/debug/heap", users + "/debug/pprof/heap",
		gw + "/healthz", gw + "/debug/vars",
	} {
		own := strings.TrimPrefix(u, "http://")
		own = own[:strings.IndexByte(own, '/')]
		for _, c := range []struct {
			host   string
			status int
		}{
			{"evil.example", http.StatusMisdirectedRequest},
			{"evil.example:" + own[strings.LastIndexByte(own, ':')+1:], http.StatusMisdirectedRequest},
			{own, http.StatusOK},
		} {
			req, _ := http.NewRequest(http.MethodGet, u, nil)
			req.Host = c.host
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status {
				t.Errorf("%s as %s: %d, want %d", u, c.host, res.StatusCode, c.status)
			}
			if c.status != http.StatusOK && strings.Contains(string(body), "cmdline") {
				t.Errorf("%s as %s: the refusal shows the variables", u, c.host)
			}
		}
	}
}
