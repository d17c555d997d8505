package prommcp

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"go.yaml.in/yaml/v3"
)

// registered returns the name of every metric the package can register,
// and which of them are histograms.
func registered(t *testing.T) (names []string, histograms map[string]bool) {
	t.Helper()
	m, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	u := newUpstreamMetrics(nil, nil)
	cs := append(m.serverCollectors(), loadCollector{}, newBuildInfo(), pendingCollector{}, &decidedCollector{},
		m.approvals.decided, m.approvals.errors, m.tasks.statuses, m.tasks.errors, u, u.duration)
	cs = append(cs, m.approvals.dispatchCollectors()...)
	ch := make(chan *prometheus.Desc, 100)
	for _, c := range cs {
		c.Describe(ch)
	}
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	histograms = map[string]bool{"agnara_mcp_call_duration_seconds": true, "agnara_gateway_upstream_call_duration_seconds": true}
	for d := range ch {
		name := fq.FindStringSubmatch(d.String())
		if name == nil {
			t.Fatalf("no name in %s", d)
		}
		names = append(names, name[1])
	}
	slices.Sort(names)
	names = slices.Compact(names)
	for h := range histograms {
		if !slices.Contains(names, h) {
			t.Fatalf("the histogram %s is not registered", h)
		}
	}
	return names, histograms
}

// used returns the metric names text mentions (a histogram's series by
// its own name), sorted, once each.
func used(text string, histograms map[string]bool) []string {
	var names []string
	for _, n := range regexp.MustCompile(`agnara_[a-z_]+`).FindAllString(text, -1) {
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(n, suffix); ok && histograms[base] {
				n = base
			}
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestDashboardAndDocsNameRegisteredMetrics ties the dashboard, the alert
// rules and the metrics table of docs/operating.md to the package: every
// expression of the dashboard and of the alerts names only metrics the
// package registers, and the table lists exactly those, so that none can
// drift from the code. (`make test` also runs promtool check rules on the
// alerts.)
func TestDashboardAndDocsNameRegisteredMetrics(t *testing.T) {
	names, histograms := registered(t)
	for _, n := range names {
		if !strings.HasPrefix(n, Namespace+"_") {
			t.Errorf("%s lacks the prefix %s_", n, Namespace)
		}
	}

	raw, err := os.ReadFile("../docs/grafana/agnara.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct {
				Definition string
			}
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("docs/grafana/agnara.json: %v", err)
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
			if len(used(tg.Expr, histograms)) == 0 {
				t.Errorf("panel %q: the expression %q names no agnara metric", p.Title, tg.Expr)
			}
		}
	}
	for _, v := range dash.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	for _, n := range used(strings.Join(exprs, "\n"), histograms) {
		if !slices.Contains(names, n) {
			t.Errorf("the dashboard names %s, which the package does not register", n)
		}
	}

	raw, err = os.ReadFile("../docs/prometheus/alerts.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert       string
				Expr        string
				Labels      map[string]string
				Annotations map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatalf("docs/prometheus/alerts.yml: %v", err)
	}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts++
			named := used(r.Expr, histograms)
			if len(named) == 0 {
				t.Errorf("alert %s: the expression %q names no agnara metric", r.Alert, r.Expr)
			}
			for _, n := range named {
				if !slices.Contains(names, n) {
					t.Errorf("alert %s names %s, which the package does not register", r.Alert, n)
				}
			}
			if !slices.Contains([]string{"critical", "warning", "info"}, r.Labels["severity"]) || r.Annotations["summary"] == "" {
				t.Errorf("alert %s: want a severity (critical, warning, info) and a summary", r.Alert)
			}
		}
	}
	if alerts == 0 {
		t.Error("docs/prometheus/alerts.yml holds no alert")
	}

	doc, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for line := range strings.Lines(string(doc)) {
		if n, ok := strings.CutPrefix(line, "| `agnara_"); ok {
			table = append(table, "agnara_"+n[:strings.Index(n, "`")])
		}
	}
	slices.Sort(table)
	if diff := cmp.Diff(names, table); diff != "" {
		t.Errorf("docs/operating.md's metrics table against the registered metrics (-registered +table):\n%s", diff)
	}
}
