package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/health"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/prommcp"
)

const gatewayUsage = `usage: agnara gateway -config FILE [-check] [-log-level info] [-audit FILE] [-metrics-addr A]
       agnara gateway diff -config FILE [-log-level warn]
       agnara gateway accept -config FILE [-tool NAME]... [-log-level warn]
       agnara gateway -sample

Serves the governed gateway a config file declares (package gateway;
see docs/gateway.md): its upstreams over HTTP or stdio, the tools bound
from each, under the gateway's own auth, limits and approvals. It prints
the MCP URL on its first line of output, logs to standard error, and stops
on SIGINT or SIGTERM (stdio upstreams are stopped with it). Unless GOGC
is set, it runs the collector at GOGC=400, the policy docs/operating.md
measures for a proxy; set GOMEMLIMIT below the memory it may use.

A tool is served only with the definition an operator accepted, pinned in
the lock file beside the config (gateway.yaml: gateway.lock; the config's
lock key names another). The gateway does not start without one. On
SIGHUP it re-reads the lock file (serving what was just accepted) and
retries every upstream marked failed.

  -config FILE     the gateway config (YAML)
  -check           check the config and exit: every mistake, with its line
  -sample          print a commented sample config and exit
  -log-level LVL   debug, info, warn or error (default info)
  -audit FILE      append an audit record per decided tools/call to FILE
                   (JSON lines, docs/audit.md; created 0600): who called
                   which tool, how it ended, and whose credential reached
                   the upstream
` + health.MetricsUsage + `
Beside the MCP endpoint it serves /healthz (the process serves) and
/readyz (the approval store answers and an upstream is up; 503 names
what is not).

Commands:
  diff     connect to every upstream and show how the definitions it
           offers differ from the lock file; exit 1 when any does
  accept   pin the definitions the upstreams offer now (every bound
           tool's, or only the -tool ones) in the lock file
`

// gateway runs `agnara gateway`.
func (c *cli) gateway(args []string) int {
	if len(args) > 0 {
		switch args[0] {
		case "diff":
			return c.gatewayPins(args[1:], false)
		case "accept":
			return c.gatewayPins(args[1:], true)
		}
	}
	flags := flag.NewFlagSet("gateway", flag.ContinueOnError)
	flags.SetOutput(c.stderr)
	flags.Usage = func() { fmt.Fprint(c.stderr, gatewayUsage) }
	path := flags.String("config", "", "")
	check := flags.Bool("check", false, "")
	sample := flags.Bool("sample", false, "")
	level := flags.String("log-level", "info", "")
	auditPath := flags.String("audit", "", "")
	var metricsAddr health.MetricsFlag
	flags.Var(&metricsAddr, "metrics-addr", "")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(c.stderr, "agnara gateway: unexpected argument %q\n\n%s", flags.Arg(0), gatewayUsage)
		return 2
	}
	if *sample {
		c.stdout.Write(gateway.Sample)
		return 0
	}
	if *path == "" {
		fmt.Fprint(c.stderr, "agnara gateway: -config FILE is required (-sample prints one)\n\n"+gatewayUsage)
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(c.stderr, "agnara gateway: -log-level %q: want debug, info, warn or error\n", *level)
		return 2
	}
	cfg, err := gateway.Load(*path)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	if *check {
		tools := 0
		for _, u := range cfg.Upstreams {
			tools += len(u.Tools)
		}
		fmt.Fprintf(c.stdout, "%s: ok: %d upstreams, %d tools, serving %s%s\n", *path, len(cfg.Upstreams), tools, cfg.Listen, cfg.Path)
		return 0
	}
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: lvl}))
	if percent, ok := gatewayGC(os.LookupEnv); ok {
		debug.SetGCPercent(percent)
		logger.Info("garbage collection target set for a proxy", slog.Int("gogc", percent))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reload := make(chan struct{})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				select {
				case reload <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	m, err := prommcp.New(nil)
	if err != nil {
		fmt.Fprintln(c.stderr, "agnara gateway:", err)
		return 1
	}
	served, err := health.ServeMetrics(ctx, &metricsAddr, m.HTTPHandler(), logger)
	if err != nil {
		fmt.Fprintln(c.stderr, "agnara gateway:", err)
		return 1
	}
	var audit mcpexpose.AuditSink
	if *auditPath != "" {
		f, err := os.OpenFile(*auditPath, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			fmt.Fprintln(c.stderr, "agnara gateway: -audit:", err)
			return 1
		}
		defer f.Close()
		audit = mcpexpose.NewSlogAudit(slog.New(slog.NewJSONHandler(f, nil)))
	}
	opts := &gateway.Options{Logger: logger, Reload: reload, Meter: m, WrapApprovals: m.Approvals, Audit: audit,
		Started: func(g *gateway.Gateway) {
			if err := errors.Join(m.Gateway(g), m.Handler(g)); err != nil {
				logger.Error("gateway metrics", slog.String("error", err.Error()))
			}
		}}
	err = gateway.Run(ctx, *cfg, opts, c.stdout)
	stop()
	<-served
	if err != nil {
		fmt.Fprintln(c.stderr, "agnara gateway:", err)
		return 1
	}
	return 0
}

// gatewayGOGC is the collector's target for a gateway: a proxy's live heap
// is small and nearly all it allocates dies with the call
// (docs/operating.md, "GC policy").
const gatewayGOGC = 400

// gatewayGC returns the GC percentage `agnara gateway` sets, and whether
// it sets one: none when the operator set GOGC.
func gatewayGC(lookup func(string) (string, bool)) (int, bool) {
	if _, set := lookup("GOGC"); set {
		return 0, false
	}
	return gatewayGOGC, true
}
