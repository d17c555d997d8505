package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/agnara-go/agnara/gateway"
)

// toolNames collects the repeated -tool flag.
type toolNames []string

func (t *toolNames) String() string { return strings.Join(*t, ",") }

func (t *toolNames) Set(v string) error {
	*t = append(*t, v)
	return nil
}

// gatewayPins runs `agnara gateway diff` (accept false) and `agnara
// gateway accept`: both connect to every upstream of the config
// (gateway.Inspect) and compare what it offers with the lock file; accept
// then pins it.
func (c *cli) gatewayPins(args []string, accept bool) int {
	command := "diff"
	if accept {
		command = "accept"
	}
	flags := flag.NewFlagSet("gateway "+command, flag.ContinueOnError)
	flags.SetOutput(c.stderr)
	flags.Usage = func() { fmt.Fprint(c.stderr, gatewayUsage) }
	path := flags.String("config", "", "")
	level := flags.String("log-level", "warn", "")
	var tools toolNames
	if accept {
		flags.Var(&tools, "tool", "")
	}
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() > 0 {
		fmt.Fprintf(c.stderr, "agnara gateway %s: unexpected argument %q\n\n%s", command, flags.Arg(0), gatewayUsage)
		return 2
	}
	if *path == "" {
		fmt.Fprintf(c.stderr, "agnara gateway %s: -config FILE is required\n\n%s", command, gatewayUsage)
		return 2
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(c.stderr, "agnara gateway %s: -log-level %q: want debug, info, warn or error\n", command, *level)
		return 2
	}
	cfg, err := gateway.Load(*path)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: lvl}))
	review, err := gateway.Inspect(ctx, *cfg, &gateway.Options{Logger: logger})
	if err != nil {
		fmt.Fprintf(c.stderr, "agnara gateway %s: %v\n", command, err)
		return 1
	}
	if !accept {
		return c.printDiff(review, cfg.Lock)
	}
	lock, err := review.Accept(tools...)
	if err != nil {
		fmt.Fprintf(c.stderr, "agnara gateway accept: nothing written: %v\n", err)
		return 1
	}
	named := map[string]bool{}
	for _, n := range tools {
		named[n] = true
	}
	unread := 0
	for _, ch := range review.Changes() {
		_, live := review.Live(ch.Name)
		switch {
		case ch.Reason == "":
		case live && (len(tools) == 0 || named[ch.Name]):
			what := "new"
			if ch.Reason == gateway.ReasonDefinitionChanged {
				what = "changed: " + strings.Join(ch.Fields, ", ")
			}
			fmt.Fprintf(c.stdout, "pinned %s (%s)\n", ch.Name, what)
		case live:
			fmt.Fprintf(c.stdout, "left %s as it was (%s; not named by -tool)\n", ch.Name, ch.Reason)
		default:
			unread++
			fmt.Fprintf(c.stdout, "could not pin %s: its definition could not be read (%s); its pin, if any, is kept\n", ch.Name, ch.Reason)
		}
	}
	for _, p := range review.Unbound() {
		fmt.Fprintf(c.stdout, "dropped %s (no longer bound)\n", p.Entry.Name)
	}
	if err := lock.WriteFile(cfg.Lock); err != nil {
		fmt.Fprintf(c.stderr, "agnara gateway accept: %v\n", err)
		return 1
	}
	fmt.Fprintf(c.stdout, "wrote %s: %d pins; a running gateway serves them after SIGHUP\n", cfg.Lock, len(lock.Pins()))
	if unread > 0 {
		// A script must not take a lock that lacks what it meant to pin
		// for done: the gateway would hold those tools.
		fmt.Fprintf(c.stderr, "agnara gateway accept: %d bound tools could not be read and are not pinned; run accept again once their upstreams answer (an npx server may still be downloading)\n", unread)
		return 1
	}
	return 0
}

// printDiff prints how each bound tool's live definition differs from its
// pin, every value from an upstream escaped where it is not printable, and
// returns 0 when none does, 1 otherwise.
func (c *cli) printDiff(r *gateway.Review, lockPath string) int {
	differs := false
	for _, ch := range r.Changes() {
		head := fmt.Sprintf("%s (upstream %s, remote %s)", ch.Name, ch.Upstream, printable(ch.Remote))
		live, _ := r.Live(ch.Name)
		switch ch.Reason {
		case "":
			fmt.Fprintf(c.stdout, "%s: as pinned\n", head)
			continue
		case gateway.ReasonDefinitionChanged:
			fmt.Fprintf(c.stdout, "%s: changed: %s\n", head, strings.Join(ch.Fields, ", "))
			pin, _ := r.Lock().Pin(ch.Name)
			was, err1 := pin.Members()
			now, err2 := live.Members()
			if err1 != nil || err2 != nil {
				fmt.Fprintf(c.stdout, "  (the definitions cannot be shown: %v %v)\n", err1, err2)
				break
			}
			for _, f := range ch.Fields {
				printMember(c.stdout, f, was[f], now[f])
			}
		case gateway.ReasonDefinitionUnaccepted:
			fmt.Fprintf(c.stdout, "%s: not pinned: held until accepted\n", head)
			now, err := live.Members()
			if err != nil {
				fmt.Fprintf(c.stdout, "  (the definition cannot be shown: %v)\n", err)
				break
			}
			for _, f := range slices.Sorted(mapKeys(now)) {
				printMember(c.stdout, f, nil, now[f])
			}
		default:
			fmt.Fprintf(c.stdout, "%s: its definition could not be read: %s\n", head, ch.Reason)
			if err := r.Problem(ch.Name); err != nil {
				fmt.Fprintf(c.stdout, "  %s\n", printable(err.Error()))
			}
		}
		differs = true
	}
	for _, p := range r.Unbound() {
		fmt.Fprintf(c.stdout, "%s (upstream %s): pinned, no longer bound: accept drops it\n", p.Entry.Name, p.Upstream)
		differs = true
	}
	if differs {
		return 1
	}
	fmt.Fprintf(c.stdout, "%s pins every bound tool as its upstream offers it\n", lockPath)
	return 0
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// printMember prints one member of a pin as a line diff from was to now
// (nil: absent), indented under its name; a view's page as [printPage]
// does.
func printMember(w io.Writer, name string, was, now json.RawMessage) {
	if name == "ui.html" {
		printPage(w, was, now)
		return
	}
	fmt.Fprintf(w, "  %s:\n", name)
	for _, l := range lineDiff(memberLines(was), memberLines(now)) {
		fmt.Fprintf(w, "    %s\n", l)
	}
}

// memberLines renders a member's canonical JSON for reading: a string as
// its lines, each printable or quoted; anything else indented, with every
// character that is not printable escaped.
func memberLines(v json.RawMessage) []string {
	if v == nil {
		return nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = printable(l)
		}
		return lines
	}
	var b bytes.Buffer
	if err := json.Indent(&b, v, "", "  "); err != nil {
		return []string{escapeJSON(string(v), false)}
	}
	return strings.Split(escapeJSON(b.String(), true), "\n")
}

// maxPageLines bounds the lines of a page's diff printPage prints.
const maxPageLines = 200

// printPage prints the change of a view's page (a tool's MCP App, ADR 85):
// the size, line count and SHA-256 of each side, then the lines changed,
// each with the line before and after it, at most maxPageLines of them:
// the lock file holds the whole page for the review.
func printPage(w io.Writer, was, now json.RawMessage) {
	fmt.Fprintf(w, "  ui.html: %s -> %s\n", pageSummary(was), pageSummary(now))
	d := lineDiff(memberLines(was), memberLines(now))
	changed := func(i int) bool { return i >= 0 && i < len(d) && !strings.HasPrefix(d[i], "  ") }
	shown, gap := 0, false
	for i, l := range d {
		if !changed(i) && !changed(i-1) && !changed(i+1) {
			gap = true
			continue
		}
		if shown == maxPageLines {
			rest := 0
			for j := i; j < len(d); j++ {
				if changed(j) {
					rest++
				}
			}
			fmt.Fprintf(w, "    … %d more changed lines: the lock file holds the whole page\n", rest)
			return
		}
		if gap && shown > 0 {
			fmt.Fprintln(w, "    …")
		}
		gap = false
		fmt.Fprintf(w, "    %s\n", l)
		shown++
	}
}

// pageSummary describes a page (a JSON string) by its size, lines and
// SHA-256; "none" when absent.
func pageSummary(v json.RawMessage) string {
	var s string
	if v == nil || json.Unmarshal(v, &s) != nil {
		return "none"
	}
	lines := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		lines++ // the last line has no newline
	}
	return fmt.Sprintf("%d bytes, %d lines, sha256:%x", len(s), lines, sha256.Sum256([]byte(s)))
}

// maxDiffCells bounds the table lineDiff builds; past it, the diff is
// every old line removed and every new one added.
const maxDiffCells = 1 << 20

// lineDiff returns an edit script from a to b, a line each: "  " and the
// line when both have it, "- " when only a does, "+ " when only b does. It
// keeps a longest common subsequence of lines.
func lineDiff(a, b []string) []string {
	var out []string
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out = append(out, "- "+l)
		}
		for _, l := range b {
			out = append(out, "+ "+l)
		}
		return out
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case lcs[i+1][j] >= lcs[i][j+1]:
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, "- "+a[i])
	}
	for ; j < len(b); j++ {
		out = append(out, "+ "+b[j])
	}
	return out
}
