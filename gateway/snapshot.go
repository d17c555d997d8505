package gateway

import (
	"log/slog"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpimport"
)

// publish records what u now serves and hands the handler a snapshot of
// every upstream's current tools. Sessions whose list changed are told.
func (g *Gateway) publish(u *upstream, s served) {
	g.mu.Lock()
	defer g.mu.Unlock()
	first := u.served.state == StateStarting
	u.served = s
	if s.state == StateUp && !first {
		u.swaps++
	}
	g.swap(u)
}

// swap compares what every upstream offers with the lock, then hands the
// handler a snapshot of what is served. changed, when not nil, is the
// upstream whose catalog just changed: the one at fault when the snapshot
// cannot be compiled. Must be called with g.mu held.
func (g *Gateway) swap(changed *upstream) {
	for _, u := range g.ups {
		u.held = u.hold(g.lock)
	}
	if g.handler == nil {
		return // Start compiles when it builds the handler
	}
	snap, err := g.compile()
	if err != nil && changed != nil && changed.served.state == StateUp {
		// What this upstream now offers cannot be served (New checked the
		// names, so its catalog is at fault): its tools are unavailable,
		// and the other upstreams keep serving.
		g.logger.Error("gateway: the upstream's catalog cannot be served; its tools are unavailable until it changes",
			slog.String("upstream", changed.cfg.Name), slog.String("error", err.Error()))
		changed.served = served{state: StateDown, err: "its catalog cannot be served: " + err.Error(), reason: ReasonUpstreamUnavailable}
		changed.held = nil
		snap, err = g.compile()
	}
	if err == nil {
		err = g.handler.Swap(snap)
	}
	if err != nil {
		// A bug: the last good snapshot keeps serving.
		name := ""
		if changed != nil {
			name = changed.cfg.Name
		}
		g.logger.Error("gateway: the new catalog could not be served; the last one still is", slog.String("upstream", name), slog.String("error", err.Error()))
	}
}

// compile builds the snapshot serving every upstream's current tools, in
// config order, under one application. Must be called with g.mu held, or
// before the upstreams run.
func (g *Gateway) compile() (*mcpexpose.Snapshot, error) {
	app := agnara.New(g.cfg.Name, &agnara.Options{Version: "1", Logger: g.logger})
	exp := mcpexpose.New(app)
	for _, u := range g.ups {
		s := u.served
		switch s.state {
		case StateUp:
		case StateFailed:
			for _, t := range u.cfg.Tools {
				exp.Withdrawn(wireName(app, t.Name), execution.Fail(execution.Unavailable,
					"the upstream serving this tool was refused for a reason a new connection cannot mend; it is not served until an operator acts", nil).WithReason(s.reason),
					&mcpexpose.WithdrawnOptions{Scopes: t.Scopes})
			}
			continue
		default:
			for _, t := range u.cfg.Tools {
				exp.Withdrawn(wireName(app, t.Name), execution.Fail(execution.Unavailable,
					"the upstream serving this tool is not connected; the gateway is reconnecting", nil).WithReason(ReasonUpstreamUnavailable),
					&mcpexpose.WithdrawnOptions{Scopes: t.Scopes})
			}
			continue
		}
		for _, cat := range s.catalogs() {
			for _, c := range cat.Register(app) {
				if h, ok := u.held[c.Name()]; ok {
					// Registered with the application, which serves
					// nothing by itself, and never exposed: what the
					// exposure does not declare no caller can list or
					// call.
					exp.Withdrawn(wireName(app, c.Name()), heldFailure(h.Reason), &mcpexpose.WithdrawnOptions{Scopes: u.scopes(c.Name())})
					continue
				}
				exp.Tool(c, g.toolOptions(u, c.Name()))
			}
			for _, a := range cat.Absent() {
				exp.Withdrawn(wireName(app, a.Name), absentFailure(a.Reason), &mcpexpose.WithdrawnOptions{Scopes: u.scopes(a.Name)})
			}
		}
		if s.features != nil {
			exposeFeatures(app, exp, s.features)
		}
	}
	if sc := g.cfg.Search; sc != nil {
		exp.Search(searchOptions(app, sc)) // search.go
	}
	return exp.Compile()
}

// heldFailure is what a held tool answers.
func heldFailure(reason execution.Reason) *execution.Failure {
	msg := "the upstream changed this tool's definition since an operator accepted it; it is not served until an operator reviews and accepts the new one"
	if reason == ReasonDefinitionUnaccepted {
		msg = "no operator has accepted this tool's definition yet; it is not served until one does"
	}
	return execution.Fail(execution.Unavailable, msg, nil).WithReason(reason)
}

// absentFailure is what an optional binding the upstream's import left out
// answers, under the reason it was left out for.
func absentFailure(reason execution.Reason) *execution.Failure {
	msg := "the upstream's definition of this tool cannot be imported; it is served again once it can"
	switch reason {
	case mcpimport.ToolMissing:
		msg = "the upstream does not offer this tool now; it is served again once it does"
	case mcpimport.SchemaUnsupported:
		msg = "the upstream offers this tool with a schema outside its binding's profile; it is never served in a weaker form"
	case mcpimport.DescriptionTooLarge:
		msg = "the upstream's description of this tool is larger than the limit"
	case mcpimport.UIUnsupported:
		msg = "the upstream's view (MCP App) of this tool cannot be imported; the tool is never served without it"
	}
	return execution.Fail(execution.Unavailable, msg, nil).WithReason(reason)
}

// wireName is the tool name a bound tool has when its upstream serves it:
// its capability's identity, "<app>.<name>". A withdrawn tool answers under
// it, so that the name its callers know keeps answering.
func wireName(app *agnara.App, name string) string { return app.Name() + "." + name }
