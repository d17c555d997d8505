package gateway

import (
	"context"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/peers"
)

// records is a slog.Handler that keeps each record's line and lines
// attributes and signals every record on got.
type records struct {
	mu  sync.Mutex
	all []stderrRecord
	got chan struct{}
}

type stderrRecord struct {
	line  string
	lines int64
}

func newRecords() *records { return &records{got: make(chan struct{}, 1000)} }

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *records) WithGroup(string) slog.Handler            { return h }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	rec := stderrRecord{lines: 1}
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "line":
			rec.line = a.Value.String()
		case "lines":
			rec.lines = a.Value.Int64()
		}
		return true
	})
	h.mu.Lock()
	h.all = append(h.all, rec)
	h.mu.Unlock()
	h.got <- struct{}{}
	return nil
}

func (h *records) snapshot() []stderrRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]stderrRecord(nil), h.all...)
}

// wait blocks until n records in all have been handled.
func (h *records) wait(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for len(h.snapshot()) < n {
		select {
		case <-h.got:
		case <-deadline:
			t.Fatalf("waited for %d records, have %v", n, h.snapshot())
		}
	}
}

// logged runs logLines over what write writes, to its end.
func logged(t *testing.T, write func(w io.Writer, h *records)) []stderrRecord {
	t.Helper()
	h := newRecords()
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		logLines(r, slog.New(h), "info")
	}()
	write(w, h)
	w.Close()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("logLines did not return after its input ended")
	}
	return h.snapshot()
}

const nodeTrace = `/srv/app/index.js:3
    throw new Error("no database");
    ^

Error: no database
    at connect (/srv/app/index.js:3:11)
    at Object.<anonymous> (/srv/app/index.js:5:1)
    at Module._compile (node:internal/modules/cjs/loader:1730:14)

Node.js v22.23.3
`

func TestChildStderrBurstIsOneRecord(t *testing.T) {
	numbered := func(n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString("line " + strconv.Itoa(i) + "\n")
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		write func(w io.Writer, h *records)
		want  []stderrRecord
	}{
		{
			name:  "a crash trace written at once",
			write: func(w io.Writer, _ *records) { io.WriteString(w, nodeTrace) },
			want:  []stderrRecord{{line: strings.TrimSuffix(nodeTrace, "\n"), lines: 10}},
		},
		{
			name:  "one line",
			write: func(w io.Writer, _ *records) { io.WriteString(w, "listening on stdio\r\n") },
			want:  []stderrRecord{{line: "listening on stdio", lines: 1}},
		},
		{
			name: "two bursts apart",
			write: func(w io.Writer, h *records) {
				io.WriteString(w, "starting\nready\n")
				h.wait(t, 1) // the first burst is logged before the second is written
				io.WriteString(w, "Error: boom\n    at main\n")
			},
			want: []stderrRecord{{line: "starting\nready", lines: 2}, {line: "Error: boom\n    at main", lines: 2}},
		},
		{
			name:  "a long burst is cut into bounded records",
			write: func(w io.Writer, _ *records) { io.WriteString(w, numbered(150)) },
			want: []stderrRecord{
				{line: strings.TrimSuffix(numbered(64), "\n"), lines: 64},
				{line: strings.TrimSuffix(strings.TrimPrefix(numbered(128), numbered(64)), "\n"), lines: 64},
				{line: strings.TrimSuffix(strings.TrimPrefix(numbered(150), numbered(128)), "\n"), lines: 22},
			},
		},
		{
			name:  "a long line is cut",
			write: func(w io.Writer, _ *records) { io.WriteString(w, strings.Repeat("x", 3*stderrLineBytes)+"\nafter\n") },
			want:  []stderrRecord{{line: strings.Repeat("x", stderrLineBytes) + " …(cut)\nafter", lines: 2}},
		},
		{
			name: "a line before a prompt that waits",
			write: func(w io.Writer, h *records) {
				io.WriteString(w, "ready\nprompt> ")
				h.wait(t, 1) // logged while the prompt's line is still open
			},
			want: []stderrRecord{{line: "ready", lines: 1}, {line: "prompt> ", lines: 1}},
		},
		{
			name:  "no newline at the end",
			write: func(w io.Writer, _ *records) { io.WriteString(w, "last words") },
			want:  []stderrRecord{{line: "last words", lines: 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := logged(t, tc.write)
			if len(got) != len(tc.want) {
				t.Fatalf("%d records %q, want %d %q", len(got), got, len(tc.want), tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("record %d is %q (lines=%d), want %q (lines=%d)", i, got[i].line, got[i].lines, tc.want[i].line, tc.want[i].lines)
				}
			}
		})
	}
}

// A real Node.js process that throws: its whole trace is one record.
func TestNodeCrashTraceIsOneRecord(t *testing.T) {
	node := peers.Node(t)
	cmd := exec.Command(node, "-e", `function connect() { throw new Error("no database") } connect()`)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := newRecords()
	logLines(stderr, slog.New(h), "warn")
	if err := cmd.Wait(); err == nil {
		t.Fatal("node exited 0; want the uncaught error's exit status")
	}
	got := h.snapshot()
	if len(got) != 1 || got[0].lines < 3 || !strings.Contains(got[0].line, "Error: no database") || !strings.Contains(got[0].line, "at connect") {
		t.Fatalf("node's crash was logged as %d records %q; want one record holding the error and its stack", len(got), got)
	}
}

// A child's last words are logged before its connection's Close returns,
// so that a gateway shutting down (or exiting) does not lose the stderr a
// burst still held back.
func TestChildLastWordsLoggedBeforeCloseReturns(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh: %v", err)
	}
	h := newRecords()
	tr := &stdioTransport{
		upstream: "last",
		cfg:      &StdioUpstream{Command: sh, Args: []string{"-c", "cat >/dev/null; echo 'last words' >&2"}},
		logger:   slog.New(h),
		maxLine:  1 << 20,
		lookup:   func(string) (string, bool) { return "", false },
	}
	for range 20 {
		h.mu.Lock()
		h.all = nil
		h.mu.Unlock()
		conn, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conn.Close()
		var said bool
		for _, r := range h.snapshot() {
			said = said || r.line == "last words"
		}
		if !said {
			t.Fatalf("after Close returned, the log holds %q; want the child's last words", h.snapshot())
		}
	}
}
