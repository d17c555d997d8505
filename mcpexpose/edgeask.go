//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// A call the edge answers on a handshake-era session asks its client as
// the SDK's ServerSession asks it (Elicit, CreateMessage, ListRoots): a
// server-to-client request written on the call's own stream, stored in
// the session's event store like its other events, whose answer the
// client POSTs to the session as a JSON-RPC response. The edge takes that
// POST (Handler.deliver) before the SDK's session would route it, and
// answers it as the SDK answers one: 202 with no body. The request's id
// is a string of the edge's own, which the SDK's integer ids never equal
// (ADR 74).

// askIDs numbers the edge's questions, across sessions.
var askIDs atomic.Int64

// ask asks ir of the client of cs, a call's stream on the session whose
// SDK session is ss, and returns the client's answer, with what the SDK's
// methods check and do before and after sending.
func (cs *callStream) ask(ctx context.Context, ss *mcp.ServerSession, ir mcp.InputRequest) (mcp.InputResponse, error) {
	switch q := ir.(type) {
	case *mcp.ElicitParams:
		return cs.elicit(ctx, ss, q)
	case *mcp.CreateMessageParams:
		if q == nil {
			q = &mcp.CreateMessageParams{Messages: []*mcp.SamplingMessage{}}
		}
		if q.Messages == nil {
			cp := *q
			cp.Messages = []*mcp.SamplingMessage{} // sent as [], as the SDK sends it
			q = &cp
		}
		var res mcp.CreateMessageWithToolsResult
		if err := cs.call(ctx, "sampling/createMessage", q, &res); err != nil {
			return nil, err
		}
		if len(res.Content) > 1 {
			return nil, fmt.Errorf("CreateMessage result has %d content blocks; use CreateMessageWithTools for multiple content", len(res.Content))
		}
		var content mcp.Content
		if len(res.Content) > 0 {
			content = res.Content[0]
		}
		return &mcp.CreateMessageResult{Meta: res.Meta, Content: content, Model: res.Model, Role: res.Role, StopReason: res.StopReason}, nil
	case *mcp.ListRootsParams:
		var res mcp.ListRootsResult
		if err := cs.call(ctx, "roots/list", q, &res); err != nil {
			return nil, err
		}
		return &res, nil
	}
	return nil, fmt.Errorf("unsupported input request %T", ir)
}

// elicit asks q as ServerSession.Elicit does, and returns the client's
// answer as askSession does: an accepted answer that fits the form gets
// the form's defaults, one that does not is the plan's to refuse.
func (cs *callStream) elicit(ctx context.Context, ss *mcp.ServerSession, q *mcp.ElicitParams) (mcp.InputResponse, error) {
	if q == nil {
		return nil, fmt.Errorf("%w: params cannot be nil", errInvalidParams)
	}
	if q.Mode == "" {
		cp := *q
		cp.Mode = "form"
		if q.URL != "" || q.ElicitationID != "" {
			cp.Mode = "url"
		}
		q = &cp
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil, errors.New("client does not support elicitation")
	}
	caps := ip.Capabilities.Elicitation
	switch q.Mode {
	case "form":
		if caps.Form == nil && caps.URL != nil {
			return nil, errors.New(`client does not support "form" elicitation`)
		}
	case "url":
		if caps.URL == nil {
			return nil, errors.New(`client does not support "url" elicitation`)
		}
	}
	var res mcp.ElicitResult
	if err := cs.call(ctx, "elicitation/create", q, &res); err != nil {
		return nil, err
	}
	if res.Action != "accept" || res.Content == nil || q.RequestedSchema == nil {
		return &res, nil
	}
	// The form's defaults, on an answer that fits it; any other answer
	// goes to the plan as it was sent.
	raw, err := json.Marshal(q.RequestedSchema)
	if err != nil || !bytes.Contains(raw, []byte(`"default"`)) {
		// Without a default there is nothing to apply: the answer goes
		// as sent, whether it fits or not.
		return &res, nil
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(raw, &schema); err != nil {
		return &res, nil
	}
	resolved, err := schema.Resolve(nil)
	if err != nil || resolved.Validate(res.Content) != nil {
		return &res, nil
	}
	_ = resolved.ApplyDefaults(&res.Content)
	return &res, nil
}

// errInvalidParams is the SDK's invalid-params error, which a nil
// question wraps.
var errInvalidParams = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}

// call sends method with params to the client as a request on cs, and
// decodes its result into result, with the SDK's decoder, or returns
// the error the SDK's call returns: the client's, or the context's.
func (cs *callStream) call(ctx context.Context, method string, params any, result any) error {
	se := cs.sess
	id := "agnara-" + strconv.FormatInt(askIDs.Add(1), 10)
	jid, err := jsonrpc.MakeID(id)
	if err != nil {
		return err
	}
	var p bytes.Buffer
	enc := json.NewEncoder(&p)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(params); err != nil {
		return fmt.Errorf("marshaling call parameters: %w", err)
	}
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: jid, Method: method, Params: bytes.TrimSuffix(p.Bytes(), []byte("\n"))})
	if err != nil {
		return err
	}
	answer := se.h.sessions.await(se.ls, id)
	if answer == nil {
		return fmt.Errorf("%w: calling %q: the session is closed", mcp.ErrConnectionClosed, method)
	}
	cs.send(msg)
	select {
	case resp := <-answer:
		if resp == nil {
			return fmt.Errorf("%w: calling %q: the session is closed", mcp.ErrConnectionClosed, method)
		}
		if resp.Error != nil {
			return fmt.Errorf("calling %q: %w", method, resp.Error)
		}
		dec := segjson.NewDecoder(bytes.NewReader(resp.Result))
		dec.DontMatchCaseInsensitiveStructFields()
		if err := dec.Decode(result); err != nil {
			return fmt.Errorf("calling %q: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		// The call was cancelled (a notifications/cancelled naming it):
		// its answer ends the stream, as the SDK's does. The SDK also
		// tells the client its question is withdrawn, best effort, from a
		// goroutine that loses the race with the answer, so that the
		// notification never reaches the call's stream; the edge sends
		// none.
		se.h.sessions.forgetAsk(se.ls, id)
		return ctx.Err()
	}
}
