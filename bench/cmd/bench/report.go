package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agnara-go/agnara/bench/load"
)

// Run is one measured run of one server.
type Run struct {
	Server      string `json:"server"`
	Workload    string `json:"workload"`
	Era         string `json:"era"`
	Concurrency int    `json:"concurrency"`
	Rep         int    `json:"rep"`
	load.Result
	P50Us        float64 `json:"p50_us"`
	P99Us        float64 `json:"p99_us"`
	CPUTicks     int64   `json:"server_cpu_ticks"`
	CPUSeconds   float64 `json:"server_cpu_s"`
	CPUPercent   float64 `json:"server_cpu_percent"` // of one core, over the window
	CPUPerCallUs float64 `json:"server_cpu_us_per_call"`
	RSSBytes     int64   `json:"server_rss_bytes"`
	RSSMiB       float64 `json:"server_rss_mib"`
}

func (r *Run) derive(ticksPerSecond int64) {
	r.P50Us = us(r.P50)
	r.P99Us = us(r.P99)
	r.CPUSeconds = float64(r.CPUTicks) / float64(ticksPerSecond)
	if w := r.Window.Seconds(); w > 0 {
		r.CPUPercent = 100 * r.CPUSeconds / w
	}
	if r.Calls > 0 {
		r.CPUPerCallUs = r.CPUSeconds * 1e6 / float64(r.Calls)
	}
	r.RSSMiB = float64(r.RSSBytes) / (1 << 20)
}

func us(d time.Duration) float64 { return float64(d) / 1e3 }

// Summary is the medians over the repetitions of one (workload, era,
// concurrency, server), and their ratios to the reference server's medians.
type Summary struct {
	Workload     string  `json:"workload"`
	Era          string  `json:"era"`
	Concurrency  int     `json:"concurrency"`
	Server       string  `json:"server"`
	Reps         int     `json:"reps"`
	ReqPerSec    float64 `json:"req_per_sec"`
	P50Us        float64 `json:"p50_us"`
	P99Us        float64 `json:"p99_us"`
	CPUPerCallUs float64 `json:"server_cpu_us_per_call"`
	RSSMiB       float64 `json:"server_rss_mib"`
	Errors       int     `json:"errors"`
	// Spreads: half the range over the repetitions, in percent of the
	// median, for throughput and CPU per call.
	ReqPerSecSpread  float64 `json:"req_per_sec_spread_percent"`
	CPUPerCallSpread float64 `json:"cpu_per_call_spread_percent"`
	// Ratios to the raw SDK (0 when it was not measured).
	ReqPerSecVsSDK  float64 `json:"req_per_sec_vs_sdk,omitempty"`
	CPUPerCallVsSDK float64 `json:"cpu_per_call_vs_sdk,omitempty"`
}

// Meta describes the machine and the settings of a report.
type Meta struct {
	Date        string   `json:"date"`
	GoVersion   string   `json:"go_version"`
	OS          string   `json:"os_arch"`
	CPU         string   `json:"cpu"`
	NumCPU      int      `json:"num_cpu"`
	ClockTicks  int64    `json:"clk_tck"`
	Eras        []string `json:"eras"`
	Concurrency []int    `json:"concurrency"`
	Servers     []string `json:"servers"`
	Reps        int      `json:"reps"`
	Duration    string   `json:"duration"`
	Warmup      string   `json:"warmup"`
	// The workloads, and the realistic one's plan (echo's is above).
	Workloads            []string `json:"workloads"`
	RealisticConcurrency []int    `json:"realistic_concurrency,omitempty"`
	RealisticReps        int      `json:"realistic_reps,omitempty"`
	RealisticDuration    string   `json:"realistic_duration,omitempty"`
	RealisticWarmup      string   `json:"realistic_warmup,omitempty"`
	// The versions of the libraries the servers were built with, from
	// their build information.
	Versions   map[string]string `json:"versions,omitempty"`
	GOGC       string            `json:"GOGC,omitempty"`
	GOMAXPROCS string            `json:"GOMAXPROCS,omitempty"`
	Elapsed    string            `json:"elapsed,omitempty"`
	Lifecycle  string            `json:"server_lifecycle"`
	// The gateway measurement's settings (empty without it).
	GatewayEras             []string `json:"gateway_eras,omitempty"`
	GatewayConcurrency      []int    `json:"gateway_concurrency,omitempty"`
	GatewayReps             int      `json:"gateway_reps,omitempty"`
	GatewayUpstreamProtocol string   `json:"gateway_upstream_protocol,omitempty"`
	GatewayGOGC             int      `json:"gateway_gogc,omitempty"` // -1: off
	GatewayMemLimitMiB      int64    `json:"gateway_memlimit_mib,omitempty"`
	GatewayGOMAXPROCS       int      `json:"gateway_gomaxprocs,omitempty"` // 0: the runtime's
}

// Report is everything one invocation measured.
type Report struct {
	Meta           Meta             `json:"meta"`
	Summary        []Summary        `json:"summary"`
	Runs           []Run            `json:"runs"`
	Profiles       []Profile        `json:"profiles,omitempty"`
	GatewaySummary []GatewaySummary `json:"gateway_summary,omitempty"`
	Gateway        []GatewayRun     `json:"gateway_runs,omitempty"`
}

// meta describes the machine and o; bins is the directory of the built
// servers, whose build information gives the libraries' versions ("":
// none).
func meta(o options, ticks int64, bins string) Meta {
	m := Meta{
		Date:        time.Now().UTC().Format(time.RFC3339),
		GoVersion:   runtime.Version(),
		OS:          runtime.GOOS + "/" + runtime.GOARCH,
		CPU:         cpuModel(),
		NumCPU:      runtime.NumCPU(),
		ClockTicks:  ticks,
		Eras:        o.eras,
		Concurrency: o.conc,
		Servers:     o.servers,
		Reps:        o.reps,
		Duration:    o.duration.String(),
		Warmup:      o.warmup.String(),
		GOGC:        os.Getenv("GOGC"),
		GOMAXPROCS:  os.Getenv("GOMAXPROCS"),
		Lifecycle:   "a fresh server process per run, killed after it",
		Workloads:   o.workloads,
		Versions:    versions(bins),
	}
	if slices.Contains(o.workloads, load.Realistic) {
		m.RealisticConcurrency, m.RealisticReps = o.realisticConc, o.realisticReps
		m.RealisticDuration, m.RealisticWarmup = o.realisticDuration.String(), o.realisticWarmup.String()
	}
	if o.gateway {
		m.GatewayEras, m.GatewayConcurrency, m.GatewayReps = o.gatewayEras, o.gatewayConc, o.gatewayReps
		m.GatewayUpstreamProtocol = o.gatewayUpstreamProtocol
		m.GatewayGOGC, m.GatewayMemLimitMiB = o.gatewayGOGC, o.gatewayMemLimitMiB
		m.GatewayGOMAXPROCS = o.gatewayProcs
	}
	return m
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread returns half the range of xs in percent of its median.
func spread(xs []float64) float64 {
	m := median(xs)
	if m == 0 {
		return 0
	}
	return 100 * (slices.Max(xs) - slices.Min(xs)) / 2 / m
}

func (rep *Report) summarize(o options) {
	rep.Summary = nil
	for _, w := range o.workloads {
		for _, era := range o.eras {
			for _, c := range o.plan(w).conc {
				rep.summarizeGroup(o, w, era, c)
			}
		}
	}
}

// summarizeGroup appends the summaries of one workload, era and
// concurrency, one per server, with their ratios to the reference's.
func (rep *Report) summarizeGroup(o options, w, era string, c int) {
	first := len(rep.Summary)
	for _, s := range o.servers {
		var rps, p50, p99, cpu, rss []float64
		sum := Summary{Workload: w, Era: era, Concurrency: c, Server: s}
		for _, r := range rep.Runs {
			if r.Workload != w || r.Era != era || r.Concurrency != c || r.Server != s {
				continue
			}
			sum.Reps++
			sum.Errors += r.Errors
			rps = append(rps, r.ReqPerSec)
			p50 = append(p50, r.P50Us)
			p99 = append(p99, r.P99Us)
			cpu = append(cpu, r.CPUPerCallUs)
			rss = append(rss, r.RSSMiB)
		}
		sum.ReqPerSec, sum.P50Us, sum.P99Us = median(rps), median(p50), median(p99)
		sum.CPUPerCallUs, sum.RSSMiB = median(cpu), median(rss)
		sum.ReqPerSecSpread, sum.CPUPerCallSpread = spread(rps), spread(cpu)
		rep.Summary = append(rep.Summary, sum)
	}
	group := rep.Summary[first:]
	i := slices.IndexFunc(group, func(s Summary) bool { return s.Server == reference })
	if i < 0 {
		return
	}
	ref := group[i]
	for j := range group {
		if ref.ReqPerSec > 0 {
			group[j].ReqPerSecVsSDK = group[j].ReqPerSec / ref.ReqPerSec
		}
		if ref.CPUPerCallUs > 0 {
			group[j].CPUPerCallVsSDK = group[j].CPUPerCallUs / ref.CPUPerCallUs
		}
	}
}

func (rep *Report) errorRuns() int {
	n := 0
	for _, r := range rep.Runs {
		if r.Errors > 0 {
			n++
		}
	}
	for _, r := range rep.Gateway {
		if r.Errors > 0 {
			n++
		}
	}
	for _, p := range rep.Profiles {
		if p.Errors > 0 {
			n++
		}
	}
	return n
}

func ratio(x float64) string {
	if x == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x)
}

var eraTitle = map[string]string{
	load.Modern: "modern (2026-07-28, stateless, one POST per call)",
	load.Legacy: "legacy (2025-11-25, a session per client)",
}

var workloadTitle = map[string]string{
	load.Echo:      "echo",
	load.Realistic: "realistic (quote: a 2.4 KB order in, a 4.5 KB result out, both validated)",
}

func (rep *Report) markdown() string {
	var b strings.Builder
	m := rep.Meta
	fmt.Fprintf(&b, "# Loopback HTTP benchmark: tools/call\n\n")
	fmt.Fprintf(&b, "%s · %s %s · %s × %d · %d runs (and %d gateway runs); echo: %s after %s warm-up, %d repetitions interleaved",
		m.Date, m.GoVersion, m.OS, m.CPU, m.NumCPU, len(rep.Runs), len(rep.Gateway), m.Duration, m.Warmup, m.Reps)
	if m.RealisticReps > 0 {
		fmt.Fprintf(&b, "; realistic: %s after %s warm-up, %d repetitions interleaved", m.RealisticDuration, m.RealisticWarmup, m.RealisticReps)
	}
	fmt.Fprintf(&b, " · %s", m.Lifecycle)
	for _, k := range slices.Sorted(maps.Keys(m.Versions)) {
		fmt.Fprintf(&b, " · %s %s", k, m.Versions[k])
	}
	if m.GOGC != "" {
		fmt.Fprintf(&b, " · GOGC=%s", m.GOGC)
	}
	if m.GOMAXPROCS != "" {
		fmt.Fprintf(&b, " · GOMAXPROCS=%s", m.GOMAXPROCS)
	}
	if m.Elapsed != "" {
		fmt.Fprintf(&b, " · took %s", m.Elapsed)
	}
	b.WriteString("\n\nMedians over the repetitions. CPU is the server process's user+system time from /proc, divided by the calls completed in the window; ratios are to the raw SDK (`sdk`) at the same era and concurrency. CPU ± is half the range over the repetitions, in percent of the median: a ratio closer to 1 than the spreads of its two servers is noise. Compare ratios, not absolute numbers: see README.md.\n")
	eras := m.Eras
	if len(m.Servers) == 0 {
		eras = nil // the gateway measurement only
	}
	for _, w := range m.Workloads {
		for _, era := range eras {
			fmt.Fprintf(&b, "\n## %s: %s\n\n", workloadTitle[w], eraTitle[era])
			b.WriteString("| c | server | req/s | p50 µs | p99 µs | CPU µs/call | RSS MiB | req/s ÷ sdk | CPU ÷ sdk | CPU ± | errors |\n")
			b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
			for _, s := range rep.Summary {
				if s.Workload != w || s.Era != era {
					continue
				}
				fmt.Fprintf(&b, "| %d | %s | %.0f | %.0f | %.0f | %.1f | %.1f | %s | %s | %.0f%% | %d |\n",
					s.Concurrency, s.Server, s.ReqPerSec, s.P50Us, s.P99Us, s.CPUPerCallUs, s.RSSMiB,
					ratio(s.ReqPerSecVsSDK), ratio(s.CPUPerCallVsSDK), s.CPUPerCallSpread, s.Errors)
			}
		}
	}
	var verdict []string
	for _, s := range rep.Summary {
		if s.Workload == load.Echo && s.Server == "agnara" && s.CPUPerCallVsSDK > 0 {
			verdict = append(verdict, fmt.Sprintf("%s c=%d %.2f×", s.Era, s.Concurrency, s.CPUPerCallVsSDK))
		}
	}
	if len(verdict) > 0 {
		fmt.Fprintf(&b, "\nagnara CPU per call ÷ raw SDK (echo): %s.\n", strings.Join(verdict, ", "))
	}
	b.WriteString(rep.ratiosMarkdown())
	b.WriteString(rep.profilesMarkdown())
	b.WriteString(rep.gatewayMarkdown())
	return b.String()
}

func (rep *Report) writeJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
