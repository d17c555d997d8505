package otelmcp_test

import (
	"context"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/otelmcp"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

type Conn struct{}

type In struct {
	Text string `json:"text" jsonschema:"minLength=1"`
}

func TestSpansAndMetrics(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	tel, err := otelmcp.New(&otelmcp.Options{TracerProvider: tp, MeterProvider: mp, RecordPrincipal: true})
	if err != nil {
		t.Fatal(err)
	}

	deps := di.NewRegistry()
	di.ProvidePerInvocation(deps, func() *Conn { return &Conn{} })
	app := agnara.New("obs", &agnara.Options{Dependencies: deps, Observer: tel})
	allow := policy.Func(func(context.Context, policy.Request) error { return nil })
	echo := app.Capability(func(ctx context.Context, in In, c *Conn) (string, error) { return in.Text, nil },
		&agnara.CapabilityOptions{Name: "echo", Description: "Echo.", Policies: []policy.Policy{allow}})
	exp := mcpexpose.New(app)
	exp.Tool(echo, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	dev := policy.NewPrincipal("dana", nil)
	ss, err := mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev})).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	call := &mcp.CallToolParams{Name: "obs.echo", Arguments: map[string]any{"text": "hi"}}
	call.Meta = mcp.Meta{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}
	if res, err := cs.CallTool(ctx, call); err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "obs.echo", Arguments: map[string]any{"text": ""}}); err != nil || !res.IsError {
		t.Fatalf("invalid call = %+v, %v", res, err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// A handshake-era client lists without params.
	ct2, st2 := mcp.NewInMemoryTransports()
	ss2, err := mustServer(mcpexpose.NewServer(snap, &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev})).Connect(ctx, st2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss2.Close()
	legacy, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, ct2, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	if _, err := legacy.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := legacy.CallTool(ctx, &mcp.CallToolParams{Name: "obs.echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}

	ended := spans.Ended()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range ended {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	calls := byName["tools/call obs.echo"]
	if len(calls) != 3 || len(byName["tools/list"]) != 2 {
		t.Fatalf("spans = %v", names(ended))
	}
	root := calls[0]
	if root.SpanContext().TraceID().String() != traceID {
		t.Errorf("trace id %s, want the client's %s", root.SpanContext().TraceID(), traceID)
	}
	if got := attr(root, "gen_ai.tool.name"); got != "obs.echo" || attr(root, "mcp.method.name") != "tools/call" || attr(root, "enduser.id") != "dana" || attr(root, "agnara.outcome") != "ok" {
		t.Errorf("call span attributes = %v", root.Attributes())
	}
	for _, stage := range []string{"policy", "dependencies", "handler"} {
		st := byName[stage]
		if len(st) < 1 || st[0].Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("stage %s: %d spans, want one child of the call span", stage, len(st))
		}
	}
	if attr(calls[1], "error.type") != "invalid_input" {
		t.Errorf("failed call span attributes = %v", calls[1].Attributes())
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var inFlight int64 = -1
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					switch m.Name {
					case "agnara.mcp.calls":
						o, _ := p.Attributes.Value("agnara.outcome")
						meth, _ := p.Attributes.Value("mcp.method.name")
						counts[meth.AsString()+"/"+o.AsString()] += p.Value
					case "agnara.mcp.calls.in_flight":
						if inFlight < 0 {
							inFlight = 0
						}
						inFlight += p.Value
					}
				}
			}
		}
	}
	if counts["tools/call/ok"] != 2 || counts["tools/call/invalid_input"] != 1 || counts["tools/list/ok"] != 2 || inFlight != 0 {
		t.Errorf("calls = %v, in flight = %d", counts, inFlight)
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if kv.Key == attribute.Key(key) {
			return kv.Value.String()
		}
	}
	return ""
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name())
	}
	return out
}

// mustServer returns the server of a NewServer call that must succeed.
func mustServer(s *mcp.Server, err error) *mcp.Server {
	if err != nil {
		panic(err)
	}
	return s
}
