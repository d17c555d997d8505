package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agnara-go/agnara/bench/internal/proc"
	"github.com/agnara-go/agnara/bench/load"
)

// The gateway measurement: the agnara echo server (the upstream) called
// directly, and the same upstream called through a gateway process
// (servers/gateway) that imports echo from it with mcpimport and serves it
// again with mcpexpose. Each run starts fresh processes; a gateway run reads
// the CPU time of both, so that what the gateway adds and what the upstream
// spends on the gateway's requests are told apart.
const (
	upstreamServer = "agnara"
	gatewayServer  = "gateway"
	proxyServer    = "revproxy"
	mcpgoServer    = "mcpgoproxy"

	modeDirect  = "direct"
	modeGateway = "via-gateway"
	// modeProxy calls the upstream through servers/revproxy, a bare
	// httputil.ReverseProxy: the floor the gateway is held to (issue 40).
	modeProxy = "via-proxy"
	// modeMCPGo calls the upstream through servers/mcpgoproxy, the same
	// re-serving done with mcp-go's client and server (issue 40: the
	// gateway at most 0.5× its CPU per call).
	modeMCPGo = "via-mcpgo"
)

// GatewayRun is one measured run of the gateway comparison.
type GatewayRun struct {
	Mode        string `json:"mode"` // modeDirect, modeGateway, modeProxy or modeMCPGo
	Era         string `json:"era"`  // of the load generator's requests
	Concurrency int    `json:"concurrency"`
	Rep         int    `json:"rep"`
	load.Result
	P50Us float64 `json:"p50_us"`
	P99Us float64 `json:"p99_us"`
	// CPU time of the upstream and (via-gateway and via-proxy) of the
	// process in front of it over the window, in clock ticks and per
	// completed call.
	UpstreamTicks        int64   `json:"upstream_cpu_ticks"`
	GatewayTicks         int64   `json:"gateway_cpu_ticks"`
	UpstreamCPUPerCallUs float64 `json:"upstream_cpu_us_per_call"`
	GatewayCPUPerCallUs  float64 `json:"gateway_cpu_us_per_call"`
	GatewayRSSMiB        float64 `json:"gateway_rss_mib,omitempty"`
}

func (r *GatewayRun) derive(ticksPerSecond int64) {
	r.P50Us, r.P99Us = us(r.P50), us(r.P99)
	if r.Calls > 0 {
		per := 1e6 / float64(ticksPerSecond) / float64(r.Calls)
		r.UpstreamCPUPerCallUs = float64(r.UpstreamTicks) * per
		r.GatewayCPUPerCallUs = float64(r.GatewayTicks) * per
	}
}

// GatewaySummary compares, at one era and concurrency, the medians of the
// direct runs and of the via-gateway runs.
type GatewaySummary struct {
	Era         string `json:"era"`
	Concurrency int    `json:"concurrency"`
	Reps        int    `json:"reps"`
	// Throughput and median latency seen by the load generator.
	DirectReqPerSec float64 `json:"direct_req_per_sec"`
	ViaReqPerSec    float64 `json:"via_req_per_sec"`
	DirectP50Us     float64 `json:"direct_p50_us"`
	ViaP50Us        float64 `json:"via_p50_us"`
	// CPU µs per call: the upstream called directly (its own cost), the
	// upstream called by the gateway, and the gateway process.
	UpstreamDirectUs float64 `json:"upstream_direct_cpu_us_per_call"`
	UpstreamViaUs    float64 `json:"upstream_via_cpu_us_per_call"`
	GatewayUs        float64 `json:"gateway_cpu_us_per_call"`
	// GatewayVsUpstream is GatewayUs ÷ UpstreamDirectUs: what the gateway
	// process adds per call, relative to what the upstream itself spends.
	GatewayVsUpstream float64 `json:"gateway_vs_upstream"`
	// UpstreamViaVsDirect is UpstreamViaUs ÷ UpstreamDirectUs: how much more
	// the upstream spends on a call from the gateway than on a direct one.
	UpstreamViaVsDirect float64 `json:"upstream_via_vs_direct"`
	// AddedVsUpstream is (GatewayUs + UpstreamViaUs − UpstreamDirectUs) ÷
	// UpstreamDirectUs: everything the gateway costs the two processes.
	AddedVsUpstream float64 `json:"added_vs_upstream"`
	// Spreads (half the range over the repetitions, percent of the median).
	UpstreamDirectSpread float64 `json:"upstream_direct_spread_percent"`
	UpstreamViaSpread    float64 `json:"upstream_via_spread_percent"`
	GatewaySpread        float64 `json:"gateway_spread_percent"`
	GatewayRSSMiB        float64 `json:"gateway_rss_mib"`
	// The same upstream behind a bare reverse proxy (servers/revproxy):
	// its throughput, the proxy's CPU per call, the upstream's on the
	// proxy's calls, and GatewayVsProxy, GatewayUs ÷ ProxyUs (issue 40:
	// at most 1.1 at 1 and 8 clients).
	ProxyReqPerSec  float64 `json:"proxy_req_per_sec,omitempty"`
	ProxyUs         float64 `json:"proxy_cpu_us_per_call,omitempty"`
	UpstreamProxyUs float64 `json:"upstream_via_proxy_cpu_us_per_call,omitempty"`
	GatewayVsProxy  float64 `json:"gateway_vs_proxy,omitempty"`
	ProxySpread     float64 `json:"proxy_spread_percent,omitempty"`
	// The same for the mcp-go re-serving (servers/mcpgoproxy), and
	// GatewayVsMCPGo, GatewayUs ÷ MCPGoUs (issue 40: at most 0.5).
	MCPGoReqPerSec float64 `json:"mcpgo_req_per_sec,omitempty"`
	MCPGoUs        float64 `json:"mcpgo_cpu_us_per_call,omitempty"`
	GatewayVsMCPGo float64 `json:"gateway_vs_mcpgo,omitempty"`
	MCPGoSpread    float64 `json:"mcpgo_spread_percent,omitempty"`
	Errors         int     `json:"errors"`
}

// gatewayModes are the runs of one repetition of the gateway comparison,
// in order.
var gatewayModes = []string{modeDirect, modeGateway, modeProxy, modeMCPGo}

// runGateway runs the gateway comparison: for each era and concurrency,
// o.gatewayReps times, a direct run, a via-gateway run and a via-proxy run.
func runGateway(ctx context.Context, o options, cs *children, bins string, ticks int64, logf *os.File, rep *Report) error {
	total := len(o.gatewayEras) * len(o.gatewayConc) * o.gatewayReps * len(gatewayModes)
	n := 0
	for _, era := range o.gatewayEras {
		for _, c := range o.gatewayConc {
			for r := 1; r <= o.gatewayReps; r++ {
				for _, mode := range gatewayModes {
					n++
					res, err := runGatewayOne(ctx, cs, bins, mode, era, c, r, o, ticks, logf)
					if err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						return fmt.Errorf("gateway %s %s c=%d rep %d: %w (server log: see below)\n%s", mode, era, c, r, err, tail(logf.Name()))
					}
					fmt.Fprintf(os.Stderr, "[gw %2d/%d] %-6s c=%-2d %-11s rep %d: %7.0f req/s  p50 %6.0fµs  upstream CPU %6.1fµs/call  gateway CPU %6.1fµs/call  errors %d\n",
						n, total, era, c, mode, r, res.ReqPerSec, res.P50Us, res.UpstreamCPUPerCallUs, res.GatewayCPUPerCallUs, res.Errors)
					rep.Gateway = append(rep.Gateway, res)
				}
			}
		}
	}
	return nil
}

func runGatewayOne(ctx context.Context, cs *children, bins, mode, era string, c, rep int, o options, ticks int64, logf *os.File) (GatewayRun, error) {
	fmt.Fprintf(logf, "=== gateway %s %s c=%d rep %d\n", mode, era, c, rep)
	up, err := startServer(ctx, upstreamServer, filepath.Join(bins, upstreamServer), logf)
	if err != nil {
		return GatewayRun{}, err
	}
	cs.add(up)
	defer cs.stop(up)
	target := up
	var gw *child
	// The gateway's and the proxy's runtime policy, the same for both.
	var policy []string
	if o.gatewayGOGC != 0 {
		policy = append(policy, "-gogc", fmt.Sprint(o.gatewayGOGC))
	}
	if o.gatewayMemLimitMiB > 0 {
		policy = append(policy, "-memlimit-mib", fmt.Sprint(o.gatewayMemLimitMiB))
	}
	if o.gatewayProcs > 0 {
		policy = append(policy, "-gomaxprocs", fmt.Sprint(o.gatewayProcs))
	}
	if peer := map[string]string{modeProxy: proxyServer, modeMCPGo: mcpgoServer}[mode]; peer != "" {
		gw, err = startServer(ctx, peer, filepath.Join(bins, peer), logf, append([]string{"-upstream", up.url}, policy...)...)
		if err != nil {
			return GatewayRun{}, err
		}
		cs.add(gw)
		defer cs.stop(gw)
		target = gw
	}
	if mode == modeGateway {
		args := []string{"-upstream", up.url}
		switch o.gatewayUpstreamProtocol {
		case "": // the gateway's default
		case "latest":
			args = append(args, "-upstream-protocol", "")
		default:
			args = append(args, "-upstream-protocol", o.gatewayUpstreamProtocol)
		}
		args = append(args, policy...)
		if o.gatewayProfile != "" {
			args = append(args, "-cpuprofile", fmt.Sprintf("%s-%s-c%d-rep%d.pprof", o.gatewayProfile, era, c, rep))
		}
		gw, err = startServer(ctx, gatewayServer, filepath.Join(bins, gatewayServer), logf, args...)
		if err != nil {
			return GatewayRun{}, err
		}
		cs.add(gw)
		defer cs.stop(gw)
		target = gw
	}

	var upBefore, upAfter, gwBefore, gwAfter, gwRSS int64
	var procErr error
	read := func(ch *child, dst *int64) {
		if ch == nil {
			return
		}
		t, err := proc.CPUTicks(ch.pid)
		*dst = t
		procErr = errors.Join(procErr, err)
	}
	res, err := load.Run(ctx, load.Config{
		URL:         target.url,
		Era:         era,
		Concurrency: c,
		Duration:    o.duration,
		Warmup:      o.warmup,
		OnStart: func() {
			read(up, &upBefore)
			read(gw, &gwBefore)
		},
		OnEnd: func() {
			read(up, &upAfter)
			read(gw, &gwAfter)
			if gw != nil {
				var err error
				gwRSS, err = proc.RSS(gw.pid)
				procErr = errors.Join(procErr, err)
			}
		},
	})
	if err != nil {
		return GatewayRun{}, err
	}
	if procErr != nil {
		return GatewayRun{}, procErr
	}
	if up.exited() || (gw != nil && gw.exited()) {
		return GatewayRun{}, errors.New("a server exited during the run")
	}
	r := GatewayRun{
		Mode: mode, Era: era, Concurrency: c, Rep: rep, Result: res,
		UpstreamTicks: upAfter - upBefore,
		GatewayTicks:  gwAfter - gwBefore,
		GatewayRSSMiB: float64(gwRSS) / (1 << 20),
	}
	r.derive(ticks)
	return r, nil
}

func (rep *Report) summarizeGateway(o options) {
	rep.GatewaySummary = nil
	for _, era := range o.gatewayEras {
		for _, c := range o.gatewayConc {
			s := GatewaySummary{Era: era, Concurrency: c}
			var dRPS, vRPS, dP50, vP50, upD, upV, gw, rss, pRPS, pUs, upP, mRPS, mUs []float64
			for _, r := range rep.Gateway {
				if r.Era != era || r.Concurrency != c {
					continue
				}
				s.Errors += r.Errors
				switch r.Mode {
				case modeDirect:
					s.Reps++
					dRPS, dP50, upD = append(dRPS, r.ReqPerSec), append(dP50, r.P50Us), append(upD, r.UpstreamCPUPerCallUs)
				case modeGateway:
					vRPS, vP50 = append(vRPS, r.ReqPerSec), append(vP50, r.P50Us)
					upV, gw = append(upV, r.UpstreamCPUPerCallUs), append(gw, r.GatewayCPUPerCallUs)
					rss = append(rss, r.GatewayRSSMiB)
				case modeProxy:
					pRPS, pUs, upP = append(pRPS, r.ReqPerSec), append(pUs, r.GatewayCPUPerCallUs), append(upP, r.UpstreamCPUPerCallUs)
				case modeMCPGo:
					mRPS, mUs = append(mRPS, r.ReqPerSec), append(mUs, r.GatewayCPUPerCallUs)
				}
			}
			if s.Reps == 0 {
				continue // not measured (-gateway=false): no row, and no section
			}
			s.DirectReqPerSec, s.ViaReqPerSec = median(dRPS), median(vRPS)
			s.DirectP50Us, s.ViaP50Us = median(dP50), median(vP50)
			s.UpstreamDirectUs, s.UpstreamViaUs, s.GatewayUs = median(upD), median(upV), median(gw)
			s.UpstreamDirectSpread, s.UpstreamViaSpread, s.GatewaySpread = spread(upD), spread(upV), spread(gw)
			s.GatewayRSSMiB = median(rss)
			if d := s.UpstreamDirectUs; d > 0 {
				s.GatewayVsUpstream = s.GatewayUs / d
				s.UpstreamViaVsDirect = s.UpstreamViaUs / d
				s.AddedVsUpstream = (s.GatewayUs + s.UpstreamViaUs - d) / d
			}
			if len(pUs) > 0 {
				s.ProxyReqPerSec, s.ProxyUs, s.UpstreamProxyUs, s.ProxySpread = median(pRPS), median(pUs), median(upP), spread(pUs)
				if s.ProxyUs > 0 {
					s.GatewayVsProxy = s.GatewayUs / s.ProxyUs
				}
			}
			if len(mUs) > 0 {
				s.MCPGoReqPerSec, s.MCPGoUs, s.MCPGoSpread = median(mRPS), median(mUs), spread(mUs)
				if s.MCPGoUs > 0 {
					s.GatewayVsMCPGo = s.GatewayUs / s.MCPGoUs
				}
			}
			rep.GatewaySummary = append(rep.GatewaySummary, s)
		}
	}
}

// gatewayMarkdown is the report's gateway section, or "" without gateway
// runs.
func (rep *Report) gatewayMarkdown() string {
	if len(rep.GatewaySummary) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Gateway: the agnara upstream called directly and through a gateway\n\n")
	m := rep.Meta
	gc := "Go's default GC"
	if m.GatewayGOGC != 0 || m.GatewayMemLimitMiB > 0 {
		gc = fmt.Sprintf("GC policy of docs/operating.md: GOGC=%s, GOMEMLIMIT=%dMiB", gogcString(m.GatewayGOGC), m.GatewayMemLimitMiB)
	}
	if m.GatewayGOMAXPROCS > 0 {
		gc += fmt.Sprintf(", GOMAXPROCS=%d", m.GatewayGOMAXPROCS)
	}
	fmt.Fprintf(&b, "The upstream is the `agnara` server with Go's defaults; the gateway (`servers/gateway`) imports its echo with mcpimport (concurrency-safe, standard profile, `mcpimport.HTTPClient`; upstream protocol %s; %s) and serves it again with mcpexpose. Each repetition runs the upstream alone, then upstream and gateway, fresh processes each time; the CPU of each process is read from /proc. Medians over %d repetitions. `gw ÷ up` is the gateway's CPU per call ÷ the upstream's own (direct); `up via ÷ direct` how much more the upstream spends on the gateway's calls; `added ÷ up` is everything the gateway adds (its own CPU plus the upstream's extra) ÷ the upstream's own. ± is half the range over the repetitions.\n\n",
		orDefault(m.GatewayUpstreamProtocol, "mcpimport.HTTPProtocolVersion"), gc, m.GatewayReps)
	b.WriteString("| era | c | req/s direct | req/s via | p50 µs direct | p50 µs via | upstream CPU µs/call direct | upstream CPU µs/call via | gateway CPU µs/call | gw ÷ up | up via ÷ direct | added ÷ up | ± up / up via / gw | gateway RSS MiB | errors |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, s := range rep.GatewaySummary {
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.0f | %.0f | %.1f | %.1f | %.1f | %s | %s | %s | %.0f%% / %.0f%% / %.0f%% | %.1f | %d |\n",
			s.Era, s.Concurrency, s.DirectReqPerSec, s.ViaReqPerSec, s.DirectP50Us, s.ViaP50Us,
			s.UpstreamDirectUs, s.UpstreamViaUs, s.GatewayUs,
			ratio(s.GatewayVsUpstream), ratio(s.UpstreamViaVsDirect), ratio(s.AddedVsUpstream),
			s.UpstreamDirectSpread, s.UpstreamViaSpread, s.GatewaySpread, s.GatewayRSSMiB, s.Errors)
	}
	var verdict []string
	for _, s := range rep.GatewaySummary {
		verdict = append(verdict, fmt.Sprintf("%s c=%d %.2f×", s.Era, s.Concurrency, s.GatewayVsUpstream))
	}
	fmt.Fprintf(&b, "\ngateway CPU per call ÷ upstream's own: %s.\n", strings.Join(verdict, ", "))
	for _, was := range gatewayBefore {
		var before []string
		for _, s := range rep.GatewaySummary {
			if r, ok := was.ratios[gatewayKey{s.Era, s.Concurrency}]; ok {
				before = append(before, fmt.Sprintf("%s c=%d %s×", s.Era, s.Concurrency, r))
			}
		}
		if len(before) > 0 {
			fmt.Fprintf(&b, "%s (%s): %s.\n", was.what, was.when, strings.Join(before, ", "))
		}
	}
	var floor []string
	for _, s := range rep.GatewaySummary {
		floor = append(floor, fmt.Sprintf("%s c=%d %.2f×", s.Era, s.Concurrency, s.UpstreamViaVsDirect))
	}
	b.WriteString(rep.proxyMarkdown())
	b.WriteString(rep.mcpgoMarkdown())
	fmt.Fprintf(&b, "The target is at most 1× at 8 clients. A gateway's server half runs the upstream's own path (mcpexpose's answer around a handler) at the gateway's request rate, where the upstream itself costs `up via ÷ direct` times its direct cost; so even with a client half that cost nothing, gw ÷ up would be about that: %s.\n", strings.Join(floor, ", "))
	return b.String()
}

// proxyMarkdown is the comparison of the gateway with a bare reverse
// proxy in front of the same upstream, or "" without proxy runs.
func (rep *Report) proxyMarkdown() string {
	var b strings.Builder
	for _, s := range rep.GatewaySummary {
		if s.ProxyUs == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nBeside a bare reverse proxy (`servers/revproxy`: `httputil.ReverseProxy` with mcpimport's connection pool, in front of the same upstream, with the gateway's GC policy, run after the gateway in each repetition). `gw ÷ proxy` is the gateway's own CPU per call ÷ the proxy's; issue 40 asks for at most 1.1× at 1 and 8 clients.\n\n")
			b.WriteString("| era | c | req/s via gateway | req/s via proxy | gateway CPU µs/call | proxy CPU µs/call | gw ÷ proxy | upstream CPU µs/call via proxy | ± proxy |\n")
			b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.1f | %.1f | %s | %.1f | %.0f%% |\n",
			s.Era, s.Concurrency, s.ViaReqPerSec, s.ProxyReqPerSec, s.GatewayUs, s.ProxyUs, ratio(s.GatewayVsProxy), s.UpstreamProxyUs, s.ProxySpread)
	}
	if b.Len() == 0 {
		return ""
	}
	var verdict []string
	for _, s := range rep.GatewaySummary {
		if s.ProxyUs > 0 {
			verdict = append(verdict, fmt.Sprintf("%s c=%d %.2f×", s.Era, s.Concurrency, s.GatewayVsProxy))
		}
	}
	fmt.Fprintf(&b, "\ngateway CPU per call ÷ reverse proxy's: %s.\n\n", strings.Join(verdict, ", "))
	return b.String()
}

// mcpgoMarkdown is the comparison of the gateway with the same
// re-serving done with mcp-go, or "" without such runs.
func (rep *Report) mcpgoMarkdown() string {
	var b strings.Builder
	var verdict []string
	for _, s := range rep.GatewaySummary {
		if s.MCPGoUs == 0 {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\nBeside an mcp-go proxy (`servers/mcpgoproxy`: mcp-go's client calling the same upstream and mcp-go's server, configured as `servers/mcpgo`, serving its tools again, with the gateway's GC policy, run last in each repetition). `gw ÷ mcp-go` is the gateway's own CPU per call ÷ the mcp-go proxy's; issue 40 asks for at most 0.5×.\n\n")
			b.WriteString("| era | c | req/s via gateway | req/s via mcp-go | gateway CPU µs/call | mcp-go proxy CPU µs/call | gw ÷ mcp-go | ± mcp-go |\n")
			b.WriteString("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
		}
		fmt.Fprintf(&b, "| %s | %d | %.0f | %.0f | %.1f | %.1f | %s | %.0f%% |\n",
			s.Era, s.Concurrency, s.ViaReqPerSec, s.MCPGoReqPerSec, s.GatewayUs, s.MCPGoUs, ratio(s.GatewayVsMCPGo), s.MCPGoSpread)
		verdict = append(verdict, fmt.Sprintf("%s c=%d %.2f×", s.Era, s.Concurrency, s.GatewayVsMCPGo))
	}
	if b.Len() == 0 {
		return ""
	}
	fmt.Fprintf(&b, "\ngateway CPU per call ÷ mcp-go proxy's: %s.\n\n", strings.Join(verdict, ", "))
	return b.String()
}

// gatewayKey is an era and a concurrency of the gateway measurement.
type gatewayKey struct {
	era string
	c   int
}

// gatewayBefore is gw ÷ up as measured at earlier stages of the gateway's
// cost work, oldest first, for the report to set beside today's: ranges
// over the runs of the day, which move with the shared machine's load.
var gatewayBefore = []struct {
	what, when string
	ratios     map[gatewayKey]string
}{
	{
		"Before the client half's fast path",
		"main at 666f4b8, 2026-12-01, 2 shared cores, `-servers= -gateway-c 1,8 -gateway-reps 2 -d 2s`, gateway GOGC=off GOMEMLIMIT=256MiB",
		map[gatewayKey]string{{"modern", 1}: "6.07", {"modern", 8}: "4.21"},
	},
	{
		"Before the server half's memo of client capabilities and the one decoding of structured content",
		"main at b73d1a6, 2026-12-01 and 02, 2 shared cores, the defaults, ranges over 7 runs and ADR 44's",
		map[gatewayKey]string{{"modern", 1}: "3.0–5.0", {"modern", 8}: "3.2–4.0"},
	},
	{
		"Before whole event streams with their length (one write per answer, no stream left to drain)",
		"main at abf3519, 2026-12-02, 2 shared cores, the defaults, `-servers= -gateway-reps 2`, 3 runs",
		map[gatewayKey]string{{"modern", 1}: "3.0–3.5", {"modern", 8}: "2.7–3.0"},
	},
}

func gogcString(n int) string {
	switch {
	case n < 0:
		return "off"
	case n == 0:
		return "100"
	}
	return fmt.Sprint(n)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
