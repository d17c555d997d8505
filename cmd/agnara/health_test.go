package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/internal/enginetest"
	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/google/go-cmp/cmp"
)

// fetch sends a request and returns its response and body; cookies are
// sent with it, redirects are not followed.
func fetch(t *testing.T, method, rawURL string, form url.Values, cookies []*http.Cookie) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// sample returns the value of the series named exactly series in a
// Prometheus text exposition, and whether it is there.
func sample(exposition, series string) (float64, bool) {
	for line := range strings.Lines(exposition) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// families returns the names of the agnara_ metrics an exposition holds,
// sorted: what a binary exports.
func families(exposition string) []string {
	var names []string
	for line := range strings.Lines(exposition) {
		if f := strings.Fields(line); len(f) == 4 && f[1] == "TYPE" && strings.HasPrefix(f[2], "agnara_") {
			names = append(names, f[2])
		}
	}
	slices.Sort(names)
	return names
}

// scrapeUntil scrapes url until series has the value want, for at most
// 30 seconds (a count of decisions is reused for 5), and returns that
// scrape.
func scrapeUntil(t *testing.T, url, series string, want float64) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, body := fetch(t, "GET", url, nil, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", url, res.StatusCode)
		}
		if v, ok := sample(body, series); ok && v == want {
			return body
		}
		if time.Now().After(deadline) {
			v, ok := sample(body, series)
			t.Fatalf("%s = %v (present %v) for 30 s, want %v\n%s", series, v, ok, want, body)
		}
		time.Sleep(100 * time.Millisecond) // polling, as Prometheus does
	}
}

// TestApprovalsServeHealthAndMetrics: the inbox serves /healthz and
// /readyz (naming its database) beside its pages, and its approvals'
// metrics on their own address, and no others: a decision made in the
// inbox moves them.
func TestApprovalsServeHealthAndMetrics(t *testing.T) {
	db := filepath.Join(t.TempDir(), "approvals.db")
	s, err := approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Prepare(context.Background(), intent(t, "k1", "gw.update_document", "carol", `{"id":42}`))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	metrics := "http://127.0.0.1:" + strconv.Itoa(enginetest.FreePort(t)) + "/metrics"
	p := proctest.StartCmd(t, proctest.Build(t, "."), "approvals", "serve", "-db", db, "-dev-approver", "alice", "-addr", "127.0.0.1:0",
		"-metrics-addr", strings.TrimSuffix(strings.TrimPrefix(metrics, "http://"), "/metrics"))
	base := strings.TrimSuffix(p.URL, "/")

	if res, body := fetch(t, "GET", base+"/healthz", nil, nil); res.StatusCode != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q", res.StatusCode, body)
	}
	if res, body := fetch(t, "GET", base+"/readyz", nil, nil); res.StatusCode != http.StatusOK || body != "ready\nsqlite: ok\n" {
		t.Errorf("/readyz = %d %q", res.StatusCode, body)
	}
	scrape := func() string {
		t.Helper()
		res, body := fetch(t, "GET", metrics, nil, nil)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("/metrics: %d", res.StatusCode)
		}
		return body
	}
	before := scrape()
	if v, ok := sample(before, "agnara_approvals_pending"); !ok || v != 1 {
		t.Errorf("agnara_approvals_pending before the decision = %v (present %v), want 1", v, ok)
	}

	res, body := fetch(t, "GET", base+"/approvals/"+a.ID, nil, nil)
	token := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
	if res.StatusCode != http.StatusOK || token == nil {
		t.Fatalf("GET the approval: %d\n%s", res.StatusCode, body)
	}
	if res, _ := fetch(t, "POST", base+"/approvals/"+a.ID+"/decide", url.Values{"action": {"approve"}, "csrf": {token[1]}}, res.Cookies()); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the decision: %d", res.StatusCode)
	}
	after := scrapeUntil(t, metrics, `agnara_approvals_decided_total{decision="approved"}`, 1)
	for series, want := range map[string]float64{`agnara_approvals_pending`: 0, `agnara_approvals_decided_total{decision="rejected"}`: 0} {
		if v, ok := sample(after, series); !ok || v != want {
			t.Errorf("%s after the decision = %v (present %v), want %v", series, v, ok, want)
		}
	}
	// The inbox decides: it serves no MCP and dispatches nothing.
	if diff := cmp.Diff([]string{"agnara_approvals_decided_total", "agnara_approvals_oldest_pending_age_seconds", "agnara_approvals_pending",
		"agnara_build_info"}, families(after)); diff != "" {
		t.Errorf("the inbox's series (-want +got):\n%s", diff)
	}
}

// TestGatewayServesMetricsAndReadiness runs `agnara gateway` with
// -metrics-addr in front of the users example: a call through it is
// counted under its tool and its upstream, the upstream's state is read
// at the scrape, and /readyz names the upstream.
func TestGatewayServesMetricsAndReadiness(t *testing.T) {
	users := startUsers(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(`listen: 127.0.0.1:0
auth:
  development: {scopes: [directory:read]}
upstreams:
  - name: directory
    http: {url: `+users+`}
    tools:
      - {remote: users.list_users, name: list_users, title: List the users, scopes: [directory:read]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg); code != 0 {
		t.Fatalf("accept: exit %d, %q %q", code, out, errOut)
	}
	addr := "127.0.0.1:" + strconv.Itoa(enginetest.FreePort(t))
	p := proctest.StartCmd(t, proctest.Build(t, "."), "gateway", "-config", cfg, "-metrics-addr", addr)
	if code, out, errOut := tools(t, "call", p.URL, "gateway.list_users", `{"limit":1}`); code != 0 {
		t.Fatalf("call: exit %d, %q %q", code, out, errOut)
	}
	if res, body := fetch(t, "GET", strings.TrimSuffix(p.URL, "/mcp")+"/readyz", nil, nil); res.StatusCode != http.StatusOK || body != "ready\nupstream directory: ok\nupstreams: ok\n" {
		t.Errorf("/readyz = %d %q", res.StatusCode, body)
	}
	res, body := fetch(t, "GET", "http://"+addr+"/metrics", nil, nil)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", res.StatusCode)
	}
	for series, want := range map[string]float64{
		`agnara_mcp_calls_total{outcome="ok",reason="",tool="gateway.list_users"}`:  1,
		`agnara_gateway_upstream_call_duration_seconds_count{upstream="directory"}`: 1,
		`agnara_gateway_upstream_state{state="up",upstream="directory"}`:            1,
		`agnara_gateway_upstream_state{state="down",upstream="directory"}`:          0,
		`agnara_gateway_upstream_connections_total{upstream="directory"}`:           1,
		`agnara_gateway_upstream_swaps_total{upstream="directory"}`:                 0,
		`agnara_mcp_sessions_max`: 1000,
	} {
		if v, ok := sample(body, series); !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", series, v, ok, want)
		}
	}
	// A gateway without approvals has no approval series, and none of tasks.
	if diff := cmp.Diff(slices.Concat([]string{"agnara_build_info", "agnara_gateway_upstream_call_duration_seconds"}, gatewayUpstreamSeries,
		[]string{"agnara_mcp_call_duration_seconds", "agnara_mcp_calls_total"}, serverSeries), families(body)); diff != "" {
		t.Errorf("the gateway's series (-want +got):\n%s", diff)
	}
}

// The series every MCP server exports from its start, and a gateway's of
// its upstreams, sorted.
var (
	serverSeries = []string{"agnara_mcp_rate_limited_total", "agnara_mcp_refused_total", "agnara_mcp_replay_store_errors_total",
		"agnara_mcp_request_state_refused_total", "agnara_mcp_sessions", "agnara_mcp_sessions_max", "agnara_mcp_streams", "agnara_mcp_streams_max"}
	gatewayUpstreamSeries = []string{"agnara_gateway_upstream_connections_total", "agnara_gateway_upstream_state", "agnara_gateway_upstream_swaps_total"}
)

// TestGatewayReportsDecisionsMadeElsewhere: a gateway with an approval
// store reports the decisions made on it by another process (here two
// approvals by `agnara approvals approve`), read from the store, beside
// its own series and the approvals'.
func TestGatewayReportsDecisionsMadeElsewhere(t *testing.T) {
	users := startUsers(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "approvals.db")
	cfg := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(cfg, []byte(`listen: 127.0.0.1:0
auth:
  development: {scopes: [directory:read]}
approvals: {sqlite: `+db+`}
upstreams:
  - name: directory
    http: {url: `+users+`}
    tools:
      - {remote: users.list_users, name: list_users, title: List the users, scopes: [directory:read]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := agnara(time.Time{}, "gateway", "accept", "-config", cfg); code != 0 {
		t.Fatalf("accept: exit %d, %q %q", code, out, errOut)
	}
	s, err := approval.OpenSQLite(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, key := range []string{"k1", "k2"} {
		a, err := s.Prepare(context.Background(), intent(t, key, "gateway.update_document", "carol", `{"id":42}`))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	s.Close()
	addr := "127.0.0.1:" + strconv.Itoa(enginetest.FreePort(t))
	proctest.StartCmd(t, proctest.Build(t, "."), "gateway", "-config", cfg, "-metrics-addr", addr)
	metrics := "http://" + addr + "/metrics"
	scrapeUntil(t, metrics, `agnara_approvals_pending`, 2)
	for _, id := range ids {
		if code, _, errOut := agnara(time.Now(), "approvals", "approve", id, "-db", db, "-as", "bob"); code != 0 {
			t.Fatalf("approve %s: exit %d, %q", id, code, errOut)
		}
	}
	body := scrapeUntil(t, metrics, `agnara_approvals_decided_total{decision="approved"}`, 2)
	if v, ok := sample(body, `agnara_approvals_pending`); !ok || v != 0 {
		t.Errorf("agnara_approvals_pending = %v (present %v), want 0", v, ok)
	}
	want := slices.Concat([]string{"agnara_approvals_decided_total", "agnara_approvals_dispatched_total", "agnara_approvals_oldest_pending_age_seconds",
		"agnara_approvals_pending", "agnara_build_info"}, gatewayUpstreamSeries, serverSeries)
	if diff := cmp.Diff(want, families(body)); diff != "" {
		t.Errorf("the gateway's series (-want +got):\n%s", diff)
	}
}

// TestApprovalsServeReadinessFollowsPostgres: the inbox on PostgreSQL is
// ready while its database answers, says "postgres: unreachable" (and
// nothing of the driver's error) with 503 while the database cannot be
// reached, its connections cut and new ones refused, and is ready again
// once the database is back on the same address, without a restart.
func TestApprovalsServeReadinessFollowsPostgres(t *testing.T) {
	db := postgresDB(t)
	target, err := url.Parse(db.loc)
	if err != nil {
		t.Fatal(err)
	}
	link := newCuttableLink(t, target.Host)
	target.Host = link.addr
	p := proctest.StartCmd(t, proctest.Build(t, "."), "approvals", "serve", "-postgres", target.String(),
		"-dev-approver", "alice", "-addr", "127.0.0.1:0", "-metrics-addr", "off")
	readyz := strings.TrimSuffix(p.URL, "/") + "/readyz"
	wait := func(status int, body string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			res, got := fetch(t, "GET", readyz, nil, nil)
			if res.StatusCode == status && got == body {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/readyz = %d %q; want %d %q", res.StatusCode, got, status, body)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wait(http.StatusOK, "ready\npostgres: ok\n")
	link.cut()
	wait(http.StatusServiceUnavailable, "not ready\npostgres: unreachable\n")
	link.restore()
	wait(http.StatusOK, "ready\npostgres: ok\n")
}

// cuttableLink forwards a loopback address to another, until cut: then
// its connections are closed and new ones refused, as when a database
// goes away, until restored on the same address.
type cuttableLink struct {
	t      *testing.T
	addr   string // what clients dial
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

func newCuttableLink(t *testing.T, target string) *cuttableLink {
	l := &cuttableLink{t: t, addr: "127.0.0.1:" + strconv.Itoa(enginetest.FreePort(t)), target: target}
	l.restore()
	t.Cleanup(l.cut)
	return l
}

func (l *cuttableLink) restore() {
	l.t.Helper()
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		l.t.Fatal(err)
	}
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.DialTimeout("tcp", l.target, 5*time.Second)
			if err != nil {
				in.Close()
				continue
			}
			l.mu.Lock()
			if l.ln != ln { // cut meanwhile
				l.mu.Unlock()
				in.Close()
				out.Close()
				return
			}
			l.conns = append(l.conns, in, out)
			l.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
}

func (l *cuttableLink) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}
