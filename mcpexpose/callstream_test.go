package mcpexpose_test

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
)

// TestEdgeStreamsProgressAsItHappens calls, at 2026-07-28, a tool that
// reports progress and then waits: the edge answers the call itself, and
// the client reads the progress while the tool still runs (each event is
// flushed as it is sent, as the SDK sends it), then the answer. Progress
// the tool reports after it has answered reaches no one and breaks
// nothing.
func TestEdgeStreamsProgressAsItHappens(t *testing.T) {
	release := make(chan struct{})
	late := make(chan struct{})
	app := agnara.New("progress", nil)
	exp := mcpexpose.New(app)
	exp.Tool(app.Capability(func(ec *execution.Context) (string, error) {
		ec.Progress(1, 2, "started")
		<-release
		go func() {
			defer close(late)
			time.Sleep(20 * time.Millisecond)
			ec.Progress(2, 2, "after the answer")
		}()
		return "done", nil
	}, &agnara.CapabilityOptions{Name: "slow", Description: "Reports progress, then waits."}), &mcpexpose.ToolOptions{Name: "slow"})
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{},"_meta":{"progressToken":"p",` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	hd := baseHeader("tools/call", "slow")
	req := httptest.NewRequest("POST", srv.URL+"/mcp", strings.NewReader(body))
	req.RequestURI = ""
	req.Header = hd
	// The client's side runs apart, so that a first event that never
	// comes fails the test instead of hanging it: without a flush, not
	// even the status would reach the client while the tool waits.
	type read struct {
		r     *bufio.Reader
		first string
		err   string
	}
	got := make(chan read, 1)
	var resp *http.Response
	go func() {
		var err error
		resp, err = srv.Client().Do(req)
		if err != nil {
			got <- read{err: err.Error()}
			return
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			got <- read{err: fmt.Sprintf("%d %s", resp.StatusCode, b)}
			return
		}
		r := bufio.NewReader(resp.Body)
		first, err := nextEvent(r)
		if err != nil {
			got <- read{err: err.Error()}
			return
		}
		got <- read{r: r, first: first}
	}()
	var rd read
	select {
	case rd = <-got:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("no event while the tool runs: the progress was not flushed")
	}
	if rd.err != "" {
		close(release)
		t.Fatal(rd.err)
	}
	defer resp.Body.Close()
	r, first := rd.r, rd.first
	if !strings.Contains(first, `"notifications/progress"`) || !strings.Contains(first, `"progressToken":"p"`) || !strings.Contains(first, `"started"`) {
		t.Fatalf("first event %q, want the progress the tool reported", first)
	}
	if resp.Header.Get("Content-Length") != "" {
		t.Errorf("a stream of progress carries a Content-Length %q", resp.Header.Get("Content-Length"))
	}
	close(release)
	answer, err := nextEvent(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(answer, `"id":1`) || !strings.Contains(answer, `\"result\":\"done\"`) {
		t.Fatalf("second event %q, want the answer", answer)
	}
	<-late
	if h.FastPathRequests() != 1 {
		t.Errorf("the edge answered %d requests, want the call", h.FastPathRequests())
	}
}

// nextEvent reads one server-sent event's data line.
func nextEvent(r *bufio.Reader) (string, error) {
	var data string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("reading the stream: %v (so far %q)", err, data)
		}
		line = strings.TrimRight(line, "\n")
		if line == "" && data != "" {
			return data, nil
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data = d
		}
	}
}
