package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// call is the handler of an imported tool. Failures are canonical failures
// carrying their reason; cancellation by the caller is returned as the
// context's error, so that it propagates.
func (t *tool) call(ec *execution.Context, args json.RawMessage) (execution.Result, error) {
	c := t.cat
	gen := c.valid.Load().gen // the answer counts only if the catalog stays valid from here on
	if code, ok := c.monitor.current(gen); !ok {
		return execution.Result{}, t.fail(ec, code, nil)
	}
	if len(args) > c.limits.ObjectBytes {
		return execution.Result{}, t.fail(ec, ReasonInvalidArguments, nil)
	}
	if v := t.sel.validator; v != nil {
		if err := v(ec, ec.Principal(), args); err != nil {
			if ec.Err() != nil {
				return execution.Result{}, ec.Err()
			}
			return execution.Result{}, t.fail(ec, ReasonScopeDenied, err)
		}
	}
	if code, err := c.authorized(ec, ec.Principal()); code != "" || err != nil {
		switch {
		case ec.Err() != nil:
			return execution.Result{}, ec.Err()
		case code == "":
			return execution.Result{}, err
		}
		return execution.Result{}, t.fail(ec, code, err)
	}
	if t.turn != nil {
		select {
		case t.turn <- struct{}{}:
			defer func() { <-t.turn }()
		case <-ec.Done():
			return execution.Result{}, ec.Err()
		}
	}

	timeout := c.limits.CallTimeout
	params := &mcp.CallToolParams{Name: t.entry.RemoteName, Arguments: args}
	var cp *capture
	if t.sel.task != nil {
		timeout = t.sel.task.Timeout
		params.Meta = callerDeclaration(ec, true)
		cp = &capture{limit: c.limits.ObjectBytes}
	} else if c.snap.protocolVersion >= modernRevision {
		params.Meta = callerDeclaration(ec, false)
	}
	ctx, cancel := context.WithTimeout(ec, timeout)
	defer cancel()
	if cp != nil {
		ctx = withCapture(ctx, cp)
	}
	q := &asker{ec: ec, limits: c.limits}
	ctx, done := withAsker(ctx, c.session, q)
	defer done()
	var res *mcp.CallToolResult
	var err error
	resumed := ""
	if cp != nil {
		resumed = heldTask(ec) // a task an earlier round left asking
	}
	if resumed == "" {
		res, err = t.send(ctx, params)
	}
	if resumed != "" || err == nil && cp != nil && isTaskAnswer(res) {
		var raw json.RawMessage
		var oversized bool
		if resumed == "" {
			raw, oversized = cp.result()
		}
		var code execution.Reason
		res, code, err = t.followTask(ctx, ec, q, raw, oversized, resumed)
		if code != "" {
			if ec.Err() != nil {
				return execution.Result{}, ec.Err()
			}
			return execution.Result{}, t.fail(ec, code, err)
		}
	}
	q.awaitURLDone(ec) // the completions the upstream sent before answering (questions.go)
	if ec.Err() != nil {
		return execution.Result{}, ec.Err() // the caller went away, or its own deadline passed: late results are discarded
	}
	if asked, qerr := q.outcome(); asked || qerr != nil {
		return execution.Result{}, t.questionsFailed(ec, qerr)
	}
	if code, ok := c.monitor.current(gen); !ok {
		return execution.Result{}, t.fail(ec, code, nil) // the catalog changed while the call was out
	}
	if err != nil {
		return execution.Result{}, t.fail(ec, classify(ctx, err), err)
	}
	out, code := t.project(res)
	if code != "" {
		return execution.Result{}, t.fail(ec, code, resultError(res, code))
	}
	return out, nil
}

// modernRevision is the first revision whose requests carry the client's
// capabilities.
const modernRevision = "2026-07-28"

// send sends one tools/call upstream: the one place every imported call,
// read or write, reaches the remote server.
func (t *tool) send(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	return t.cat.session.CallTool(ctx, params)
}

// questionsFailed is how a call whose upstream asked ends: asking the
// caller ([execution.ErrInputRequired]) when a question waits for an
// answer; with the caller's own failure when the caller's answer did not
// fit the question; with [ReasonQuestionRefused] when a question could not
// be relayed.
func (t *tool) questionsFailed(ec *execution.Context, qerr error) error {
	var f *execution.Failure
	switch {
	case qerr == nil:
		return execution.ErrInputRequired
	case errors.As(qerr, &f):
		return f
	}
	return t.fail(ec, ReasonQuestionRefused, qerr)
}

// classify names the failure of a tools/call request that returned err.
func classify(ctx context.Context, err error) execution.Reason {
	var wire *jsonrpc.Error
	if r := credentialReason(err); r != "" {
		return r // the host's transport refused before sending (credential.go)
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, mcp.ErrConnectionClosed):
		return ReasonConnectionClosed
	case errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams:
		return ReasonInvalidArguments
	case errors.As(err, &wire) && wire.Code == missingCapability:
		return ReasonQuestionRefused // the tool asks what the caller cannot answer
	case errors.As(err, &wire):
		return ReasonProtocolError
	}
	return ReasonTransportError
}

// fail logs a failed call and returns its canonical failure, which says
// nothing the remote server said. A failure the remote server explained
// (its tool's isError result, a JSON-RPC error) is logged at warn with the
// remote's text, for the operator (see remoteFailed); any other at debug.
func (t *tool) fail(ctx context.Context, reason execution.Reason, cause error) error {
	if !remoteFailed(ctx, t.cat.logger, t.cat.snap.serverID, t.entry.RemoteName, reason, cause) && t.cat.logger.Enabled(ctx, slog.LevelDebug) {
		attrs := []slog.Attr{
			slog.String("server", t.cat.snap.serverID),
			slog.String("tool", t.entry.RemoteName),
			slog.String("reason", string(reason)),
		}
		if cause != nil {
			attrs = append(attrs, slog.String("cause", cause.Error()))
		}
		t.cat.logger.LogAttrs(ctx, slog.LevelDebug, "mcpimport: call failed", attrs...)
	}
	return failure(reason)
}
