package mcpexpose

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// AuditSink receives one [AuditRecord] per decided tools/call: every call of
// a tool that exists, by a caller whose identity was accepted, that reached
// an answer (a result, an input-required round, or a refusal, a hidden tool
// included). It is set in [ServerOptions.Audit]. Unlike the application's
// [agnara.Observer], which is telemetry, a sink sees every such call: nothing
// is sampled or dropped before it.
//
// Record is called synchronously on the request's goroutine after the
// outcome is known and before the answer is sent, with a context that
// carries the request's values but not its cancellation (so the record of a
// canceled call can still be written). It must be fast, or buffer: the
// caller waits for it. It cannot fail the call; a panic in Record is
// recovered and logged at error ("audit sink panicked") and the call is
// answered as if the sink had returned. A sink must be safe for concurrent
// use.
type AuditSink interface {
	Record(ctx context.Context, r AuditRecord)
}

// AuditRecord is what an [AuditSink] learns about one decided tools/call:
// who called which tool, with which arguments (as a digest), and how it
// ended. It never holds argument values, tokens, messages or error text.
// The schema of its slog form is documented in docs/audit.md.
type AuditRecord struct {
	// Time is when the call was decided.
	Time time.Time
	// PrincipalID and PrincipalIssuer are the acting principal's ("" for
	// anonymous).
	PrincipalID, PrincipalIssuer string
	// ClientID is the OAuth client the caller's token was issued to, when
	// the token verifier says (see [ExtraClientID]).
	ClientID string
	// Tool is the tool's wire name; Capability its capability identity
	// ("<app>.<name>"), or "" for a withdrawn tool ([Exposure.Withdrawn]),
	// which has none.
	Tool, Capability string
	// ProtocolVersion is the request's protocol version.
	ProtocolVersion string
	// ArgumentsDigest is execution.ArgumentsDigest of the call's arguments,
	// or "" when they are not I-JSON (the outcome is then invalid_input).
	ArgumentsDigest string
	// Outcome is how the call ended: [agnara.LabelOK],
	// [agnara.LabelInputRequired] (the round asked the caller something), a
	// failure code ("forbidden" also for a hidden tool answered as unknown
	// or with a 403 insufficient_scope challenge), [agnara.LabelCanceled]
	// (the caller went away), or [agnara.LabelError] (a protocol error, such
	// as a bad requestState).
	Outcome agnara.Label
	// Reason is the failure's finer reason, or "".
	Reason execution.Reason
	// ApprovalID is the approval a failure names in its details (an
	// imported write's "approval_id": pending, rejected, in progress, or a
	// receipt that is not committed), or "".
	ApprovalID string
	// Credential names whose authority reached past this server for the
	// call, as the host serving the tool says; never a credential itself.
	// Package gateway sets it on each imported tool's record to its
	// upstream's credentials: "gateway" (the gateway's own identity),
	// "token_exchange" (the caller's token, exchanged), "consent" (the
	// caller's own grant). "" when the host says nothing.
	Credential string
	// TraceID is the W3C trace id of the request's _meta traceparent (32
	// lowercase hex digits), or "" when it has none or it is malformed.
	TraceID string
	// Resumed reports whether the call answered an earlier round (it carried
	// a requestState). A confirmed call is two records: one input_required,
	// then one resumed with the final outcome. A handshake-era call asks
	// its questions within one request and has one record.
	Resumed bool
}

// approvalIDDetail is the failure detail that names an approval (set by
// package mcpimport on imported writes).
const approvalIDDetail = "approval_id"

// labelForbidden is the outcome of a call refused for lack of scopes.
var labelForbidden = agnara.Label(execution.Forbidden.String())

// audit records a decided tools/call of t by p, answered with res (nil for a
// protocol error or a hidden tool) and labelled label. Without a sink it
// does nothing and computes nothing.
func (s *server) audit(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, label agnara.Label, res *mcp.CallToolResult) {
	if s.opts.Audit == nil {
		return
	}
	s.auditAs(ctx, req, t.name, t.plan.Identity(), p, label, res)
}

// auditAs is audit of the tool named name, of capability identity
// capability ("" for a withdrawn tool, which has none).
func (s *server) auditAs(ctx context.Context, req *mcp.CallToolRequest, name, capability string, p policy.Principal, label agnara.Label, res *mcp.CallToolResult) {
	if s.opts.Audit == nil {
		return
	}
	r := AuditRecord{
		Time:            time.Now(),
		PrincipalID:     p.ID(),
		PrincipalIssuer: p.Issuer(),
		Tool:            name,
		Capability:      capability,
		ProtocolVersion: req.ProtocolVersion(),
		Outcome:         label,
		Resumed:         req.Params.RequestState != "",
	}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		r.ClientID, _ = extra.TokenInfo.Extra[ExtraClientID].(string)
	}
	r.ArgumentsDigest, _ = execution.ArgumentsDigest(req.Params.Arguments) // "" when not I-JSON, as documented
	if tp, ok := req.Params.Meta["traceparent"].(string); ok {
		r.TraceID = traceID(tp)
	}
	if res != nil && res.IsError {
		r.Reason, r.ApprovalID = failureFacts(res)
	}
	s.emit(ctx, r)
}

// auditStepUp records a tools/call of the tool named name, of capability
// identity capability ("" for a withdrawn tool), that the HTTP handler
// refused with 403 insufficient_scope before the server saw it. r's body
// holds the request, rec is its record. The arguments of a call_tool are
// the tool's (rec.args), as they are on every other record of a call
// through it, not call_tool's own.
func (s *server) auditStepUp(r *http.Request, rec *record, name, capability string) {
	if s.opts.Audit == nil {
		return
	}
	p, ti := rec.caller, rec.ti
	ar := AuditRecord{
		Time:            time.Now(),
		PrincipalID:     p.ID(),
		PrincipalIssuer: p.Issuer(),
		Tool:            name,
		Capability:      capability,
		ProtocolVersion: r.Header.Get("Mcp-Protocol-Version"),
		Outcome:         labelForbidden,
	}
	ar.ClientID, _ = ti.Extra[ExtraClientID].(string)
	body, err := io.ReadAll(r.Body)
	if err == nil {
		// Read as parseMessage and the SDK read it: case-sensitive keys.
		var msg struct {
			Params struct {
				Arguments    segjson.RawMessage `json:"arguments"`
				RequestState string             `json:"requestState"`
				Meta         struct {
					ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
					Traceparent     string `json:"traceparent"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if _, err := segjson.Parse(body, &msg, segjson.DontMatchCaseInsensitiveStructFields); err == nil {
			args := json.RawMessage(msg.Params.Arguments)
			if rec.via == callToolName {
				args = rec.args
			}
			ar.ArgumentsDigest, _ = execution.ArgumentsDigest(args)
			ar.TraceID = traceID(msg.Params.Meta.Traceparent)
			ar.Resumed = msg.Params.RequestState != ""
			if v := msg.Params.Meta.ProtocolVersion; v != "" {
				ar.ProtocolVersion = v
			}
		}
	}
	s.emit(r.Context(), ar)
}

// emit hands r to the sink, surviving the sink's panic.
func (s *server) emit(ctx context.Context, r AuditRecord) {
	ctx = context.WithoutCancel(ctx)
	defer func() {
		if v := recover(); v != nil {
			s.logger.LogAttrs(ctx, slog.LevelError, "audit sink panicked", slog.String("tool", r.Tool), slog.Any("panic", v))
		}
	}()
	s.opts.Audit.Record(ctx, r)
}

// failureFacts reads the reason and the approval id out of a failure result
// (see failureResult); "" for what it does not name.
func failureFacts(res *mcp.CallToolResult) (execution.Reason, string) {
	if len(res.Content) != 1 {
		return "", ""
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return "", ""
	}
	var body struct {
		Reason  execution.Reason           `json:"reason"`
		Details map[string]json.RawMessage `json:"details"`
	}
	if json.Unmarshal([]byte(text.Text), &body) != nil {
		return "", ""
	}
	var id string
	if raw, ok := body.Details[approvalIDDetail]; ok && json.Unmarshal(raw, &id) != nil {
		id = ""
	}
	return body.Reason, id
}

// traceID returns the trace id of a W3C traceparent
// ("00-<32 hex>-<16 hex>-<2 hex>"), or "" when tp is not one. Only the id
// is kept, and only when well formed: the header is the caller's to write.
func traceID(tp string) string {
	if len(tp) < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || !lowerHex(tp[:2]) || tp[:2] == "ff" {
		return ""
	}
	if (tp[:2] == "00" && len(tp) != 55) || (len(tp) > 55 && tp[55] != '-') {
		return ""
	}
	id := tp[3:35]
	if !lowerHex(id) || !lowerHex(tp[36:52]) || !lowerHex(tp[53:55]) || id == "00000000000000000000000000000000" {
		return ""
	}
	return id
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// NewSlogAudit returns an [AuditSink] that writes each record through
// logger as one record at info with the message "audit" and the attributes
// documented in docs/audit.md (principal, issuer, client_id, tool,
// capability, protocol_version, arguments_digest, outcome, reason,
// approval_id, trace_id, resumed); the record's time is the decision's. A
// nil logger writes JSON to standard error. Give it a handler of its own
// (slog.NewJSONHandler on a file, say), not one that samples or drops. Safe
// for concurrent use when logger's handler is.
func NewSlogAudit(logger *slog.Logger) AuditSink {
	if logger == nil {
		logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slogAudit{h: logger.Handler()}
}

type slogAudit struct{ h slog.Handler }

func (a slogAudit) Record(ctx context.Context, r AuditRecord) {
	if !a.h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(r.Time, slog.LevelInfo, "audit", 0)
	rec.AddAttrs(slog.String("principal", r.PrincipalID))
	optional := func(key, v string) {
		if v != "" {
			rec.AddAttrs(slog.String(key, v))
		}
	}
	optional("issuer", r.PrincipalIssuer)
	optional("client_id", r.ClientID)
	rec.AddAttrs(
		slog.String("tool", r.Tool),
		slog.String("capability", r.Capability),
		slog.String("protocol_version", r.ProtocolVersion),
	)
	optional("arguments_digest", r.ArgumentsDigest)
	rec.AddAttrs(slog.String("outcome", string(r.Outcome)))
	optional("reason", string(r.Reason))
	optional("approval_id", r.ApprovalID)
	optional("credential", r.Credential)
	optional("trace_id", r.TraceID)
	rec.AddAttrs(slog.Bool("resumed", r.Resumed))
	// A handler's write error has nowhere to go: the sink cannot fail the
	// call, and logging it through the same handler would fail again.
	_ = a.h.Handle(ctx, rec)
}
