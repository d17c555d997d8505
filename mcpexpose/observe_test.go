package mcpexpose_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/di"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/policy"
	"github.com/google/go-cmp/cmp"
)

// recorder is an agnara.Observer that writes down what it sees, in order.
type recorder struct {
	mu     sync.Mutex
	events []string
	infos  []agnara.RequestInfo
}

type requestKey struct{}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) Request(ctx context.Context, info agnara.RequestInfo) (context.Context, func(agnara.Label, error)) {
	r.mu.Lock()
	r.infos = append(r.infos, info)
	r.mu.Unlock()
	r.add("begin %s %s", info.Method, info.Tool)
	return context.WithValue(ctx, requestKey{}, info.Method), func(l agnara.Label, err error) {
		r.add("end %s %s: %s, error %t", info.Method, info.Tool, l, err != nil)
	}
}

func (r *recorder) Stage(ctx context.Context, capability string, stage agnara.Stage) (context.Context, func(error)) {
	// A stage runs in the context its request's observer returned.
	in, _ := ctx.Value(requestKey{}).(string)
	r.add("  %s %s in %q", capability, stage, in)
	return ctx, func(err error) { r.add("  %s %s done, error %t", capability, stage, err != nil) }
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// TestObserverOnTheApplication installs one observer on the application
// and no option on the server, and checks that it sees every request, with
// its outcome label, and every stage of the invocations, inside its
// request.
func TestObserverOnTheApplication(t *testing.T) {
	rec := &recorder{}
	deps := di.NewRegistry()
	di.Provide(deps, func() *Ledger { return &Ledger{} })
	app := agnara.New("obs", &agnara.Options{Dependencies: deps, Observer: rec})
	allow := policy.Func(func(context.Context, policy.Request) error { return nil })
	save := app.Capability(func(ctx context.Context, in PurgeIn, l *Ledger) (string, error) {
		return "saved " + in.ID, nil
	}, &agnara.CapabilityOptions{Name: "save", Description: "Save.", Confirm: "Save it?", Policies: []policy.Policy{allow}})
	exp := mcpexpose.New(app)
	exp.Tool(save, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	dev := policy.NewPrincipal("dana", nil)
	h, err := mcpexpose.NewHandler(snap, &mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &dev}})
	if err != nil {
		t.Fatal(err)
	}
	url := httptestServer(t, h)

	steps := []struct {
		name string
		do   func(t *testing.T)
		want []string
	}{{
		name: "list",
		do: func(t *testing.T) {
			mcptest.Do(t, mcptest.Request(t, url, "tools/list", map[string]any{"_meta": mcptest.Meta(nil)}, ""))
		},
		want: []string{"begin tools/list ", "end tools/list : ok, error false"},
	}, {
		name: "confirmation asked",
		do: func(t *testing.T) {
			stateOf(t, rawCall(t, url, "", "obs.save", map[string]any{"id": "1"}, nil))
		},
		want: []string{
			"begin tools/call obs.save",
			`  obs.save policy in "tools/call"`, "  obs.save policy done, error false",
			`  obs.save confirmation in "tools/call"`, "  obs.save confirmation done, error false",
			"end tools/call obs.save: input_required, error false",
		},
	}, {
		name: "confirmed",
		do: func(t *testing.T) {
			state := stateOf(t, rawCall(t, url, "", "obs.save", map[string]any{"id": "1"}, nil))
			rec.take()
			msg := rawCall(t, url, "", "obs.save", map[string]any{"id": "1"}, map[string]any{"requestState": state, "inputResponses": yes})
			if res, _ := msg["result"].(map[string]any); res == nil || res["isError"] == true {
				t.Fatalf("confirmed call = %v", msg)
			}
		},
		want: []string{
			"begin tools/call obs.save",
			`  obs.save policy in "tools/call"`, "  obs.save policy done, error false",
			`  obs.save confirmation in "tools/call"`, "  obs.save confirmation done, error false",
			`  obs.save dependencies in "tools/call"`, "  obs.save dependencies done, error false",
			`  obs.save handler in "tools/call"`, "  obs.save handler done, error false",
			"end tools/call obs.save: ok, error false",
		},
	}, {
		name: "invalid input",
		do: func(t *testing.T) {
			rawCall(t, url, "", "obs.save", map[string]any{"id": 5}, nil)
		},
		want: []string{
			"begin tools/call obs.save",
			`  obs.save policy in "tools/call"`, "  obs.save policy done, error false",
			"end tools/call obs.save: invalid_input, error false",
		},
	}, {
		name: "protocol error",
		do: func(t *testing.T) {
			msg := rawCall(t, url, "", "obs.save", map[string]any{"id": "1"}, map[string]any{"requestState": "forged", "inputResponses": yes})
			if msg["error"] == nil {
				t.Fatalf("forged state = %v, want a protocol error", msg)
			}
		},
		want: []string{"begin tools/call obs.save", "end tools/call obs.save: error, error true"},
	}}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			rec.take()
			st.do(t)
			if diff := cmp.Diff(st.want, rec.take()); diff != "" {
				t.Errorf("observed (-want +got):\n%s", diff)
			}
		})
	}

	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, info := range rec.infos {
		if info.PrincipalID != "dana" || info.ProtocolVersion != mcpversion.Modern || info.Meta["io.modelcontextprotocol/protocolVersion"] != mcpversion.Modern {
			t.Errorf("request info = %+v, want dana's %s request with its _meta", info, mcpversion.Modern)
		}
	}
}
