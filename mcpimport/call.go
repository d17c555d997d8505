package mcpimport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Envelope is the value a successful call of an imported tool returns: the
// text blocks of the remote result, in order, and its structured content.
// Structured is null unless the remote tool advertises an output schema, in
// which case it is the remote structured content, valid against that schema.
type Envelope struct {
	Text       []string        `json:"text"`
	Structured json.RawMessage `json:"structured"`
}

// envelopeSchema is the local output schema of an imported tool: exactly the
// envelope, with the remote output schema (without its root "$schema") as
// the schema of "structured", or null when there is none.
//
// With anyStructured (the standard profile), "structured" is described as
// any JSON value instead: a standard schema cannot be embedded in another
// document without rewriting it (its "#/..." references and its draft
// belong to its own root). The importer still validates structured content
// against the remote output schema, as published in the snapshot.
func envelopeSchema(remote json.RawMessage, anyStructured bool) json.RawMessage {
	structured := []byte(`{"type":"null"}`)
	if anyStructured {
		structured = []byte(`{}`)
	} else if remote != nil {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(remote, &m); err == nil {
			delete(m, "$schema")
			if b, err := json.Marshal(m); err == nil {
				structured = b
			}
		}
	}
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{"text":{"type":"array","items":{"type":"string"}},"structured":`)
	b.Write(structured)
	b.WriteString(`},"required":["text","structured"],"additionalProperties":false}`)
	return b.Bytes()
}

// call is the handler of an imported tool. Failures are canonical failures
// carrying their reason; cancellation by the caller is returned as the
// context's error, so that it propagates.
func (t *tool) call(ec *execution.Context, args json.RawMessage) (json.RawMessage, error) {
	c := t.cat
	gen := c.valid.Load().gen // the answer counts only if the catalog stays valid from here on
	if code, ok := c.monitor.current(gen); !ok {
		return nil, t.fail(ec, code, nil)
	}
	if len(args) > c.limits.ObjectBytes {
		return nil, t.fail(ec, ReasonInvalidArguments, nil)
	}
	if v := t.sel.validator; v != nil {
		if err := v(ec, ec.Principal(), args); err != nil {
			if ec.Err() != nil {
				return nil, ec.Err()
			}
			return nil, t.fail(ec, ReasonScopeDenied, err)
		}
	}
	if t.turn != nil {
		select {
		case t.turn <- struct{}{}:
			defer func() { <-t.turn }()
		case <-ec.Done():
			return nil, ec.Err()
		}
	}

	timeout := c.limits.CallTimeout
	params := &mcp.CallToolParams{Name: t.entry.RemoteName, Arguments: args}
	var cp *capture
	if t.sel.task != nil {
		timeout = t.sel.task.Timeout
		params.Meta = taskDeclaration()
		cp = &capture{limit: c.limits.ObjectBytes}
	}
	ctx, cancel := context.WithTimeout(ec, timeout)
	defer cancel()
	if cp != nil {
		ctx = withCapture(ctx, cp)
	}
	res, err := c.session.CallTool(ctx, params)
	if err == nil && cp != nil && isTaskAnswer(res) {
		raw, oversized := cp.result()
		var code execution.Reason
		res, code, err = t.followTask(ctx, ec, raw, oversized)
		if code != "" {
			if ec.Err() != nil {
				return nil, ec.Err()
			}
			return nil, t.fail(ec, code, err)
		}
	}
	if ec.Err() != nil {
		return nil, ec.Err() // the caller went away, or its own deadline passed: late results are discarded
	}
	if code, ok := c.monitor.current(gen); !ok {
		return nil, t.fail(ec, code, nil) // the catalog changed while the call was out
	}
	if err != nil {
		return nil, t.fail(ec, classify(ctx, err), err)
	}
	env, code := t.project(res)
	if code != "" {
		return nil, t.fail(ec, code, nil)
	}
	return env, nil
}

// classify names the failure of a tools/call request that returned err.
func classify(ctx context.Context, err error) execution.Reason {
	var wire *jsonrpc.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ReasonTimeout
	case errors.Is(err, mcp.ErrConnectionClosed):
		return ReasonConnectionClosed
	case errors.As(err, &wire) && wire.Code == jsonrpc.CodeInvalidParams:
		return ReasonInvalidArguments
	case errors.As(err, &wire):
		return ReasonProtocolError
	}
	return ReasonTransportError
}

// envelope turns a remote result into the local envelope, or names why it
// cannot.
func (t *tool) project(res *mcp.CallToolResult) (json.RawMessage, execution.Reason) {
	limits := t.cat.limits
	switch {
	case res == nil:
		return nil, ReasonProtocolError
	case res.NeedsInput():
		return nil, ReasonResultUnsupported // this adapter answers no input requests
	case isTaskAnswer(res):
		return nil, ReasonProtocolError // a task nobody asked for, or a task inside a task
	case res.IsError:
		return nil, ReasonToolError
	case len(res.Content) > limits.ContentBlocks:
		return nil, ReasonResultTooLarge
	}
	env := Envelope{Text: make([]string, 0, len(res.Content)), Structured: json.RawMessage("null")}
	size := 0
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			return nil, ReasonResultUnsupported
		}
		if size += len(tc.Text); size > limits.ObjectBytes {
			return nil, ReasonResultTooLarge
		}
		env.Text = append(env.Text, tc.Text)
	}
	if t.output != nil {
		if res.StructuredContent == nil {
			return nil, ReasonResultInvalid // text, however JSON-like, is no substitute
		}
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, ReasonResultInvalid
		}
		if len(b) > limits.ObjectBytes {
			return nil, ReasonResultTooLarge
		}
		v, err := schemacheck.Parse(b)
		if err != nil || t.output.Validate(v) != nil {
			return nil, ReasonResultInvalid
		}
		env.Structured = b
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil, ReasonResultInvalid
	}
	if len(out) > limits.ObjectBytes {
		return nil, ReasonResultTooLarge
	}
	return out, ""
}

// fail logs a failed call at debug level and returns its canonical failure.
func (t *tool) fail(ctx context.Context, reason execution.Reason, cause error) error {
	if t.cat.logger.Enabled(ctx, slog.LevelDebug) {
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
