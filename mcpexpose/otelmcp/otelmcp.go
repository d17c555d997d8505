// Package otelmcp reports what an agnara-go MCP server does to
// OpenTelemetry: one span per tools/call and tools/list, following the
// OpenTelemetry semantic conventions for MCP, with child spans for a
// call's policy, dependency and handler stages, and metrics for calls by
// tool and outcome, their duration, calls in flight and interaction rounds.
//
// It is a separate package so that the core stays free of OpenTelemetry,
// and it is a no-op unless the application installs providers (globally
// with otel.SetTracerProvider and otel.SetMeterProvider, or in [Options]).
//
//	tel, err := otelmcp.New(nil)
//	app := agnara.New("users", &agnara.Options{Observer: tel.Stages()})
//	...
//	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{
//		Server: mcpexpose.ServerOptions{Observer: tel.Requests()},
//	})
//
// Trace context is taken from the request's _meta ("traceparent",
// "tracestate") when present, so a client's trace continues on the server.
package otelmcp

import (
	"context"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/mcpexpose"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

const scope = "github.com/agnara-go/agnara/mcpexpose/otelmcp"

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

// Telemetry holds the instruments. It is safe for concurrent use.
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

// Requests returns the observer for mcpexpose.ServerOptions.Observer.
func (t *Telemetry) Requests() mcpexpose.RequestObserver { return requests{t} }

// Stages returns the observer for agnara.Options.Observer.
func (t *Telemetry) Stages() agnara.Observer { return stages{t} }

type requests struct{ t *Telemetry }

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

func (r requests) Request(ctx context.Context, info mcpexpose.RequestInfo) (context.Context, func(string, error)) {
	t := r.t
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
	return ctx, func(outcome string, err error) {
		t.inFlight.Add(ctx, -1, base)
		done := append(attrs, attribute.String("agnara.outcome", outcome))
		if outcome != "ok" && outcome != "input_required" {
			done = append(done, attribute.String("error.type", outcome))
		}
		set := metric.WithAttributes(done...)
		t.calls.Add(ctx, 1, set)
		t.duration.Record(ctx, time.Since(start).Seconds(), set)
		if outcome == "input_required" {
			t.rounds.Add(ctx, 1, base)
		}
		span.SetAttributes(attribute.String("agnara.outcome", outcome))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "protocol error")
		} else if outcome != "ok" && outcome != "input_required" {
			span.SetAttributes(attribute.String("error.type", outcome))
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}
}

type stages struct{ t *Telemetry }

func (s stages) Stage(ctx context.Context, capability, stage string) (context.Context, func(error)) {
	ctx, span := s.t.tracer.Start(ctx, stage, trace.WithAttributes(
		attribute.String("agnara.capability", capability),
		attribute.String("agnara.stage", stage),
	))
	return ctx, func(err error) {
		if err != nil {
			// Record the kind of failure only: error text may be internal.
			span.SetStatus(codes.Error, stage+" failed")
		}
		span.End()
	}
}
