package mcpexpose

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// record is what the server knows of one request before it serves it,
// worked out once by the request's one owner: read from the body by the
// HTTP edge (edge.go) for a request it answers, or built by the middleware
// from the SDK's request for one the SDK serves (stdio, another SDK
// transport, DisableFastPath, a request the edge hands over: recordOf).
// Every stage after takes it as an argument; none parses the body, maps
// the caller or looks the tool up again. A record is not changed once it
// is handed on: a stage that knows more derives a copy.
type record struct {
	method string          // the JSON-RPC method, "" when the body is no single request
	id     json.RawMessage // the request id as sent; nil for a notification
	modern bool            // a 2026-07-28 request; otherwise the handshake era

	// What a tools/call names; taskID what a tasks/* request names.
	name   string
	args   json.RawMessage
	taskID string
	// via is the search tool a tools/call named, on a snapshot with a
	// search: search_tools, or call_tool, whose request name and args
	// are the tool it calls and its arguments; bad is the refusal of a
	// call_tool's own arguments (search.go).
	via string
	bad *execution.Failure
	// listen is the task part of a 2026-07-28 subscriptions/listen: the
	// task ids its notifications.taskIds names (tasknotify.go).
	listen taskListen
	// cancels is the id a notifications/cancelled names, when the edge's
	// scanner would take it (wire.PlainID).
	cancels json.RawMessage

	// response is a handshake-era body that is a client's answer, a
	// JSON-RPC response, as the SDK decodes it; nil otherwise.
	response *jsonrpc.Response

	// held is the listen scanner's reading of a 2026-07-28
	// subscriptions/listen (wire.Listen), nil when it declined the body:
	// one the edge may hold itself (listen.go).
	held *wire.Listen

	// fast is the strict scanner's reading of the whole request (a
	// single tools/call or tools/list), nil when it declined the body;
	// it is call, allocated with the record.
	fast *wire.Call
	call wire.Call

	// ti is the request's verified token facts, nil without a token.
	ti *auth.TokenInfo
	// caller is who the request acts as, or refused the identity
	// mapper's refusal; set (hasCaller) for the methods that need it.
	caller    policy.Principal
	refused   error
	hasCaller bool

	// For a tools/call: the snapshot it runs on (pinned while the record
	// is in use: see release), the tool it names there (nil for none, or gone
	// for a withdrawn one), and the caller's admission to it.
	e        *epoch
	tool     *tool
	gone     *withdrawnTool
	adm      execution.Admission
	admitted bool
}

// needsCaller reports whether a request of method acts as its caller, so
// that its record maps the caller once; the protocol's lifecycle and
// notifications do not.
func needsCaller(method string) bool {
	switch method {
	case "tools/list", "initialize", methodListen,
		"resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe",
		"prompts/list", "prompts/get", "completion/complete",
		methodTasksGet, methodTasksUpdate, methodTasksCancel:
		return true
	}
	return false
}

// fill works out what rec's request needs of the server: for a
// tools/call, the snapshot it runs on, the tool it names there and the
// caller's admission; and its caller, when mapCaller and the method acts
// as its caller (needsCaller). The caller of a tools/call naming no tool
// is not needed: the answer is the same for everyone. ctx is the
// request's.
func (s *server) fill(ctx context.Context, rec *record, mapCaller bool) {
	if rec.method == "tools/call" {
		rec.e = s.acquire()
		if sr := rec.e.snap.search; sr != nil && sr.builtin(rec.name) {
			rec.unwrap() // before anything else reads the name
		}
		if rec.via == searchToolName || rec.bad != nil {
			// Answered by the search tool: rec.name is no tool.
		} else if t, ok := rec.e.snap.byName[rec.name]; ok {
			rec.tool = t
		} else {
			rec.gone = rec.e.snap.withdrawn[rec.name]
		}
		if rec.tool == nil && rec.gone == nil && (rec.via == "" || rec.via == callToolName && rec.bad == nil) {
			return
		}
	} else if !mapCaller || !needsCaller(rec.method) {
		return
	}
	rec.caller, rec.refused = s.principalOf(ctx, rec.ti)
	rec.hasCaller = true
	if rec.tool != nil && rec.refused == nil {
		rec.adm, rec.admitted = rec.tool.plan.Admit(rec.caller)
	}
}

// records keeps the records of the requests the edge answered itself
// (Handler.answer, and Handler.answerSession but for a call that may be
// polled) for the next requests to read into: a record is the largest
// allocation of a call. Only those are recycled, once ServeHTTP has
// written the answer and released the snapshot: on those routes nothing
// keeps the record, or a pointer into it, past the answer (ADR 89). Every
// other record is left to the collector.
var records = sync.Pool{New: func() any { return new(record) }}

// newRecord returns an empty record, recycled when one is free.
func newRecord() *record { return records.Get().(*record) }

// recycle empties rec and keeps it for a later request; rec is not used
// again by its caller.
func recycle(rec *record) {
	*rec = record{}
	records.Put(rec)
}

// release ends the record's hold on its snapshot, once the request is
// answered.
func (rec *record) release(s *server) {
	if rec.e != nil {
		s.release(rec.e)
	}
}

// principal returns the caller the record was filled with, or the
// identity mapper's refusal.
func (rec *record) principal() (policy.Principal, error) { return rec.caller, rec.refused }

// key is who the request counts against under the session and stream
// caps: the mapped principal (policy.Principal.Key); anonymous and
// development callers, who have no token, share the key "". A caller the
// identity mapper refuses counts under its token's issuer and subject
// (tokenKey), so that it cannot take the slots of others.
func (rec *record) key() string {
	if rec == nil || rec.ti == nil {
		return ""
	}
	if rec.refused != nil {
		return "unmapped\x00" + tokenKey(rec.ti)
	}
	return "principal\x00" + rec.caller.Key()
}

// recordOf returns the record of req, a request of method the SDK is
// serving (stdio, another SDK transport, DisableFastPath, or a request the
// HTTP edge hands over), built from the SDK's request by the middleware,
// the request's one owner, and the function that releases it. The edge's
// own record of a request it hands over stays the edge's: nothing carries
// it to the SDK, in ctx or under the token facts (ADR 75).
func (s *server) recordOf(ctx context.Context, method string, req mcp.Request) (*record, func()) {
	rec := &record{method: method}
	if extra := req.GetExtra(); extra != nil {
		rec.ti = extra.TokenInfo
	}
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		rec.modern = r.ProtocolVersion() >= modernVersion
		if r.Params != nil {
			rec.name, rec.args = r.Params.Name, r.Params.Arguments
		}
	case *mcp.ListToolsRequest:
		rec.modern = r.ProtocolVersion() >= modernVersion
	}
	s.fill(ctx, rec, true)
	return rec, func() { rec.release(s) }
}

// callerOf returns who req, a request of method the middleware is
// handling, acts as: its record's caller.
func (s *server) callerOf(ctx context.Context, method string, req mcp.Request) (policy.Principal, error) {
	rec, release := s.recordOf(ctx, method, req)
	defer release()
	return rec.principal()
}

// methodListen opens a 2026-07-28 subscription stream (SEP-2575).
const methodListen = "subscriptions/listen"
