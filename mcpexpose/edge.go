package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	segjson "github.com/segmentio/encoding/json"
)

// The edge is where every HTTP request enters. In order, once each:
//
//  1. the Host of a loopback listener and the Origin are checked;
//  2. a POST's body is read, under the size limit, by one reader: the
//     strict scanner first (internal/wire, Call.Read), the general parser
//     only when it declines, and the [record] begun;
//  3. the bearer token is verified, and a request to a handshake-era
//     session from anyone but the caller it belongs to is marked a
//     stranger's (sessions.stranger);
//  4. the record is filled (fill): the caller mapped, the tool looked up
//     on the snapshot the call will run on, the caller's admission;
//  5. the refusals the edge words itself: the step-up challenge, header
//     parameters that do not match the arguments;
//  6. one decision: the edge answers the request itself (fastpath.go),
//     holds it (a subscriptions/listen: listen.go), or hands it, with its
//     record, to the SDK's streamable handler (forward).
//
// Whichever way a tools/call goes, [server.callTool] runs it.

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if wire.Rebound(r) {
		// The SDK's DNS rebinding protection, worded as the SDK words it,
		// but before anything else: a rebound page's request reads no
		// body, verifies no token and maps no identity.
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return
	}
	if origin := wire.Get(r.Header, wire.HeaderOrigin); origin != "" && !h.originAllowed(origin, r) {
		wire.WriteNoIDError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "origin not allowed")
		return
	}
	var rec *record
	if r.Method == http.MethodPost {
		var ok bool
		if rec, ok = h.read(w, r); !ok {
			return
		}
	}
	var ti *auth.TokenInfo
	if h.tokens != nil {
		var ok bool
		if ti, ok = h.verify(w, r); !ok {
			return
		}
	}
	// The SDK is handed no token for a stranger's request to a session:
	// it then refuses it as it refuses another user's, in its own order
	// and words (403 "session user mismatch"), which its own check of
	// the subject alone would not for the same subject from another
	// issuer.
	sdkTI, stranger := ti, h.sessions.stranger(r, ti)
	if stranger {
		sdkTI = nil
	}
	if rec == nil {
		if r.Method == http.MethodGet && !stranger && h.resumeLive(w, r) {
			return
		}
		h.forward(w, r, nil, sdkTI)
		return
	}
	rec.ti = ti
	h.srv.fill(r.Context(), rec, h.mapsCaller(r, rec))
	answered := false
	defer func() {
		rec.release(h.srv)
		if answered {
			recycle(rec) // the edge's own answer: nothing keeps rec (records)
		}
	}()
	if h.refuse(w, r, rec) {
		return
	}
	if ls := h.session(r, rec, stranger); ls != nil {
		defer h.sessions.end(ls)
		if rec.response != nil && h.sessions.answered(ls, rec.response) {
			// As the SDK accepts a POST of responses only.
			w.WriteHeader(http.StatusAccepted)
			return
		}
		ctx, cancel, ok, done := h.answersSession(w, r, rec, ls)
		switch {
		case done:
			return
		case ok:
			answered = h.answerSession(ctx, cancel, w, r, rec, ls)
			return
		}
		h.forwardOnSession(w, r, rec, ti, ls)
		return
	}
	if h.answers(r, rec) {
		h.answer(w, r, rec)
		answered = true
		return
	}
	if rec.method == methodListen && h.holdsListen(r, rec) {
		h.holdListen(w, r, rec, sdkTI)
		return
	}
	h.forward(w, r, rec, sdkTI)
}

// mapsCaller reports whether the edge maps the caller of rec, r's record,
// itself: for a request it may answer (tools/call, and tools/list unless
// DisableFastPath) or refuse (a tools/call's step-up challenge and header
// parameters), and for one it counts against its caller's caps (a POST
// that opens a session, a listen). Any other request is the SDK's to
// serve, and the SDK's route maps its caller (server.recordOf); a request
// the edge maps and then hands over is mapped there again (ADR 75).
func (h *Handler) mapsCaller(r *http.Request, rec *record) bool {
	switch {
	case rec.method == "tools/call":
		return true
	case rec.method == "tools/list" && h.fast:
		return true
	case rec.modern:
		return rec.method == methodListen
	}
	return wire.Get(r.Header, wire.HeaderSession) == ""
}

// read reads r's body, the one time it is read, and begins its record; it
// answers and reports false when the body is too large or not JSON, or a
// tasks/* request names another task in its Mcp-Name header. The SDK is
// handed the same bytes.
func (h *Handler) read(w http.ResponseWriter, r *http.Request) (*record, bool) {
	body, err := readBody(http.MaxBytesReader(w, r.Body, h.maxBody), r.ContentLength, h.maxBody)
	r.Body.Close()
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			wire.WriteNoIDError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, "request body too large")
			return nil, false
		}
		wire.WriteNoIDError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "cannot read the request body")
		return nil, false
	}
	modern := modernRequest(r)
	rec, ok := readRecord(body, modern)
	if !ok {
		wire.WriteNoIDError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "the request body is not valid JSON")
		return nil, false
	}
	rec.modern = modern
	r.Body = newBodyReader(body)
	r.ContentLength = int64(len(body))
	if isTaskMethod(rec.method) && rec.modern && wire.Get(r.Header, wire.HeaderName) != rec.taskID {
		// SEP-2663 routes tasks by Mcp-Name: it must name the task the
		// body does (SEP-2243 HeaderMismatch otherwise).
		wire.WriteError(w, http.StatusBadRequest, rec.id, mcp.CodeHeaderMismatch, "the Mcp-Name header must be the request's params.taskId")
		return nil, false
	}
	return rec, true
}

// readBody is io.ReadAll(rd) into a buffer of the body's declared length
// (plus the byte that finds its end), when it declares one within max,
// where io.ReadAll starts at 512 bytes and grows: one allocation of the
// body's size.
func readBody(rd io.Reader, length, max int64) ([]byte, error) {
	if length <= 0 || length > max {
		return io.ReadAll(rd)
	}
	b := make([]byte, 0, length+1)
	for {
		n, err := rd.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // longer than declared: grow as io.ReadAll
		}
	}
}

// bodyReader is a body read whole, handed on as the request's body again:
// io.NopCloser(bytes.NewReader(body)) in one allocation.
type bodyReader struct{ bytes.Reader }

func newBodyReader(body []byte) *bodyReader {
	br := &bodyReader{}
	br.Reset(body)
	return br
}

// Close implements io.Closer; it does nothing.
func (*bodyReader) Close() error { return nil }

// readRecord begins the record of a POSTed body, of a 2026-07-28 request
// when modern: read by the strict scanner when it can read the whole
// request, else by the general parser. It reports false when body is not
// valid JSON. A body the strict scanner reads is valid (it checks what it
// reads), and is not checked again.
func readRecord(body []byte, modern bool) (*record, bool) {
	rec := newRecord()
	if fc := &rec.call; fc.Read(body, modern) {
		rec.method, rec.id, rec.name, rec.args, rec.fast = fc.Method(), fc.ID, fc.Name, fc.Args, fc
		return rec, true
	}
	recycle(rec)
	if !segjson.Valid(body) {
		return nil, false
	}
	rec = parseMessage(body)
	if rec.method == methodListen && modern {
		var l wire.Listen
		if l.Read(body) {
			rec.held = &l
		}
	}
	if rec.method == "" && !modern {
		// A client's answer to a question of the edge's (edgeask.go),
		// decoded as the SDK decodes it.
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			rec.response, _ = msg.(*jsonrpc.Response)
		}
	}
	return rec, true
}

// parseMessage reads body, valid JSON, with the decoder and the options the
// SDK reads it with (segmentio/encoding, case-sensitive keys, escapes
// decoded), so that no spelling of a key, a method or a name —
// "tools\/call", "Method", "ledger.\u0061ppend" — reads one way here and
// another way there. A body that is not a request object (a batch, a
// number, fields of the wrong types) gives a record without a method, for
// the SDK to refuse.
func parseMessage(body []byte) *record {
	var top struct {
		ID     segjson.RawMessage `json:"id"`
		Method segjson.RawMessage `json:"method"`
		Params segjson.RawMessage `json:"params"`
	}
	rec := &record{}
	if rest, err := segjson.Parse(body, &top, segjson.DontMatchCaseInsensitiveStructFields); err != nil || len(rest) != 0 {
		return rec
	}
	rec.id = json.RawMessage(top.ID)
	if segjson.Unmarshal(top.Method, &rec.method) != nil {
		rec.method = ""
		return rec
	}
	switch {
	case isTaskMethod(rec.method):
		var params struct {
			TaskID segjson.RawMessage `json:"taskId"`
		}
		if _, err := segjson.Parse(top.Params, &params, segjson.DontMatchCaseInsensitiveStructFields); err == nil {
			_ = segjson.Unmarshal(params.TaskID, &rec.taskID)
		}
	case rec.method == methodListen:
		var params struct {
			Notifications struct {
				TaskIDs segjson.RawMessage `json:"taskIds"`
			} `json:"notifications"`
		}
		if _, err := segjson.Parse(top.Params, &params, segjson.DontMatchCaseInsensitiveStructFields); err == nil && params.Notifications.TaskIDs != nil {
			err := segjson.Unmarshal(params.Notifications.TaskIDs, &rec.listen.ids)
			rec.listen.bad = err != nil || badListenTasks(rec.listen.ids)
		}
	case rec.method == "notifications/cancelled":
		var params struct {
			RequestID segjson.RawMessage `json:"requestId"`
		}
		if _, err := segjson.Parse(top.Params, &params, segjson.DontMatchCaseInsensitiveStructFields); err == nil {
			rec.cancels = wire.PlainID(params.RequestID)
		}
	case rec.method == "tools/call":
		var params struct {
			Name      segjson.RawMessage `json:"name"`
			Arguments segjson.RawMessage `json:"arguments"`
		}
		if _, err := segjson.Parse(top.Params, &params, segjson.DontMatchCaseInsensitiveStructFields); err == nil {
			_ = segjson.Unmarshal(params.Name, &rec.name)
			rec.args = json.RawMessage(params.Arguments)
		}
	}
	return rec
}

// verify verifies r's bearer token and returns its facts, nil for a
// request without one that AllowAnonymous lets through; it answers the
// OAuth challenge and reports false for any other request.
func (h *Handler) verify(w http.ResponseWriter, r *http.Request) (*auth.TokenInfo, bool) {
	authz := wire.Get(r.Header, wire.HeaderAuthorize)
	if authz == "" {
		if h.anonymous {
			return nil, true
		}
		h.challenge(w, http.StatusUnauthorized, "", "", "a bearer token is required")
		return nil, false
	}
	scheme, token, ok := strings.Cut(authz, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || strings.ContainsAny(token, " \t") {
		h.challenge(w, http.StatusBadRequest, "invalid_request", "", "the Authorization header must be \"Bearer <token>\"")
		return nil, false
	}
	ti, err := h.tokens(r.Context(), token, r)
	switch {
	case err == nil && ti == nil:
		err = errors.New("token verifier returned no token info")
		fallthrough
	case err != nil && !errors.Is(err, auth.ErrInvalidToken):
		if errors.Is(err, auth.ErrOAuth) {
			h.challenge(w, http.StatusBadRequest, "invalid_request", "", "bad token request")
			return nil, false
		}
		h.logger.LogAttrs(r.Context(), slog.LevelError, "token verification failed", slog.Any("error", err))
		wire.WriteNoIDError(w, http.StatusInternalServerError, jsonrpc.CodeInternalError, "token verification failed")
		return nil, false
	case err != nil:
		h.srv.refusals.refused(r.Context(), h.logger, err)
		h.challenge(w, http.StatusUnauthorized, "invalid_token", "", "the bearer token is not valid")
		return nil, false
	case ti.Expiration.IsZero():
		h.challenge(w, http.StatusUnauthorized, "invalid_token", "", "the bearer token has no expiry")
		return nil, false
	case ti.Expiration.Add(maxClockSkew).Before(time.Now()):
		// Expiry is the verifier's to check, with its own leeway; this
		// catches a verifier that does not check it at all.
		h.challenge(w, http.StatusUnauthorized, "invalid_token", "", "the bearer token has expired")
		return nil, false
	}
	// This request's own copy, which the SDK is handed (verified): a
	// verifier may return facts it shares between requests.
	cp := *ti
	return &cp, true
}

// refuse answers the refusals the edge words itself, and reports whether
// it answered: with step-up, a tools/call of a tool whose scopes the
// caller lacks (403 insufficient_scope naming them); at 2026-07-28, a
// tools/call whose header parameters do not match its arguments (400,
// -32020).
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, rec *record) bool {
	if rec.method != "tools/call" {
		return false
	}
	if h.stepUp && rec.ti != nil && rec.refused == nil {
		switch {
		case rec.tool != nil && !rec.admitted:
			h.srv.auditStepUp(r, rec, rec.tool.name, rec.tool.plan.Identity())
			h.challengeID(w, rec.id, http.StatusForbidden, "insufficient_scope", strings.Join(rec.tool.plan.Scopes(), " "), "the token lacks a scope this tool requires")
			return true
		case rec.gone != nil && !rec.gone.allows(rec.caller):
			// Authorized as any call: a caller without the scopes learns
			// no more of a withdrawn tool than of the tool it stands for.
			h.srv.auditStepUp(r, rec, rec.gone.name, "")
			h.challengeID(w, rec.id, http.StatusForbidden, "insufficient_scope", strings.Join(rec.gone.scopes, " "), "the token lacks a scope this tool requires")
			return true
		}
	}
	if rec.modern {
		if err := h.checkParams(r, rec); err != nil {
			wire.WriteError(w, http.StatusBadRequest, rec.id, mcp.CodeHeaderMismatch, err.Error())
			return true
		}
	}
	return false
}

// checkParams says why the header parameters of rec, a 2026-07-28
// tools/call, do not match its arguments, or returns nil: when they match,
// and whenever the caller may not call the tool (it does not exist, the
// identity mapper refused the caller, or the caller may not see it), so
// that the SDK answers the call exactly as it answers the call of an
// unknown tool.
//
// Only a request whose Mcp-Method and Mcp-Name headers match its body is
// checked: the SDK refuses the others itself, first, as SEP-2243 orders
// the checks. A call_tool (search.go) names call_tool in its body and in
// Mcp-Name; the tool it calls is checked against the arguments it gives
// that tool, exactly as a direct call is, so that no proxy routing or
// policing on the headers is walked around by the search.
func (h *Handler) checkParams(r *http.Request, rec *record) error {
	named := rec.name
	if rec.via != "" {
		named = rec.via // what the body names; rec.name is the tool it calls
	}
	if wire.Get(r.Header, wire.HeaderMethod) != "tools/call" || wire.Get(r.Header, wire.HeaderName) != named {
		return nil
	}
	t := rec.tool
	if t == nil || t.params == nil || rec.refused != nil {
		return nil
	}
	// With ForbiddenResult every tool answers its callers; otherwise only
	// the ones they may call do.
	if !h.srv.opts.ForbiddenResult && !rec.admitted {
		return nil
	}
	return checkHeaderParams(r.Header, t.params, rec.args)
}

// forward hands r to the SDK's streamable handler with its verified token
// facts ti; rec is the edge's record of it (nil for a request without a
// body), which stays the edge's: the SDK's route builds its own
// (server.recordOf). A listen stream the edge does not hold itself
// (listen.go), or a POST that opens a session, is counted against its
// caps first; a listen stream and a GET stream are kept alive
// (keepalive.go). A 2026-07-28 listen that names tasks gets
// its task part (tasknotify.go): the stream that adds the tasks'
// notifications to the listen's response, in the context the SDK serves
// the listen in, the one way the response's writer reaches the server.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, rec *record, ti *auth.TokenInfo) {
	var next http.Handler = http.HandlerFunc(h.route)
	ctx := r.Context()
	if ti != nil {
		next = h.inner // the SDK's bearer middleware, which hands the SDK ti
		ctx = context.WithValue(ctx, verifiedKey{}, ti)
	}
	listen := rec != nil && rec.method == methodListen && rec.modern
	if listen || (rec == nil && r.Method == http.MethodGet) {
		// A listen stream, a session's GET stream, or a stream resumed
		// with Last-Event-ID: kept alive, and ended when a write fails.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		aw := &aliveWriter{w: w, every: h.keepAlive, cancel: cancel}
		defer func() {
			aw.end()
			cancel()
		}()
		w = aw
	}
	if listen && h.srv.tasks != nil && rec.listen.named() {
		ts := newTaskStream(w, rec.id)
		defer ts.end()
		w = ts
		tl := rec.listen
		tl.ts = ts
		ctx = withTaskListen(ctx, &tl)
	}
	if ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	switch {
	case listen:
		h.streams.serve(w, r, rec, next)
	case rec != nil && !modernRequest(r) && wire.Get(r.Header, wire.HeaderSession) == "":
		h.sessions.serveNew(next, w, r, rec)
	default:
		next.ServeHTTP(w, r)
	}
}

// forwardOnSession forwards rec, a POST to the live session ls, to the SDK
// (forward), keeping what the edge must know of it: a call's id in flight,
// so that the edge leaves a duplicate of it to the SDK too; and a
// notifications/cancelled naming one of the edge's calls, which it cancels
// (the SDK, which does not know the call, ignores the notification).
func (h *Handler) forwardOnSession(w http.ResponseWriter, r *http.Request, rec *record, ti *auth.TokenInfo, ls *liveSession) {
	if rec.method == "notifications/cancelled" && rec.cancels != nil {
		h.sessions.cancelCall(ls, string(rec.cancels))
	}
	if rec.id != nil && rec.method != "" {
		if ok, _ := h.sessions.claim(ls, string(rec.id), nil); ok {
			defer h.sessions.unclaim(ls, string(rec.id))
		}
	}
	h.forward(w, r, rec, ti)
}

// route sends 2026-07-28 requests to the stateless handler and handshake-era
// requests (no version header, as on initialize, or a legacy version) to the
// stateful one.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	if modernRequest(r) {
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.stateful.ServeHTTP(w, r)
}

// modernRequest reports whether r is a 2026-07-28 request, served by the
// stateless handler: its version header is not a legacy version.
func modernRequest(r *http.Request) bool {
	v := wire.Get(r.Header, wire.HeaderVersion)
	return v != "" && v >= modernVersion
}

type verifiedKey struct{}

// verified hands the SDK's bearer middleware the facts ServeHTTP verified.
func verified(_ context.Context, _ string, r *http.Request) (*auth.TokenInfo, error) {
	if ti, ok := r.Context().Value(verifiedKey{}).(*auth.TokenInfo); ok && ti != nil {
		return ti, nil
	}
	return nil, auth.ErrInvalidToken
}
