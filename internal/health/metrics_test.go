package health

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"testing"
)

// TestMetricsListenerAnswersOnlyLoopbackNames: the metrics listener on a
// loopback address serves /metrics to loopback names only, as the MCP
// endpoint does, so that a rebound name cannot read them from a browser.
func TestMetricsListenerAnswersOnlyLoopbackNames(t *testing.T) {
	var log bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	f := &MetricsFlag{}
	f.Set("127.0.0.1:0")
	stopped, err := ServeMetrics(ctx, f, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "agnara_up 1\n")
	}), slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-stopped })
	m := regexp.MustCompile(`url=(http://127\.0\.0\.1:\d+)/metrics`).FindStringSubmatch(log.String())
	if m == nil {
		t.Fatalf("the log does not say where metrics are served:\n%s", log.String())
	}
	for _, tc := range []struct {
		host string
		want int
	}{
		{"", http.StatusOK}, // the listener's own 127.0.0.1:port
		{"localhost", http.StatusOK},
		{"metrics.attacker.example", http.StatusMisdirectedRequest},
	} {
		req, err := http.NewRequest(http.MethodGet, m[1]+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want || (tc.want == http.StatusOK) != bytes.Contains(body, []byte("agnara_up 1")) {
			t.Errorf("Host %q: %d %q, want %d (and the metrics only with 200)", tc.host, resp.StatusCode, body, tc.want)
		}
	}
}
