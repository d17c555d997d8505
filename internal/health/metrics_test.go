package health

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
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

// TestMetricsAddressTaken: a default address another process holds is a
// warning and no listener (the server still starts); an address the
// operator set that is taken is an error naming the flag.
func TestMetricsAddressTaken(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	noop := http.NotFoundHandler()

	var log bytes.Buffer
	stopped, err := ServeMetrics(context.Background(), &MetricsFlag{Default: held.Addr().String()}, noop, slog.New(slog.NewTextHandler(&log, nil)))
	if err != nil {
		t.Fatalf("a taken default address: %v, want a warning only", err)
	}
	<-stopped // closed at once: nothing is served
	if !strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), "metrics not served") {
		t.Errorf("a taken default address logged %q, want the warning", log.String())
	}

	f := &MetricsFlag{}
	f.Set(held.Addr().String())
	if _, err := ServeMetrics(context.Background(), f, noop, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "-metrics-addr") {
		t.Errorf("a taken address the operator set: %v, want an error naming -metrics-addr", err)
	}
}
