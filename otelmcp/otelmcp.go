// Package otelmcp reports what an agnara-go MCP server does to
// OpenTelemetry: one span per tools/call and tools/list, following the
// OpenTelemetry semantic conventions for MCP, with child spans for a
// call's policy, dependency and handler stages, and metrics for calls by
// tool and outcome, their duration, calls in flight and interaction rounds.
//
// It is a separate package so that the core stays free of OpenTelemetry,
// and it is a no-op unless the application installs providers (globally
// with otel.SetTracerProvider and otel.SetMeterProvider, or in [Options]).
// A [Telemetry] is an [agnara.Observer]: install it once, on the
// application, and every server built from the application's snapshots
// reports to it.
//
//	tel, err := otelmcp.New(nil)
//	app := agnara.New("users", &agnara.Options{Observer: tel})
//
// Trace context is taken from the request's _meta ("traceparent",
// "tracestate") when present, so a client's trace continues on the server.
package otelmcp

import (
	"context"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const scope = "github.com/agnara-go/agnara/otelmcp"

// Options configures [New]. A nil *Options and every zero field mean the
// documented default.
type Options struct {
	// TracerProvider makes the spans. Default: otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the metrics. Default: otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// RecordPrincipal adds the caller's principal id to spans
	// (enduser.id). Default: off, since ids may be personal data.
	RecordPrincipal bool
}

// Telemetry holds the instruments and reports to them as the
// application's [agnara.Observer]. It is safe for concurrent use.
type Telemetry struct {
	tracer          trace.Tracer
	recordPrincipal bool
	calls           metric.Int64Counter
	duration        metric.Float64Histogram
	inFlight        metric.Int64UpDownCounter
	rounds          metric.Int64Counter
	propagator      propagation.TextMapPropagator
}

// New creates the tracer and the metric instruments.
func New(opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	m := o.MeterProvider.Meter(scope)
	t := &Telemetry{
		tracer:          o.TracerProvider.Tracer(scope),
		recordPrincipal: o.RecordPrincipal,
		propagator:      propagation.TraceContext{},
	}
	var err error
	if t.calls, err = m.Int64Counter("agnara.mcp.calls", metric.WithDescription("MCP requests by method, tool and outcome"), metric.WithUnit("{request}")); err != nil {
		return nil, err
	}
	if t.duration, err = m.Float64Histogram("mcp.server.operation.duration", metric.WithDescription("Duration of MCP requests"), metric.WithUnit("s")); err != nil {
		return nil, err
	}
	if t.inFlight, err = m.Int64UpDownCounter("agnara.mcp.calls.in_flight", metric.WithDescription("MCP requests being handled"), metric.WithUnit("{request}")); err != nil {
		return nil, err
	}
	if t.rounds, err = m.Int64Counter("agnara.mcp.interaction.rounds", metric.WithDescription("Rounds that ended by asking the client for input"), metric.WithUnit("{round}")); err != nil {
		return nil, err
	}
	return t, nil
}

var _ agnara.Observer = (*Telemetry)(nil)

// metaCarrier reads trace context from a request's _meta.
type metaCarrier map[string]any

func (c metaCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}
func (c metaCarrier) Set(string, string) {}
func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Request starts the request's server span, continuing the trace context
// in its _meta, and counts it in flight; the returned function ends the
// span and records the request's outcome, duration and, for a round that
// asked questions, the round.
func (t *Telemetry) Request(ctx context.Context, info agnara.RequestInfo) (context.Context, func(agnara.Label, error)) {
	if info.Meta != nil {
		ctx = t.propagator.Extract(ctx, metaCarrier(info.Meta))
	}
	name := info.Method
	attrs := []attribute.KeyValue{
		attribute.String("mcp.method.name", info.Method),
		attribute.String("mcp.protocol.version", info.ProtocolVersion),
	}
	if info.Tool != "" {
		name += " " + info.Tool
		attrs = append(attrs, attribute.String("gen_ai.tool.name", info.Tool), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	spanAttrs := attrs
	if t.recordPrincipal && info.PrincipalID != "" {
		spanAttrs = append(spanAttrs, attribute.String("enduser.id", info.PrincipalID))
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(spanAttrs...))
	start := time.Now()
	base := metric.WithAttributes(attrs...)
	t.inFlight.Add(ctx, 1, base)
	return ctx, func(label agnara.Label, err error) {
		t.inFlight.Add(ctx, -1, base)
		outcome := string(label)
		done := append(attrs, attribute.String("agnara.outcome", outcome))
		if label.Failed() {
			done = append(done, attribute.String("error.type", outcome))
		}
		set := metric.WithAttributes(done...)
		t.calls.Add(ctx, 1, set)
		t.duration.Record(ctx, time.Since(start).Seconds(), set)
		if label == agnara.LabelInputRequired {
			t.rounds.Add(ctx, 1, base)
		}
		span.SetAttributes(attribute.String("agnara.outcome", outcome))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "protocol error")
		} else if label.Failed() {
			span.SetAttributes(attribute.String("error.type", outcome))
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}

// Stage starts a child span named after the stage ("policy",
// "confirmation", "dependencies", "handler"); the returned function ends
// it, with an error status when the stage failed.
func (t *Telemetry) Stage(ctx context.Context, capability string, stage agnara.Stage) (context.Context, func(error)) {
	name := stage.String()
	ctx, span := t.tracer.Start(ctx, name, trace.WithAttributes(
		attribute.String("agnara.capability", capability),
		attribute.String("agnara.stage", name),
	))
	return ctx, func(err error) {
		if err != nil {
			// Record the kind of failure only: error text may be internal.
			span.SetStatus(codes.Error, name+" failed")
		}
		span.End()
	}
}
