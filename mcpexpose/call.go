package mcpexpose

import (
	"context"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTool runs the tools/call rec describes, req being the call as the
// route that serves it holds it: the edge's own (fastpath.go), or the
// SDK's, in the tool's handler. Both routes run it, and nothing else runs
// a call. It returns the result before the finishing every route does
// alike (an empty content list for null, on the SDK route the SDK's):
// a *mcp.CallToolResult, or, for a call that became a task, the task.
//
// In order: a withdrawn tool answers its failure; an unknown tool, a
// refused identity and a tool the caller may not see (unless
// ServerOptions.ForbiddenResult) are JSON-RPC errors; then the call runs
// as a task, over the handshake era's rounds, or as one 2026-07-28 round,
// observed and audited.
func (s *server) callTool(ctx context.Context, rec *record, req *mcp.CallToolRequest) (mcp.Result, error) {
	if rec.gone != nil {
		return s.callWithdrawn(ctx, rec, req)
	}
	t := rec.tool
	if t == nil {
		return nil, unknownTool(rec.name)
	}
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	if !rec.admitted && !s.opts.ForbiddenResult {
		// A tool the caller may not see is answered exactly like one that
		// does not exist, and audited as refused.
		s.audit(ctx, req, t, p, labelForbidden, nil)
		return nil, unknownTool(rec.name)
	}
	ctx = policy.WithPrincipal(ctx, p)
	var end func(agnara.Label, error)
	if obs := s.app.Observer(); obs != nil {
		ctx, end = obs.Request(ctx, s.requestInfo("tools/call", t.name, req, p))
	}
	var res *mcp.CallToolResult
	var label agnara.Label
	var created mcp.Result // a task
	switch {
	case t.task != TaskNever && s.tasks != nil && req.ProtocolVersion() >= modernVersion && declaresTasks(req.ClientCapabilities()):
		created, res, label, err = s.callTask(ctx, req, t, p, rec.adm)
	case t.task == TaskRequired:
		label, err = agnara.LabelError, errTasksNotDeclared("this tool")
	case req.ProtocolVersion() < modernVersion:
		res, label, err = s.legacyRounds(ctx, req, t, p, rec.adm)
	default:
		res, label, err = s.call(ctx, req, t, p, rec.adm)
	}
	if err == nil && res != nil && res.InputRequests != nil && (len(res.Content) > 0 || res.StructuredContent != nil) {
		// What the SDK refuses of a tool handler's result
		// (handleMultiRoundTripResult), refused here on either route.
		s.sdkLogger.Warn("handler returned both content and inputRequests")
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}
	}
	if err != nil && label != agnara.LabelCanceled {
		s.audit(ctx, req, t, p, agnara.LabelError, nil)
	} else {
		s.audit(ctx, req, t, p, label, res)
	}
	if end != nil {
		if err != nil {
			label = labelOf(err)
		}
		end(label, err)
	}
	switch {
	case err != nil:
		return nil, err
	case created != nil:
		return created, nil
	}
	return res, nil
}

// listToolsOf answers the tools/list rec describes: the tools its caller
// may see, observed. Both routes run it.
func (s *server) listToolsOf(ctx context.Context, rec *record, req mcp.Request) (mcp.Result, error) {
	p, err := rec.principal()
	if err != nil {
		return nil, err
	}
	if s.watch != nil && legacySession(req) {
		ss, _ := req.GetSession().(*mcp.ServerSession)
		s.watch.seen(ss, p)
	}
	e := s.cur.Load()
	obs := s.app.Observer()
	if obs == nil {
		return s.listTools(e, req, p)
	}
	_, end := obs.Request(ctx, s.requestInfo("tools/list", "", req, p))
	res, err := s.listTools(e, req, p)
	end(labelOf(err), err)
	return res, err
}

// handler is the SDK handler of every tool: it runs the call the
// middleware handed it the record of.
func (s *server) handler(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	rec := recordIn(ctx, "tools/call")
	if rec == nil {
		return nil, errUnrouted
	}
	res, err := s.callTool(ctx, rec, req)
	if err != nil {
		return nil, err
	}
	if r, ok := res.(*mcp.CallToolResult); ok {
		return r, nil
	}
	return nil, &taskCreated{result: res}
}

// taskCreated carries a call that became a task from the tool's handler,
// whose signature has room for a tool result only, out to the middleware,
// which answers with the task: the SDK passes a raw tool handler's error
// through unchanged.
type taskCreated struct{ result mcp.Result }

func (*taskCreated) Error() string { return "mcpexpose: the call became a task" }

// errUnrouted answers a tools/call that reached a tool handler without
// passing the middleware; it cannot happen while the middleware is
// installed.
var errUnrouted = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "tools/call was not routed"}
