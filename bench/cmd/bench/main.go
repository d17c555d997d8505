// Command bench measures tools/call over loopback HTTP on four servers —
// agnara-go, the raw official SDK, mark3labs/mcp-go and a bare net/http
// JSON-RPC handler — in both protocol eras at several concurrencies, with
// two workloads: echo, and the realistic quote of internal/realistic (a
// 2.4 KB order in, a 4.5 KB validated result out), followed by a CPU
// profile of the agnara server on the realistic workload. It writes a
// Markdown report (tables, agnara's ratios to each other server, the
// profile's top entries), the raw data and a chart. See README.md.
//
// It then measures a gateway (-gateway, on by default): the agnara server
// called directly and through servers/gateway, which imports echo from it
// with mcpimport and serves it again, reading the CPU time of both
// processes.
//
// Every server runs as its own process, started fresh for each run and
// killed after it; the runs are interleaved (A B C D A B C D …) so that
// drift of the machine hits every server alike. The servers' CPU time comes
// from the kernel (/proc/<pid>/stat), read just before and just after each
// measured window.
//
//	cd bench && go run ./cmd/bench -out results
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/bench/internal/proc"
	"github.com/agnara-go/agnara/bench/load"
)

// allServers are the servers, in run order; sdk is the reference of the
// ratios.
var allServers = []string{"agnara", "sdk", "mcpgo", "bare"}

const reference = "sdk"

type options struct {
	out      string
	eras     []string
	conc     []int
	servers  []string
	reps     int
	duration time.Duration
	warmup   time.Duration

	workloads         []string
	realisticConc     []int
	realisticReps     int
	realisticDuration time.Duration
	realisticWarmup   time.Duration
	profileConc       int
	profilePrefix     string

	gateway                 bool
	gatewayEras             []string
	gatewayConc             []int
	gatewayReps             int
	gatewayUpstreamProtocol string
	gatewayProfile          string
	gatewayGOGC             int
	gatewayMemLimitMiB      int64
	gatewayProcs            int
}

func main() {
	var o options
	var eras, conc, servers, gwEras, gwConc, workloads, realConc string
	flag.StringVar(&o.out, "out", "results", "directory for results.md, results.json and chart.png")
	flag.StringVar(&eras, "eras", "modern,legacy", "protocol eras")
	flag.StringVar(&conc, "c", "1,8,32", "concurrencies")
	flag.StringVar(&servers, "servers", strings.Join(allServers, ","), "servers, in run order")
	flag.IntVar(&o.reps, "reps", 4, "repetitions of each (era, concurrency, server)")
	flag.DurationVar(&o.duration, "d", 2*time.Second, "measured duration of each run")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before each measured run")
	flag.StringVar(&workloads, "workloads", load.Echo+","+load.Realistic, "workloads, in run order: echo (-c, -reps, -d, -warmup) and realistic (-realistic-*)")
	flag.StringVar(&realConc, "realistic-c", "1,8", "concurrencies of the realistic workload")
	flag.IntVar(&o.realisticReps, "realistic-reps", 2, "repetitions of each realistic (era, concurrency, server)")
	flag.DurationVar(&o.realisticDuration, "realistic-d", 1500*time.Millisecond, "measured duration of each realistic run")
	flag.DurationVar(&o.realisticWarmup, "realistic-warmup", 750*time.Millisecond, "warm-up before each realistic run")
	flag.IntVar(&o.profileConc, "realistic-profile-c", 8, "after the realistic runs, profile the agnara server (when among -servers) on that workload at this concurrency, one run per era (0: no profile)")
	flag.StringVar(&o.profilePrefix, "realistic-cpuprofile", "", "keep those CPU profiles as PREFIX-ERA.pprof (default: only their top entries, in the report)")
	flag.BoolVar(&o.gateway, "gateway", true, "also measure the agnara server called directly and through a gateway (servers/gateway)")
	flag.StringVar(&gwEras, "gateway-eras", load.Modern, "protocol eras of the gateway measurement's clients")
	flag.StringVar(&gwConc, "gateway-c", "1,8", "concurrencies of the gateway measurement")
	flag.IntVar(&o.gatewayReps, "gateway-reps", 3, "repetitions of each gateway (era, concurrency, mode)")
	flag.StringVar(&o.gatewayUpstreamProtocol, "gateway-upstream-protocol", "", "protocol version the gateway asks the upstream for (default: the gateway's, mcpimport.HTTPProtocolVersion; \"latest\": the SDK's newest)")
	flag.StringVar(&o.gatewayProfile, "gateway-cpuprofile", "", "write a CPU profile of each gateway process to PREFIX-ERA-cC-repN.pprof")
	flag.IntVar(&o.gatewayGOGC, "gateway-gogc", 400, "GC percentage of the gateway process (docs/operating.md's policy; -1: off, with -gateway-memlimit-mib; 0: Go's default, as the upstream runs)")
	flag.Int64Var(&o.gatewayMemLimitMiB, "gateway-memlimit-mib", 256, "soft memory limit of the gateway process in MiB (0: none)")
	flag.IntVar(&o.gatewayProcs, "gateway-gomaxprocs", 0, "GOMAXPROCS of the gateway process (0: the runtime's, as the upstream runs)")
	flag.Parse()
	o.eras = strings.Split(eras, ",")
	if servers != "" { // -servers= measures the gateway only
		o.servers = strings.Split(servers, ",")
	}
	o.conc = ints("-c", conc)
	o.realisticConc = ints("-realistic-c", realConc)
	if workloads != "" {
		o.workloads = strings.Split(workloads, ",")
	}
	for _, w := range o.workloads {
		if w != load.Echo && w != load.Realistic {
			fatalf("-workloads: unknown workload %q (have %s, %s)", w, load.Echo, load.Realistic)
		}
	}
	if !slices.Contains(o.workloads, load.Realistic) || !slices.Contains(o.servers, profiledServer) {
		o.profileConc = 0 // the profile is of the agnara server on the realistic workload
	}
	o.gatewayEras = strings.Split(gwEras, ",")
	o.gatewayConc = ints("-gateway-c", gwConc)
	for _, s := range o.servers {
		if !slices.Contains(allServers, s) {
			fatalf("-servers: unknown server %q (have %v)", s, allServers)
		}
	}
	for _, e := range append(slices.Clone(o.eras), o.gatewayEras...) {
		if e != load.Modern && e != load.Legacy {
			fatalf("-eras, -gateway-eras: unknown era %q", e)
		}
	}
	if o.gatewayProcs < 0 {
		fatalf("-gateway-gomaxprocs: 0 (the runtime's) or more")
	}
	if o.reps < 1 || o.gatewayReps < 1 || o.realisticReps < 1 {
		fatalf("-reps, -gateway-reps, -realistic-reps: at least 1")
	}
	if o.profileConc < 0 {
		fatalf("-realistic-profile-c: 0 (no profile) or more")
	}
	if o.gatewayGOGC < 0 && o.gatewayMemLimitMiB <= 0 {
		fatalf("-gateway-gogc -1 (off) needs a -gateway-memlimit-mib")
	}
	if (len(o.servers) == 0 || len(o.workloads) == 0) && !o.gateway {
		fatalf("nothing to measure: -servers or -workloads is empty and -gateway=false")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cs children
	err := run(ctx, o, &cs)
	cs.stopAll() // on every path, errors and interrupts included
	if err != nil {
		fatalf("%v", err)
	}
}

func ints(name, list string) []int {
	var out []int
	for _, s := range strings.Split(list, ",") {
		n, err := strconv.Atoi(s)
		if err != nil {
			fatalf("%s: %v", name, err)
		}
		out = append(out, n)
	}
	return out
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
	os.Exit(1)
}

func run(ctx context.Context, o options, cs *children) error {
	began := time.Now()
	tmp, err := os.MkdirTemp("", "agnara-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	build := slices.Clone(o.servers)
	if o.profileConc > 0 && !slices.Contains(build, profiledServer) {
		build = append(build, profiledServer)
	}
	if o.gateway {
		for _, s := range []string{upstreamServer, gatewayServer, proxyServer, mcpgoServer} {
			if !slices.Contains(build, s) {
				build = append(build, s)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "building servers %v...\n", build)
	pkgs := make([]string, len(build))
	for i, s := range build {
		pkgs[i] = "./servers/" + s
	}
	gobuild := exec.CommandContext(ctx, goCmd(), append([]string{"build", "-o", tmp + string(filepath.Separator)}, pkgs...)...)
	gobuild.Stdout, gobuild.Stderr = os.Stderr, os.Stderr
	if err := gobuild.Run(); err != nil {
		return fmt.Errorf("building the servers: %w", err)
	}
	logf, err := os.Create(filepath.Join(tmp, "servers.log"))
	if err != nil {
		return err
	}
	defer logf.Close()

	total, estimate := 0, time.Duration(0)
	for _, w := range o.workloads {
		p := o.plan(w)
		runs := len(o.eras) * len(p.conc) * len(o.servers) * p.reps
		total += runs
		estimate += time.Duration(runs) * (p.duration + p.warmup + 300*time.Millisecond)
	}
	profiles := 0
	if o.profileConc > 0 {
		profiles = len(o.eras)
		estimate += time.Duration(profiles) * (o.realisticDuration + o.realisticWarmup + 2*time.Second)
	}
	gwTotal := 0
	if o.gateway {
		gwTotal = len(o.gatewayEras) * len(o.gatewayConc) * o.gatewayReps * len(gatewayModes)
		estimate += time.Duration(gwTotal) * (o.duration + o.warmup + 600*time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "%d runs (workloads %v) + %d profile runs + %d gateway runs (about %s)\n",
		total, o.workloads, profiles, gwTotal, estimate.Round(time.Second))
	ticks := proc.ClockTicks()
	rep := &Report{Meta: meta(o, ticks, tmp)}
	n := 0
	for _, w := range o.workloads {
		p := o.plan(w)
		for _, era := range o.eras {
			for _, c := range p.conc {
				for r := 1; r <= p.reps; r++ {
					for _, s := range o.servers {
						n++
						res, err := runOne(ctx, cs, filepath.Join(tmp, s), s, w, era, c, r, p, ticks, logf)
						if err != nil {
							if ctx.Err() != nil {
								return ctx.Err()
							}
							return fmt.Errorf("%s %s %s c=%d rep %d: %w (server log: see below)\n%s", w, s, era, c, r, err, tail(logf.Name()))
						}
						fmt.Fprintf(os.Stderr, "[%2d/%d] %-9s %-6s c=%-2d %-6s rep %d: %7.0f req/s  p50 %6.0fµs  p99 %6.0fµs  CPU %6.1fµs/call (%3.0f%%)  RSS %5.1f MiB  errors %d\n",
							n, total, w, era, c, s, r, res.ReqPerSec, res.P50Us, res.P99Us, res.CPUPerCallUs, res.CPUPercent, res.RSSMiB, res.Errors)
						rep.Runs = append(rep.Runs, res)
					}
				}
			}
		}
	}
	if o.profileConc > 0 {
		if err := runProfiles(ctx, o, cs, tmp, logf, rep); err != nil {
			return err
		}
	}
	if o.gateway {
		if err := runGateway(ctx, o, cs, tmp, ticks, logf, rep); err != nil {
			return err
		}
	}
	rep.summarize(o)
	rep.summarizeGateway(o)
	rep.Meta.Elapsed = time.Since(began).Round(time.Second).String()

	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	md := rep.markdown()
	if err := os.WriteFile(filepath.Join(o.out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	if err := rep.writeJSON(filepath.Join(o.out, "results.json")); err != nil {
		return err
	}
	if len(o.servers) > 0 && slices.Contains(o.workloads, load.Echo) {
		if err := rep.chart(filepath.Join(o.out, "chart.png")); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	fmt.Print(md)
	fmt.Fprintf(os.Stderr, "wrote %s/results.md, results.json (and chart.png) in %s\n", o.out, time.Since(began).Round(time.Second))
	if bad := rep.errorRuns(); bad > 0 {
		return fmt.Errorf("%d runs had errors: every call must succeed", bad)
	}
	return nil
}

// plan is how one workload is run: its concurrencies, repetitions and
// durations.
type plan struct {
	conc             []int
	reps             int
	duration, warmup time.Duration
}

func (o options) plan(workload string) plan {
	if workload == load.Realistic {
		return plan{o.realisticConc, o.realisticReps, o.realisticDuration, o.realisticWarmup}
	}
	return plan{o.conc, o.reps, o.duration, o.warmup}
}

// runOne starts a fresh server, drives one measured run of a workload at it
// and stops it.
func runOne(ctx context.Context, cs *children, bin, server, workload, era string, c, rep int, p plan, ticks int64, logf *os.File) (Run, error) {
	fmt.Fprintf(logf, "=== %s %s %s c=%d rep %d\n", workload, server, era, c, rep)
	ch, err := startServer(ctx, server, bin, logf)
	if err != nil {
		return Run{}, err
	}
	cs.add(ch)
	defer cs.stop(ch)

	var before, after int64
	var rss int64
	var procErr error
	res, err := load.Run(ctx, load.Config{
		URL:         ch.url,
		Era:         era,
		Workload:    workload,
		Concurrency: c,
		Duration:    p.duration,
		Warmup:      p.warmup,
		OnStart: func() {
			before, procErr = proc.CPUTicks(ch.pid)
		},
		OnEnd: func() {
			var e1, e2 error
			after, e1 = proc.CPUTicks(ch.pid)
			rss, e2 = proc.RSS(ch.pid)
			procErr = errors.Join(procErr, e1, e2)
		},
	})
	if err != nil {
		return Run{}, err
	}
	if procErr != nil {
		return Run{}, procErr
	}
	if ch.exited() {
		return Run{}, errors.New("the server exited during the run")
	}
	r := Run{
		Server:      server,
		Workload:    workload,
		Era:         era,
		Concurrency: c,
		Rep:         rep,
		Result:      res,
		CPUTicks:    after - before,
		RSSBytes:    rss,
	}
	r.derive(ticks)
	return r, nil
}

func goCmd() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// tail returns the end of the file at path.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
