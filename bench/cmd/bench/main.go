// Command bench measures the echo tool over loopback HTTP on four servers —
// agnara-go, the raw official SDK, mark3labs/mcp-go and a bare net/http
// JSON-RPC handler — in both protocol eras at several concurrencies, and
// writes a Markdown table, the raw data and a chart. See README.md.
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
	var eras, conc, servers, gwEras, gwConc string
	flag.StringVar(&o.out, "out", "results", "directory for results.md, results.json and chart.png")
	flag.StringVar(&eras, "eras", "modern,legacy", "protocol eras")
	flag.StringVar(&conc, "c", "1,8,32", "concurrencies")
	flag.StringVar(&servers, "servers", strings.Join(allServers, ","), "servers, in run order")
	flag.IntVar(&o.reps, "reps", 2, "repetitions of each (era, concurrency, server)")
	flag.DurationVar(&o.duration, "d", 2500*time.Millisecond, "measured duration of each run")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "warm-up before each measured run")
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
	if o.reps < 1 || o.gatewayReps < 1 {
		fatalf("-reps, -gateway-reps: at least 1")
	}
	if o.gatewayGOGC < 0 && o.gatewayMemLimitMiB <= 0 {
		fatalf("-gateway-gogc -1 (off) needs a -gateway-memlimit-mib")
	}
	if len(o.servers) == 0 && !o.gateway {
		fatalf("nothing to measure: -servers is empty and -gateway=false")
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

	total := len(o.eras) * len(o.conc) * len(o.servers) * o.reps
	gwTotal := 0
	if o.gateway {
		gwTotal = len(o.gatewayEras) * len(o.gatewayConc) * o.gatewayReps * 2
	}
	fmt.Fprintf(os.Stderr, "%d runs + %d gateway runs of %s + %s warm-up each (about %s)\n", total, gwTotal,
		o.duration, o.warmup, (time.Duration(total+gwTotal) * (o.duration + o.warmup + 300*time.Millisecond)).Round(time.Second))
	ticks := proc.ClockTicks()
	rep := &Report{Meta: meta(o, ticks)}
	n := 0
	for _, era := range o.eras {
		for _, c := range o.conc {
			for r := 1; r <= o.reps; r++ {
				for _, s := range o.servers {
					n++
					res, err := runOne(ctx, cs, filepath.Join(tmp, s), s, era, c, r, o, ticks, logf)
					if err != nil {
						if ctx.Err() != nil {
							return ctx.Err()
						}
						return fmt.Errorf("%s %s c=%d rep %d: %w (server log: see below)\n%s", s, era, c, r, err, tail(logf.Name()))
					}
					fmt.Fprintf(os.Stderr, "[%2d/%d] %-6s c=%-2d %-6s rep %d: %7.0f req/s  p50 %6.0fµs  p99 %6.0fµs  CPU %6.1fµs/call (%3.0f%%)  RSS %5.1f MiB  errors %d\n",
						n, total, era, c, s, r, res.ReqPerSec, res.P50Us, res.P99Us, res.CPUPerCallUs, res.CPUPercent, res.RSSMiB, res.Errors)
					rep.Runs = append(rep.Runs, res)
				}
			}
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
	if len(o.servers) > 0 {
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

// runOne starts a fresh server, drives one measured run at it and stops it.
func runOne(ctx context.Context, cs *children, bin, server, era string, c, rep int, o options, ticks int64, logf *os.File) (Run, error) {
	fmt.Fprintf(logf, "=== %s %s c=%d rep %d\n", server, era, c, rep)
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
		Concurrency: c,
		Duration:    o.duration,
		Warmup:      o.warmup,
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
