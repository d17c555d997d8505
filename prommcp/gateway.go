package prommcp

import (
	"errors"
	"sync"

	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/prometheus/client_golang/prometheus"
)

var (
	descUpstreamState = prometheus.NewDesc(Namespace+"_gateway_upstream_state",
		"1 for the state each upstream is in (starting, up, down, failed), 0 for the others.", []string{"upstream", "state"}, nil)
	descUpstreamSwaps = prometheus.NewDesc(Namespace+"_gateway_upstream_swaps_total",
		"Catalogs of each upstream served after its first.", []string{"upstream"}, nil)
	descUpstreamConns = prometheus.NewDesc(Namespace+"_gateway_upstream_connections_total",
		"Sessions made to each upstream (for stdio, processes started).", []string{"upstream"}, nil)
	upstreamStates = []gateway.State{gateway.StateStarting, gateway.StateUp, gateway.StateDown, gateway.StateFailed}
)

// upstreamMetrics reports a gateway's upstreams: their state, swaps and
// connections read from Gateway.Status at each scrape, and the latency of
// the calls each serves.
type upstreamMetrics struct {
	g        *gateway.Gateway
	duration *prometheus.HistogramVec

	mu  sync.RWMutex
	of  map[string]prometheus.Observer // by tool wire name; nil for a tool of no upstream
	all map[string]string              // tool wire name → upstream, from the last Status
}

// Gateway reports g's upstreams, and the latency of calls by the upstream
// that serves the tool (set the Metrics as the gateway's
// Options.Meter too). One gateway per Metrics; a second is an error.
func (m *Metrics) Gateway(g *gateway.Gateway) error {
	m.onceMu.Lock()
	defer m.onceMu.Unlock()
	if m.gatewayOnce {
		return errors.New("prommcp: Gateway called twice: one Metrics reports one gateway")
	}
	if g == nil {
		return errors.New("prommcp: Gateway needs a gateway")
	}
	u := newUpstreamMetrics(g, m.buckets)
	if err := errors.Join(m.reg.Register(u.duration), m.reg.Register(u)); err != nil {
		return errors.New("prommcp: " + err.Error())
	}
	m.upstreams.Store(u)
	m.gatewayOnce = true
	return nil
}

func newUpstreamMetrics(g *gateway.Gateway, buckets []float64) *upstreamMetrics {
	return &upstreamMetrics{
		g: g,
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Subsystem: "gateway", Name: "upstream_call_duration_seconds",
			Help: "How long the gateway took to decide a tools/call, by the upstream serving the tool.", Buckets: buckets}, []string{"upstream"}),
		of: map[string]prometheus.Observer{},
	}
}

// observe records c's duration under the upstream of its tool. A tool
// first seen is looked up in the gateway's status once.
func (u *upstreamMetrics) observe(c mcpexpose.CallMetric) {
	u.mu.RLock()
	o, ok := u.of[c.Tool]
	u.mu.RUnlock()
	if !ok {
		o = u.learn(c.Tool)
	}
	if o != nil {
		o.Observe(c.Duration.Seconds())
	}
}

// learn finds the upstream serving tool, from a fresh status when the last
// one does not name it.
func (u *upstreamMetrics) learn(tool string) prometheus.Observer {
	u.mu.Lock()
	defer u.mu.Unlock()
	up, ok := u.all[tool]
	if !ok {
		u.all = toolsOf(u.g.Config().Name, u.g.Status())
		up, ok = u.all[tool]
	}
	var o prometheus.Observer
	if ok {
		o = u.duration.WithLabelValues(up)
	}
	u.of[tool] = o
	return o
}

// toolsOf maps the wire name of every served tool ("<gateway>.<local
// name>", what a call names) to its upstream.
func toolsOf(name string, st []gateway.UpstreamStatus) map[string]string {
	all := map[string]string{}
	for _, s := range st {
		for _, t := range s.Tools {
			all[name+"."+t] = s.Name
		}
	}
	return all
}

func (u *upstreamMetrics) Describe(ch chan<- *prometheus.Desc) {
	ch <- descUpstreamState
	ch <- descUpstreamSwaps
	ch <- descUpstreamConns
}

// Collect reads the gateway's status, and forgets the tool → upstream
// map, which a reload may have changed.
func (u *upstreamMetrics) Collect(ch chan<- prometheus.Metric) {
	st := u.g.Status()
	for _, s := range st {
		for _, state := range upstreamStates {
			v := 0.0
			if s.State == state {
				v = 1
			}
			gauge(ch, descUpstreamState, v, s.Name, string(state))
		}
		counter(ch, descUpstreamSwaps, float64(s.Swaps), s.Name)
		counter(ch, descUpstreamConns, float64(s.Connections), s.Name)
	}
	all := toolsOf(u.g.Config().Name, st)
	u.mu.Lock()
	u.all, u.of = all, map[string]prometheus.Observer{}
	u.mu.Unlock()
}
