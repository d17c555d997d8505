package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/bench/load"
)

func TestReport(t *testing.T) {
	o := options{eras: []string{load.Modern, load.Legacy}, conc: []int{1, 8}, servers: []string{"agnara", "sdk"}, reps: 2, duration: time.Second, warmup: time.Second,
		workloads: []string{load.Echo}}
	rep := &Report{Meta: meta(o, 100, "")}
	for _, era := range o.eras {
		for _, c := range o.conc {
			for r := 1; r <= o.reps; r++ {
				for _, s := range o.servers {
					calls := 1000 * r
					if s == "agnara" {
						calls = 900 * r
					}
					run := Run{Server: s, Workload: load.Echo, Era: era, Concurrency: c, Rep: r, CPUTicks: int64(100 * r), RSSBytes: 10 << 20,
						Result: load.Result{Calls: calls, Window: time.Second, ReqPerSec: float64(calls), P50: time.Millisecond, P99: 2 * time.Millisecond}}
					run.derive(100)
					rep.Runs = append(rep.Runs, run)
				}
			}
		}
	}
	rep.summarize(o)
	if len(rep.Summary) != 8 {
		t.Fatalf("%d summary rows", len(rep.Summary))
	}
	for _, s := range rep.Summary {
		// sdk: 1000 µs/call in both reps; agnara: 1111.1 µs/call.
		if s.Reps != 2 || s.RSSMiB != 10 || s.P50Us != 1000 {
			t.Errorf("summary %+v", s)
		}
		switch s.Server {
		case "sdk":
			if s.ReqPerSec != 1500 || s.CPUPerCallUs != 1000 || s.ReqPerSecVsSDK != 1 || s.CPUPerCallVsSDK != 1 {
				t.Errorf("sdk summary %+v", s)
			}
		case "agnara":
			if s.ReqPerSec != 1350 || s.ReqPerSecVsSDK != 0.9 || s.CPUPerCallVsSDK < 1.11 || s.CPUPerCallVsSDK > 1.12 {
				t.Errorf("agnara summary %+v", s)
			}
		}
	}
	md := rep.markdown()
	for _, want := range []string{"| 8 | agnara | 1350 | 1000 | 2000 | 1111.1 | 10.0 | 0.90 | 1.11 | 0% | 0 |", "## echo: legacy", "modern c=1 1.11×"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := rep.writeJSON(filepath.Join(dir, "results.json")); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(dir, "chart.png")
	if err := rep.chart(png); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(png); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Fatalf("chart: %v", err)
	}
}

func TestGatewayReport(t *testing.T) {
	o := options{eras: []string{load.Modern}, conc: []int{1}, gateway: true,
		gatewayEras: []string{load.Modern}, gatewayConc: []int{1, 8}, gatewayReps: 3, duration: time.Second, warmup: time.Second}
	rep := &Report{Meta: meta(o, 100, "")}
	for _, c := range o.gatewayConc {
		for r := 1; r <= o.gatewayReps; r++ {
			// 1000 calls a second; upstream 100 ticks (1000 µs/call) direct and
			// 120 via the gateway, the gateway 80+r ticks.
			direct := GatewayRun{Mode: modeDirect, Era: load.Modern, Concurrency: c, Rep: r, UpstreamTicks: 100,
				Result: load.Result{Calls: 1000, Window: time.Second, ReqPerSec: 1000, P50: time.Millisecond}}
			via := GatewayRun{Mode: modeGateway, Era: load.Modern, Concurrency: c, Rep: r, UpstreamTicks: 120, GatewayTicks: int64(80 + r),
				Result: load.Result{Calls: 1000, Window: time.Second, ReqPerSec: 500, P50: 2 * time.Millisecond}}
			direct.derive(100)
			via.derive(100)
			rep.Gateway = append(rep.Gateway, direct, via)
		}
	}
	rep.summarizeGateway(o)
	if len(rep.GatewaySummary) != 2 {
		t.Fatalf("%d gateway summary rows", len(rep.GatewaySummary))
	}
	for _, s := range rep.GatewaySummary {
		if s.Reps != 3 || s.UpstreamDirectUs != 1000 || s.UpstreamViaUs != 1200 || s.GatewayUs != 820 ||
			s.GatewayVsUpstream != 0.82 || s.UpstreamViaVsDirect != 1.2 || s.AddedVsUpstream < 1.019 || s.AddedVsUpstream > 1.021 {
			t.Errorf("gateway summary %+v", s)
		}
	}
	md := rep.markdown()
	for _, want := range []string{"## Gateway", "| modern | 8 | 1000 | 500 | 1000 | 2000 | 1000.0 | 1200.0 | 820.0 | 0.82 | 1.20 | 1.02 | 0% / 0% / 1% | 0.0 | 0 |", "modern c=1 0.82×", "Before the client half's fast path (main at 666f4b8", "modern c=8 4.21×", "(main at b73d1a6", "modern c=8 3.2–4.0×", "(main at abf3519", "modern c=8 2.7–3.0×", "The target is at most 1× at 8 clients.", "gw ÷ up would be about that: modern c=1 1.20×, modern c=8 1.20×."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if rep.errorRuns() != 0 {
		t.Error("error runs without errors")
	}
	rep.Gateway[3].Errors = 1
	if rep.errorRuns() != 1 {
		t.Error("a gateway run with errors is not counted")
	}

	// Without the gateway measurement (-gateway=false) there is no row of
	// it, and no section.
	rep.Gateway = nil
	rep.summarizeGateway(o)
	if len(rep.GatewaySummary) != 0 || strings.Contains(rep.markdown(), "## Gateway") {
		t.Errorf("a report without gateway runs has %d gateway rows", len(rep.GatewaySummary))
	}
}

// TestProxyReport: with via-proxy runs beside the gateway's, each row
// gains the proxy's CPU per call and the gateway's ratio to it; without
// them, no proxy table.
func TestProxyReport(t *testing.T) {
	o := options{eras: []string{load.Modern}, conc: []int{1}, gateway: true,
		gatewayEras: []string{load.Modern}, gatewayConc: []int{1, 8}, gatewayReps: 3, duration: time.Second, warmup: time.Second}
	rep := &Report{Meta: meta(o, 100, "")}
	for _, c := range o.gatewayConc {
		for r := 1; r <= o.gatewayReps; r++ {
			// 1000 calls; the gateway 80 ticks (800 µs/call), the proxy
			// 60+r (610–630), the upstream 110 behind the proxy.
			result := load.Result{Calls: 1000, Window: time.Second, ReqPerSec: 1000, P50: time.Millisecond}
			runs := []GatewayRun{
				{Mode: modeDirect, Era: load.Modern, Concurrency: c, Rep: r, UpstreamTicks: 100, Result: result},
				{Mode: modeGateway, Era: load.Modern, Concurrency: c, Rep: r, UpstreamTicks: 120, GatewayTicks: 80, Result: result},
				{Mode: modeProxy, Era: load.Modern, Concurrency: c, Rep: r, UpstreamTicks: 110, GatewayTicks: int64(60 + r), Result: result},
				{Mode: modeMCPGo, Era: load.Modern, Concurrency: c, Rep: r, UpstreamTicks: 130, GatewayTicks: int64(158 + 2*r), Result: result},
			}
			for i := range runs {
				runs[i].derive(100)
			}
			rep.Gateway = append(rep.Gateway, runs...)
		}
	}
	rep.summarizeGateway(o)
	for _, s := range rep.GatewaySummary {
		if s.ProxyUs != 620 || s.UpstreamProxyUs != 1100 || s.GatewayUs != 800 || s.GatewayVsProxy < 1.290 || s.GatewayVsProxy > 1.291 {
			t.Errorf("summary %+v", s)
		}
	}
	md := rep.markdown()
	for _, want := range []string{"Beside a bare reverse proxy", "| modern | 8 | 1000 | 1000 | 800.0 | 620.0 | 1.29 | 1100.0 | 2% |", "gateway CPU per call ÷ reverse proxy's: modern c=1 1.29×, modern c=8 1.29×."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	for _, s := range rep.GatewaySummary {
		if s.MCPGoUs != 1620 || s.GatewayVsMCPGo < 0.4938 || s.GatewayVsMCPGo > 0.4939 {
			t.Errorf("summary beside mcp-go %+v", s)
		}
	}
	for _, want := range []string{"Beside an mcp-go proxy", "| modern | 1 | 1000 | 1000 | 800.0 | 1620.0 | 0.49 | 1% |", "gateway CPU per call ÷ mcp-go proxy's: modern c=1 0.49×, modern c=8 0.49×."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	var without []GatewayRun
	for _, r := range rep.Gateway {
		if r.Mode != modeProxy && r.Mode != modeMCPGo {
			without = append(without, r)
		}
	}
	rep.Gateway = without
	rep.summarizeGateway(o)
	if md := rep.markdown(); strings.Contains(md, "Beside a bare reverse proxy") || strings.Contains(md, "Beside an mcp-go proxy") {
		t.Error("a report without proxy runs has a proxy table")
	}
}
