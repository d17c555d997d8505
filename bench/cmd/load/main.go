// Command load drives tools/call load at one MCP endpoint on loopback and
// reports throughput and latency (and, with -pid, the server's CPU time per
// call, read from /proc).
//
//	go run ./cmd/load -url http://127.0.0.1:PORT/mcp -era modern -c 8 -d 3s [-workload realistic]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/bench/internal/proc"
	"github.com/agnara-go/agnara/bench/load"
)

func main() {
	var cfg load.Config
	flag.StringVar(&cfg.URL, "url", "", "MCP endpoint on a loopback address, such as http://127.0.0.1:8080/mcp")
	flag.StringVar(&cfg.Era, "era", load.Modern, "protocol era: modern (2026-07-28, stateless) or legacy (2025-11-25, sessions)")
	flag.StringVar(&cfg.Workload, "workload", load.Echo, "echo (the echo tool) or realistic (the quote tool: a 2.4 KB order in, the whole 4.5 KB result checked)")
	flag.IntVar(&cfg.Concurrency, "c", 8, "concurrent workers (connections; legacy: sessions)")
	flag.DurationVar(&cfg.Duration, "d", 3*time.Second, "measured duration")
	flag.DurationVar(&cfg.Warmup, "warmup", time.Second, "warm-up before measuring")
	flag.StringVar(&cfg.Token, "token", "", "bearer token to send (optional)")
	pid := flag.Int("pid", 0, "server process id: also report its CPU time per call")
	asJSON := flag.Bool("json", false, "print the result as JSON")
	flag.Parse()
	log.SetFlags(0)

	var before, after int64
	if *pid > 0 {
		read := func(dst *int64) func() {
			return func() {
				t, err := proc.CPUTicks(*pid)
				if err != nil {
					log.Fatal(err)
				}
				*dst = t
			}
		}
		cfg.OnStart, cfg.OnEnd = read(&before), read(&after)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := load.Run(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	cpuPerCall := 0.0
	if *pid > 0 && res.Calls > 0 {
		cpuPerCall = float64(proc.CPUTime(after-before, proc.ClockTicks()).Microseconds()) / float64(res.Calls)
	}
	if *asJSON {
		out := struct {
			load.Result
			ServerCPUPerCallUs float64 `json:"server_cpu_us_per_call,omitempty"`
		}{res, cpuPerCall}
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Println(string(b))
	} else {
		fmt.Println(res)
		if cpuPerCall > 0 {
			fmt.Printf("server CPU: %.1f µs/call\n", cpuPerCall)
		}
		for _, s := range res.ErrorSamples {
			fmt.Println("error:", s)
		}
	}
	if res.Errors > 0 {
		os.Exit(1)
	}
}
