package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agnara-go/agnara/bench/load"
)

// profiledServer is the server profiled on the realistic workload.
const profiledServer = "agnara"

// Profile is where the agnara server's CPU went on the realistic workload:
// the top entries of a CPU profile of one run (the whole process: start,
// warm-up and window), as go tool pprof prints them.
type Profile struct {
	Server      string `json:"server"`
	Workload    string `json:"workload"`
	Era         string `json:"era"`
	Concurrency int    `json:"concurrency"`
	Calls       int    `json:"calls"`
	Errors      int    `json:"errors"`
	File        string `json:"file,omitempty"` // kept with -realistic-cpuprofile
	Top         string `json:"top"`            // go tool pprof -top -nodecount=10
	TopCum      string `json:"top_cum"`        // go tool pprof -top -cum -nodecount=20
}

// runProfiles runs the agnara server once per era on the realistic
// workload at o.profileConc clients with a CPU profile, and records the
// profile's top entries. These runs are not in the tables: the profiler
// costs the server some CPU of its own.
func runProfiles(ctx context.Context, o options, cs *children, bins string, logf *os.File, rep *Report) error {
	bin := filepath.Join(bins, profiledServer)
	for i, era := range o.eras {
		path := filepath.Join(bins, fmt.Sprintf("%s-realistic-%s.pprof", profiledServer, era))
		if o.profilePrefix != "" {
			path = fmt.Sprintf("%s-%s.pprof", o.profilePrefix, era)
		}
		fmt.Fprintf(logf, "=== profile %s realistic %s c=%d\n", profiledServer, era, o.profileConc)
		ch, err := startServer(ctx, profiledServer, bin, logf, "-cpuprofile", path)
		if err != nil {
			return err
		}
		cs.add(ch)
		res, err := load.Run(ctx, load.Config{
			URL: ch.url, Era: era, Workload: load.Realistic, Concurrency: o.profileConc,
			Duration: o.realisticDuration, Warmup: o.realisticWarmup,
		})
		cs.stop(ch) // the server writes the profile as it exits
		if err != nil {
			return fmt.Errorf("profile %s: %w", era, err)
		}
		p := Profile{Server: profiledServer, Workload: load.Realistic, Era: era, Concurrency: o.profileConc, Calls: res.Calls, Errors: res.Errors}
		if o.profilePrefix != "" {
			p.File = path
		}
		if p.Top, err = pprofTop(ctx, bin, path, false); err == nil {
			p.TopCum, err = pprofTop(ctx, bin, path, true)
		}
		if err != nil {
			return fmt.Errorf("profile %s: %w", era, err)
		}
		fmt.Fprintf(os.Stderr, "[profile %d/%d] %s realistic %-6s c=%d: %d calls, errors %d\n%s\n",
			i+1, len(o.eras), profiledServer, era, o.profileConc, res.Calls, res.Errors, p.Top)
		rep.Profiles = append(rep.Profiles, p)
	}
	return nil
}

// pprofTop returns go tool pprof's top 10 of the CPU profile at path by
// own time, or with cum its top 20 by cumulative time (the first few of
// which are always net/http's serving loop and the handler's entry), from
// the line giving the profile's duration on.
func pprofTop(ctx context.Context, bin, path string, cum bool) (string, error) {
	args := []string{"tool", "pprof", "-top", "-nodecount=10"}
	if cum {
		args = []string{"tool", "pprof", "-top", "-cum", "-nodecount=20"}
	}
	cmd := exec.CommandContext(ctx, goCmd(), append(args, bin, path)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, stderr.Bytes())
	}
	return trimPprof(string(out)), nil
}

// trimPprof drops the header lines of go tool pprof's output before the
// one giving the profile's duration (the binary, its build id, the type,
// the time), which say nothing the report does not.
func trimPprof(out string) string {
	if i := strings.Index(out, "Duration:"); i >= 0 {
		out = out[i:]
	}
	return strings.TrimRight(out, "\n")
}

// versions returns the versions of the MCP libraries the servers in bins
// were built with (module path → version), read from their build
// information; nil when bins is "" or holds none of them.
func versions(bins string) map[string]string {
	if bins == "" {
		return nil
	}
	var out map[string]string
	for _, server := range []string{"sdk", "mcpgo"} {
		info, err := buildinfo.ReadFile(filepath.Join(bins, server))
		if err != nil {
			continue
		}
		for _, d := range info.Deps {
			if d.Path == "github.com/mark3labs/mcp-go" || d.Path == "github.com/modelcontextprotocol/go-sdk" {
				if out == nil {
					out = map[string]string{}
				}
				out[d.Path] = d.Version
			}
		}
	}
	return out
}

// peers are the servers agnara's CPU per call is divided by in the ratios
// table, with the column each heads.
var peers = []struct{ server, column string }{
	{"mcpgo", "agnara ÷ mcp-go"},
	{"sdk", "agnara ÷ sdk"},
	{"bare", "agnara ÷ bare"},
}

// cpuRatio returns agnara's CPU per call divided by server's in the
// summaries of one workload, era and concurrency, and false when either
// was not measured.
func (rep *Report) cpuRatio(w, era string, c int, server string) (float64, bool) {
	var a, p float64
	for _, s := range rep.Summary {
		if s.Workload != w || s.Era != era || s.Concurrency != c {
			continue
		}
		switch s.Server {
		case "agnara":
			a = s.CPUPerCallUs
		case server:
			p = s.CPUPerCallUs
		}
	}
	if a == 0 || p == 0 {
		return 0, false
	}
	return a / p, true
}

// floors are issue 42's targets that one make bench run can show: agnara's
// CPU per call at most max × the server's, for the workload at these
// concurrencies, on every era measured.
var floors = []struct {
	workload, server, label string
	max                     float64
	conc                    []int
}{
	{load.Realistic, "mcpgo", "realistic agnara ÷ mcp-go", 0.5, []int{8}},
	{load.Echo, "bare", "echo agnara ÷ bare", 1.25, []int{1, 8, 32}},
}

// ratiosMarkdown is the table of agnara's CPU per call divided by each
// other server's, per workload, era and concurrency, and issue 42's floor
// against it; "" without agnara or peers.
func (rep *Report) ratiosMarkdown() string {
	var b strings.Builder
	for _, s := range rep.Summary {
		if s.Server != "agnara" {
			continue
		}
		cells, some := make([]string, len(peers)), false
		for i, p := range peers {
			cells[i] = "–"
			if r, ok := rep.cpuRatio(s.Workload, s.Era, s.Concurrency, p.server); ok {
				cells[i], some = fmt.Sprintf("%.2f", r), true
			}
		}
		if !some {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("\n## agnara's CPU per call ÷ each other server's\n\n")
			b.WriteString("Medians of the tables above, within this run; lower is better. A ratio whose distance from 1 is smaller than the two servers' CPU ± is noise.\n\n")
			b.WriteString("| workload | era | c |")
			for _, p := range peers {
				fmt.Fprintf(&b, " %s |", p.column)
			}
			b.WriteString("\n| --- | --- | ---: |" + strings.Repeat(" ---: |", len(peers)) + "\n")
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s |\n", s.Workload, s.Era, s.Concurrency, strings.Join(cells, " | "))
	}
	if b.Len() == 0 {
		return ""
	}
	var lines []string
	for _, f := range floors {
		var got []string
		for _, era := range rep.Meta.Eras {
			for _, c := range f.conc {
				if r, ok := rep.cpuRatio(f.workload, era, c, f.server); ok {
					verdict := "met"
					if r > f.max {
						verdict = "not met"
					}
					got = append(got, fmt.Sprintf("%s c=%d %.2f (%s)", era, c, r, verdict))
				}
			}
		}
		if len(got) > 0 {
			lines = append(lines, fmt.Sprintf("- %s ≤ %.2f at c = %s: %s.", f.label, f.max, joinInts(f.conc), strings.Join(got, ", ")))
		}
	}
	if len(lines) > 0 {
		b.WriteString("\nIssue 42's floor, in this run:\n\n" + strings.Join(lines, "\n") + "\n")
	}
	return b.String()
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// profilesMarkdown is the top entries of each profile; "" without any.
func (rep *Report) profilesMarkdown() string {
	if len(rep.Profiles) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Where agnara's CPU goes on the realistic workload\n\n")
	b.WriteString("A CPU profile of the agnara server over one more run per era (not in the tables: the profiler costs CPU of its own), the whole process: `go tool pprof -top -nodecount=10` (by own time), then `-top -cum -nodecount=20` (by cumulative time).\n")
	for _, p := range rep.Profiles {
		fmt.Fprintf(&b, "\n### %s, c=%d, %d calls\n\n```\n%s\n```\n\n```\n%s\n```\n", eraTitle[p.Era], p.Concurrency, p.Calls, p.Top, p.TopCum)
	}
	return b.String()
}
