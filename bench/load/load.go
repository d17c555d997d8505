// Package load is a bounded, loopback-only load generator for MCP
// tools/call: a fixed number of workers, each calling one tool in a loop
// over its own keep-alive connection, for a warm-up and then a measured
// window. It has two workloads: echo (a one-field message, echoed back) and
// realistic (internal/realistic's quote: a 2.4 KB nested order in, a 4.5 KB
// structured result out). It speaks both protocol eras:
//
//   - modern (2026-07-28): one POST per call, no session, with the
//     Mcp-Protocol-Version, Mcp-Method and Mcp-Name headers and the
//     protocol version, client info and capabilities in params._meta;
//   - legacy (2025-11-25): each worker opens a session (initialize, then
//     notifications/initialized) and calls with its Mcp-Session-Id.
//
// Every response is read whole and checked: a JSON-RPC response with the
// request's id, a result that is not isError and echoes the message (echo)
// or is the expected quote in both its structured content and its text
// (realistic), in a JSON or an SSE body. Anything else counts as an error.
package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agnara-go/agnara/bench/internal/realistic"
)

// The protocol eras, and the versions the generator speaks in each.
const (
	Modern = "modern"
	Legacy = "legacy"

	ModernVersion = "2026-07-28"
	LegacyVersion = "2025-11-25"
)

// The workloads.
const (
	// Echo calls the echo tool with a short message.
	Echo = "echo"
	// Realistic calls the quote tool of internal/realistic with its sample
	// order and checks the whole result.
	Realistic = "realistic"
)

// DefaultMessage is the echo tool's argument.
const DefaultMessage = "hello, world"

// maxBody bounds the size of a response the generator reads.
const maxBody = 4 << 20

// Config describes one load run. Zero Duration, Warmup, Message and
// Workload mean 3 s, 1 s, DefaultMessage and Echo.
type Config struct {
	URL         string // the MCP endpoint; its host must be a loopback address
	Era         string // Modern or Legacy
	Workload    string // Echo or Realistic
	Concurrency int    // workers, each with one connection and (legacy) one session
	Duration    time.Duration
	Warmup      time.Duration
	Token       string // sent as "Authorization: Bearer <Token>" when not empty
	Message     string // echo's argument (the echo workload only)
	// OnStart runs when the warm-up ends, just before the measured window
	// opens; OnEnd just after it closes. Either may be nil. The driver reads
	// the server's CPU time in them.
	OnStart, OnEnd func()
}

// Result is what one run measured. Calls, rates and latencies cover the
// measured window only (calls that completed inside it); Errors also counts
// the warm-up and session set-up.
type Result struct {
	Era          string        `json:"era"`
	Workload     string        `json:"workload"`
	Concurrency  int           `json:"concurrency"`
	Calls        int           `json:"calls"`
	Errors       int           `json:"errors"`
	ErrorSamples []string      `json:"error_samples,omitempty"`
	Window       time.Duration `json:"window_ns"`
	ReqPerSec    float64       `json:"req_per_sec"`
	P50          time.Duration `json:"p50_ns"`
	P99          time.Duration `json:"p99_ns"`
	Mean         time.Duration `json:"mean_ns"`
}

// String formats r on one line.
func (r Result) String() string {
	return fmt.Sprintf("%s c=%d: %d calls in %.2fs, %.0f req/s, p50 %s, p99 %s, %d errors",
		r.Era, r.Concurrency, r.Calls, r.Window.Seconds(), r.ReqPerSec, fmtDur(r.P50), fmtDur(r.P99), r.Errors)
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.0fµs", float64(d)/1e3) }

// CheckLoopback returns an error unless u is an http(s) URL whose host is a
// loopback address or "localhost".
func CheckLoopback(u string) error {
	p, err := url.Parse(u)
	if err != nil {
		return err
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return fmt.Errorf("%s: only http(s) URLs", u)
	}
	host := p.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s: the load generator only targets loopback addresses", u)
}

// Run runs the load described by cfg and returns what it measured. It
// returns an error when the run cannot start (a bad configuration, a
// session that cannot be opened) or ctx is cancelled; errors of individual
// calls are counted in the result.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if err := CheckLoopback(cfg.URL); err != nil {
		return Result{}, err
	}
	if cfg.Era != Modern && cfg.Era != Legacy {
		return Result{}, fmt.Errorf("era %q: want %q or %q", cfg.Era, Modern, Legacy)
	}
	if cfg.Workload == "" {
		cfg.Workload = Echo
	}
	if cfg.Workload != Echo && cfg.Workload != Realistic {
		return Result{}, fmt.Errorf("workload %q: want %q or %q", cfg.Workload, Echo, Realistic)
	}
	if cfg.Concurrency < 1 || cfg.Concurrency > 1024 {
		return Result{}, fmt.Errorf("concurrency %d: want 1 to 1024", cfg.Concurrency)
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 3 * time.Second
	}
	if cfg.Warmup < 0 {
		return Result{}, errors.New("negative warm-up")
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = time.Second
	}
	if cfg.Duration > time.Hour || cfg.Warmup > time.Hour {
		return Result{}, errors.New("runs are bounded: at most an hour")
	}
	if cfg.Message == "" {
		cfg.Message = DefaultMessage
	}

	tr := &http.Transport{
		Proxy:               nil, // loopback only: never through a proxy
		MaxIdleConns:        cfg.Concurrency,
		MaxIdleConnsPerHost: cfg.Concurrency,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ws := make([]*worker, cfg.Concurrency)
	for i := range ws {
		ws[i] = newWorker(client, cfg)
	}

	// Open the sessions (legacy) before the clock starts.
	var wg sync.WaitGroup
	setupErrs := make([]error, len(ws))
	for i, w := range ws {
		wg.Go(func() { setupErrs[i] = w.setup(runCtx) })
	}
	wg.Wait()
	defer func() {
		// Close the sessions; the server is about to be measured again or
		// killed, so failures here do not matter.
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer dcancel()
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Go(func() { w.close(dctx) })
		}
		wg.Wait()
	}()
	if err := errors.Join(setupErrs...); err != nil {
		return Result{}, fmt.Errorf("opening sessions: %w", err)
	}

	origin := time.Now()
	for _, w := range ws {
		wg.Go(func() { w.loop(runCtx, origin) })
	}
	sleep(runCtx, cfg.Warmup)
	if cfg.OnStart != nil && runCtx.Err() == nil {
		cfg.OnStart()
	}
	start := time.Since(origin)
	sleep(runCtx, cfg.Duration)
	end := time.Since(origin)
	if cfg.OnEnd != nil && runCtx.Err() == nil {
		cfg.OnEnd()
	}
	cancel()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}

	res := Result{Era: cfg.Era, Workload: cfg.Workload, Concurrency: cfg.Concurrency, Window: end - start}
	var lats []time.Duration
	var sum time.Duration
	for _, w := range ws {
		res.Errors += w.errors
		for _, s := range w.errSamples {
			if len(res.ErrorSamples) < 5 {
				res.ErrorSamples = append(res.ErrorSamples, s)
			}
		}
		for _, s := range w.samples {
			if s.end > start && s.end <= end {
				lats = append(lats, s.lat)
				sum += s.lat
			}
		}
	}
	res.Calls = len(lats)
	res.ReqPerSec = float64(res.Calls) / res.Window.Seconds()
	if len(lats) > 0 {
		slices.Sort(lats)
		res.P50 = percentile(lats, 0.50)
		res.P99 = percentile(lats, 0.99)
		res.Mean = sum / time.Duration(len(lats))
	}
	return res, nil
}

// percentile returns the nearest-rank p-quantile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	i := int(float64(len(sorted))*p+0.999999) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

type sample struct {
	end time.Duration // completion, since the run's origin
	lat time.Duration
}

type worker struct {
	client     *http.Client
	cfg        Config
	tool       string                      // the tool called
	check      func(json.RawMessage) error // checks a call's result
	session    string
	id         int64
	body       bytes.Buffer
	prefix     []byte // the request up to the id
	suffix     []byte // the request after the id
	samples    []sample
	errors     int
	errSamples []string
}

func newWorker(client *http.Client, cfg Config) *worker {
	msg, _ := json.Marshal(cfg.Message)
	tool, check := "echo", func(r json.RawMessage) error { return CheckEcho(r, msg) }
	var args any = map[string]any{"message": cfg.Message}
	if cfg.Workload == Realistic {
		tool, check, args = realistic.ToolName, CheckRealistic, realistic.Arguments()
	}
	params := map[string]any{"name": tool, "arguments": args}
	if cfg.Era == Modern {
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion":    ModernVersion,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "agnara-bench-load", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}
	}
	p, _ := json.Marshal(params)
	return &worker{
		client:  client,
		cfg:     cfg,
		tool:    tool,
		check:   check,
		prefix:  []byte(`{"jsonrpc":"2.0","id":`),
		suffix:  append(append([]byte(`,"method":"tools/call","params":`), p...), '}'),
		samples: make([]sample, 0, 1<<14),
	}
}

func (w *worker) fail(err error) {
	w.errors++
	if len(w.errSamples) < 3 {
		w.errSamples = append(w.errSamples, err.Error())
	}
}

// post sends body and reads the whole response into w.body.
func (w *worker) post(ctx context.Context, body []byte, method, name string, version string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		h.Set("Mcp-Protocol-Version", version)
	}
	if w.cfg.Era == Modern {
		h.Set("Mcp-Method", method)
		if name != "" {
			h.Set("Mcp-Name", name)
		}
	}
	if w.session != "" {
		h.Set("Mcp-Session-Id", w.session)
	}
	if w.cfg.Token != "" {
		h.Set("Authorization", "Bearer "+w.cfg.Token)
	}
	resp, err := w.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	w.body.Reset()
	if _, err := w.body.ReadFrom(io.LimitReader(resp.Body, maxBody)); err != nil {
		return nil, err
	}
	return resp, nil
}

// setup opens a legacy session; modern workers have nothing to set up.
func (w *worker) setup(ctx context.Context) error {
	if w.cfg.Era == Modern {
		return nil
	}
	init := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + LegacyVersion +
		`","capabilities":{},"clientInfo":{"name":"agnara-bench-load","version":"1"}}}`)
	resp, err := w.post(ctx, init, "initialize", "", "")
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("initialize: HTTP %d: %.200s", resp.StatusCode, w.body.Bytes())
	}
	result, err := Response(resp.Header.Get("Content-Type"), w.body.Bytes(), 0)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	var ir struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(result, &ir); err != nil || ir.ProtocolVersion != LegacyVersion {
		return fmt.Errorf("initialize: negotiated %q, want %s", ir.ProtocolVersion, LegacyVersion)
	}
	w.session = resp.Header.Get("Mcp-Session-Id")
	if w.session == "" {
		return errors.New("initialize: no Mcp-Session-Id")
	}
	resp, err = w.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized", "", LegacyVersion)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("notifications/initialized: HTTP %d: %.200s", resp.StatusCode, w.body.Bytes())
	}
	return nil
}

// close ends a legacy session.
func (w *worker) close(ctx context.Context) {
	if w.session == "" {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, w.cfg.URL, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", w.session)
	req.Header.Set("Mcp-Protocol-Version", LegacyVersion)
	if w.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+w.cfg.Token)
	}
	if resp, err := w.client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func (w *worker) loop(ctx context.Context, origin time.Time) {
	version := ModernVersion
	if w.cfg.Era == Legacy {
		version = LegacyVersion
	}
	buf := make([]byte, 0, len(w.prefix)+len(w.suffix)+20)
	for ctx.Err() == nil {
		w.id++
		buf = append(strconv.AppendInt(append(buf[:0], w.prefix...), w.id, 10), w.suffix...)
		t0 := time.Now()
		err := w.call(ctx, buf, version)
		t1 := time.Now()
		if err != nil {
			if ctx.Err() == nil {
				w.fail(err)
			}
			continue
		}
		w.samples = append(w.samples, sample{end: t1.Sub(origin), lat: t1.Sub(t0)})
	}
}

func (w *worker) call(ctx context.Context, body []byte, version string) error {
	resp, err := w.post(ctx, body, "tools/call", w.tool, version)
	if err != nil {
		return err
	}
	result, err := Response(resp.Header.Get("Content-Type"), w.body.Bytes(), w.id)
	if err != nil {
		return fmt.Errorf("HTTP %d: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP %d: %.200s", resp.StatusCode, w.body.Bytes())
	}
	return w.check(result)
}

// Messages returns the JSON-RPC messages of a response body: the body
// itself when it is JSON, the data of each event when contentType is
// text/event-stream.
func Messages(contentType string, body []byte) [][]byte {
	if !bytes.HasPrefix([]byte(contentType), []byte("text/event-stream")) {
		return [][]byte{body}
	}
	return Events(body)
}

// Events parses a text/event-stream body and returns the data of each
// event that has any (a priming event with empty data is skipped).
func Events(body []byte) [][]byte {
	var events [][]byte
	var data []byte
	has := false
	dispatch := func() {
		if has && len(data) > 0 {
			events = append(events, data)
		}
		data, has = nil, false
	}
	for len(body) > 0 {
		line := body
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line = body[:i]
			if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			body = body[i+1:]
		} else {
			body = nil
		}
		if len(line) == 0 {
			dispatch()
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // comments, id, event, retry
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			data = append(data, '\n')
		}
		data = append(data, value...)
		has = true
	}
	dispatch()
	return events
}

// Response finds the JSON-RPC response to request id in a response body
// (JSON or SSE) and returns its result, or an error when there is none or
// it is an error response.
func Response(contentType string, body []byte, id int64) (json.RawMessage, error) {
	want := strconv.AppendInt(nil, id, 10)
	for _, m := range Messages(contentType, body) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			return nil, fmt.Errorf("not JSON-RPC: %.200s", m)
		}
		if msg.Method != "" || !bytes.Equal(bytes.TrimSpace(msg.ID), want) {
			continue // a notification or request from the server, or another response
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("JSON-RPC error %d: %s", msg.Error.Code, msg.Error.Message)
		}
		if len(msg.Result) == 0 || string(msg.Result) == "null" {
			return nil, errors.New("response without result")
		}
		return msg.Result, nil
	}
	return nil, fmt.Errorf("no response to request %d in %q body %.200q", id, contentType, body)
}

// callResult is what the checks read of a tools/call result.
type callResult struct {
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	Content           []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
}

// completed decodes a tools/call result and returns an error unless it is a
// complete, successful one.
func completed(result json.RawMessage) (callResult, error) {
	var r callResult
	if err := json.Unmarshal(result, &r); err != nil {
		return r, fmt.Errorf("result: %w", err)
	}
	if r.IsError {
		return r, fmt.Errorf("tool error: %.200s", result)
	}
	if r.ResultType != "" && r.ResultType != "complete" {
		return r, fmt.Errorf("result type %q", r.ResultType)
	}
	return r, nil
}

// CheckEcho returns an error unless result is a successful tools/call
// result whose structured content and text both carry quoted, the message
// as a JSON string.
func CheckEcho(result json.RawMessage, quoted []byte) error {
	r, err := completed(result)
	if err != nil {
		return err
	}
	if !bytes.Contains(r.StructuredContent, quoted) {
		return fmt.Errorf("structured content does not echo the message: %.200s", result)
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" || !bytes.Contains([]byte(r.Content[0].Text), quoted) {
		return fmt.Errorf("text content does not echo the message: %.200s", result)
	}
	return nil
}
