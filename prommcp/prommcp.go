// Package prommcp serves what an agnara-go MCP server does as Prometheus
// metrics: calls by tool, outcome and reason with their latency, the
// input-required rounds and refused request states, sessions and streams
// against their caps, rate-limit refusals, approvals and tasks through
// their stores, and a gateway's upstreams. docs/operating.md lists every
// metric; docs/grafana/agnara.json is a dashboard built from exactly
// these names.
//
// It is a separate package so that the core stays free of the Prometheus
// client, and it sits beside the packages it observes (mcpexpose, gateway,
// approval, tasks), importing them; none of them imports it. A [Metrics]
// is an [mcpexpose.Meter]: set it in ServerOptions.Meter, hand it the
// [mcpexpose.Handler] whose load it reports, wrap the approval and task
// stores with it, and serve [Metrics.Handler] on an address of its own.
//
//	m, err := prommcp.New(nil)
//	store = m.Approvals(store)
//	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Meter: m}})
//	m.Handler(h)
//	go http.Serve(metricsListener, m.HTTPHandler())
//
// Labels are bounded: tool names come from the catalog, outcomes and
// reasons from closed sets, upstreams from the config. No principal,
// argument or message ever becomes a label.
package prommcp

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric this package registers.
const Namespace = "agnara"

const (
	reasonRateLimited    = execution.ReasonRateLimited
	outcomeInputRequired = string(agnara.LabelInputRequired)
)

// Options configures [New]. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// Registry receives the metrics. Default: a new registry holding also
	// the Go runtime's and the process's collectors.
	Registry *prometheus.Registry
	// Buckets are the latency histograms' upper bounds, in seconds.
	// Default: prometheus.DefBuckets (5 ms to 10 s).
	Buckets []float64
}

// Metrics holds the instruments and counts into them as a server's
// [mcpexpose.Meter]. It is safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	calls      *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	rounds     *prometheus.CounterVec
	stateRef   *prometheus.CounterVec
	replayErrs *prometheus.CounterVec
	limited    *prometheus.CounterVec
	refused    *prometheus.CounterVec

	mu     sync.RWMutex
	series map[callKey]callSeries // the call series met so far

	approvals approvalMetrics
	tasks     taskMetrics
	upstreams atomic.Pointer[upstreamMetrics] // nil until Gateway
	buckets   []float64

	handlerOnce bool
	gatewayOnce bool
	onceMu      sync.Mutex
}

// callKey names one call series.
type callKey struct {
	tool, outcome, reason string
}

// callSeries are the instruments one call series counts into, looked up
// once.
type callSeries struct {
	calls    prometheus.Counter
	duration prometheus.Observer
	rounds   prometheus.Counter // nil unless the outcome is input_required
}

var _ mcpexpose.Meter = (*Metrics)(nil)

// New creates the instruments and registers them.
func New(opts *Options) (*Metrics, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
		if err := errors.Join(o.Registry.Register(collectors.NewGoCollector()),
			o.Registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))); err != nil {
			return nil, errors.New("prommcp: " + err.Error())
		}
	}
	if o.Buckets == nil {
		o.Buckets = prometheus.DefBuckets
	}
	m := &Metrics{
		reg:     o.Registry,
		buckets: o.Buckets,
		series:  make(map[callKey]callSeries),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "mcp", Name: "calls_total",
			Help: "Decided tools/call requests by tool, outcome (ok, input_required, a failure code, canceled, error) and failure reason."}, []string{"tool", "outcome", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "mcp", Name: "call_duration_seconds",
			Help: "How long the server took to decide a tools/call, by tool.", Buckets: o.Buckets}, []string{"tool"}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "mcp", Name: "input_required_rounds_total",
			Help: "tools/call rounds that ended by asking the caller for input (a confirmation, a form), by tool."}, []string{"tool"}),
		stateRef: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "mcp", Name: "request_state_refused_total",
			Help: "tools/call requests whose requestState was refused (forged, expired, replayed, for another tool version), by method."}, []string{"method"}),
		replayErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "mcp", Name: "replay_store_errors_total",
			Help: "requestStates refused because the replay store could not answer, by method."}, []string{"method"}),
		limited: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "mcp", Name: "rate_limited_total",
			Help: "Requests refused by their rate limit, by method."}, []string{"method"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Subsystem: "mcp", Name: "refused_total",
			Help: "Sessions and streams refused at their caps, by what was refused (session, stream)."}, []string{"kind"}),
	}
	m.approvals.init()
	m.tasks.init()
	if err := m.reg.Register(newBuildInfo()); err != nil {
		return nil, errors.New("prommcp: " + err.Error())
	}
	// Series known in advance start at zero, so that a rate over them is
	// defined before the first event.
	m.limited.WithLabelValues("tools/call")
	m.refused.WithLabelValues("session")
	m.refused.WithLabelValues("stream")
	m.stateRef.WithLabelValues("tools/call")
	m.replayErrs.WithLabelValues("tools/call")
	return m, nil
}

// serverCollectors are the series of a process serving MCP, registered
// by [Metrics.Handler]: a process that serves none (an approval inbox)
// exports none of them.
func (m *Metrics) serverCollectors() []prometheus.Collector {
	return []prometheus.Collector{m.calls, m.duration, m.rounds, m.stateRef, m.replayErrs, m.limited, m.refused}
}

// register registers cs, all or none.
func (m *Metrics) register(cs ...prometheus.Collector) error {
	for i, c := range cs {
		if err := m.reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				m.reg.Unregister(done)
			}
			return errors.New("prommcp: " + err.Error())
		}
	}
	return nil
}

// Registry returns the registry the metrics are in, for a host that adds
// its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// HTTPHandler serves the registry in the Prometheus exposition formats.
// Serve it on an address of its own (a metrics listener), not beside the
// MCP endpoint.
func (m *Metrics) HTTPHandler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Call implements [mcpexpose.Meter]: it counts the call under its tool,
// outcome and reason, observes its duration and, for an input-required
// round, counts the round; a call refused by its rate limit is counted
// under rate_limited_total too.
func (m *Metrics) Call(c mcpexpose.CallMetric) {
	key := callKey{c.Tool, string(c.Outcome), string(c.Reason)}
	m.mu.RLock()
	s, ok := m.series[key]
	m.mu.RUnlock()
	if !ok {
		s = m.newSeries(key)
	}
	s.calls.Inc()
	s.duration.Observe(c.Duration.Seconds())
	if s.rounds != nil {
		s.rounds.Inc()
	}
	if c.Reason == reasonRateLimited {
		m.limited.WithLabelValues("tools/call").Inc()
	}
	if u := m.upstreams.Load(); u != nil {
		u.observe(c)
	}
}

// newSeries looks up key's instruments and keeps them.
func (m *Metrics) newSeries(key callKey) callSeries {
	s := callSeries{
		calls:    m.calls.WithLabelValues(key.tool, key.outcome, key.reason),
		duration: m.duration.WithLabelValues(key.tool),
	}
	if key.outcome == outcomeInputRequired {
		s.rounds = m.rounds.WithLabelValues(key.tool)
	}
	m.mu.Lock()
	m.series[key] = s
	m.mu.Unlock()
	return s
}

// Count implements [mcpexpose.Meter].
func (m *Metrics) Count(e mcpexpose.MeterEvent, method string) {
	switch e {
	case mcpexpose.EventStateRefused:
		m.stateRef.WithLabelValues(method).Inc()
	case mcpexpose.EventStateStoreError:
		m.replayErrs.WithLabelValues(method).Inc()
	case mcpexpose.EventRateLimited:
		m.limited.WithLabelValues(method).Inc()
	case mcpexpose.EventSessionRefused:
		m.refused.WithLabelValues("session").Inc()
	case mcpexpose.EventStreamRefused:
		m.refused.WithLabelValues("stream").Inc()
	}
}

// Loader is what [Metrics.Handler] reads at each scrape: an
// [*mcpexpose.Handler], or a gateway.Gateway serving one.
type Loader interface {
	Load() mcpexpose.Load
}

// Handler registers the series of a process serving MCP: the calls,
// rounds and refusals counted as the [mcpexpose.Meter], and h's sessions
// and streams against their caps, read at each scrape. Until it is
// called none of them is exported (a process that serves no MCP, such as
// an approval inbox, has none), though calls are counted from the start.
// With an approval store wrapped ([Metrics.Approvals]) it also registers
// the dispatches and receipts of approved writes, which only a process
// serving MCP makes. One handler per Metrics; a second is an error.
func (m *Metrics) Handler(h Loader) error {
	m.onceMu.Lock()
	defer m.onceMu.Unlock()
	if m.handlerOnce {
		return errors.New("prommcp: Handler called twice: one Metrics reports one handler")
	}
	if h == nil {
		return errors.New("prommcp: Handler needs a handler")
	}
	cs := append(m.serverCollectors(), loadCollector{h})
	if m.approvals.registered {
		cs = append(cs, m.approvals.dispatchCollectors()...)
	}
	if err := m.register(cs...); err != nil {
		return err
	}
	m.handlerOnce = true
	return nil
}

var (
	descSessions    = prometheus.NewDesc(Namespace+"_mcp_sessions", "Live handshake-era sessions (and those being opened).", nil, nil)
	descSessionsMax = prometheus.NewDesc(Namespace+"_mcp_sessions_max", "The cap on live sessions (Limits.MaxSessions); -1 for none.", nil, nil)
	descStreams     = prometheus.NewDesc(Namespace+"_mcp_streams", "Open subscriptions/listen streams.", nil, nil)
	descStreamsMax  = prometheus.NewDesc(Namespace+"_mcp_streams_max", "The cap on open streams (Limits.MaxStreams); -1 for none.", nil, nil)
)

// loadCollector reads a handler's load at scrape time.
type loadCollector struct{ h Loader }

func (c loadCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descSessions
	ch <- descSessionsMax
	ch <- descStreams
	ch <- descStreamsMax
}

func (c loadCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.h.Load()
	gauge(ch, descSessions, float64(l.Sessions))
	gauge(ch, descSessionsMax, float64(capOf(l.MaxSessions)))
	gauge(ch, descStreams, float64(l.Streams))
	gauge(ch, descStreamsMax, float64(capOf(l.MaxStreams)))
}

// gauge sends one gauge value of d, which has the label values lvs.
// NewConstMetric fails only for label values that do not match d, which
// the callers here never pass; such a value would be dropped, not sent.
func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lvs ...string) {
	if mt, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, lvs...); err == nil {
		ch <- mt
	}
}

// counter is gauge for a counter read from elsewhere.
func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, lvs ...string) {
	if mt, err := prometheus.NewConstMetric(d, prometheus.CounterValue, v, lvs...); err == nil {
		ch <- mt
	}
}

// capOf is a cap as a metric reports it: -1 for none.
func capOf(n int) int {
	if n < 0 {
		return -1
	}
	return n
}
