package mcpexpose

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/agnara-go/agnara/mcpexpose/internal/wire"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The edge holds a 2026-07-28 subscriptions/listen itself (ADR 82, 90,
// 91): the SDK's stateless handler would make a server session, a
// jsonrpc2 connection with its reader goroutine and a handler goroutine
// parked on the request's context for each one, and keep the listen's
// decoded _meta while it lives. The edge writes the acknowledgement, then
// waits in the connection's own goroutine on the listen's wake-ups (a
// swap that changed its caller's tool list or the prompts, resources or
// templates the SDK server holds, an update of a resource it subscribed
// to, a change of a task it follows), the end of its lifetime or of its
// token, and the request's end (the server's shutdown, the client gone, a
// failed write: keepalive.go), and writes each event, and the listen's
// result at its end, with the bytes the SDK's route writes. It keeps a
// small record (edgeListen, and a taskStream for its tasks) instead of a
// session.
//
// It holds only the listens it reads whole and is sure of (holdsListen):
// one refused, or anything it does not read as the SDK would, is the
// SDK's, as is every listen with DisableFastPath. TestListenDifferential,
// TestListenListsDifferential, TestListenTasksDifferential and FuzzListen
// send the same listens both ways and require equal bytes.

// holdsListen reports whether the edge holds rec, a POST, itself: a
// single 2026-07-28 subscriptions/listen the listen scanner read whole
// (record.held), with the fast path on, whose headers and _meta pass
// every check the SDK makes, from a caller the identity mapper accepted
// and who may read every resource it subscribes to, on a server that
// offers listens, asking for nothing but resource updates and the tool,
// prompt and resource lists' changes (agreed as the SDK agrees:
// agreesLists).
func (h *Handler) holdsListen(r *http.Request, rec *record) bool {
	l, s := rec.held, h.srv
	if !h.fast || l == nil || !rec.modern || rec.refused != nil || !wire.ModernHeaders(r) {
		return false
	}
	if rec.ti != nil && len(strings.Fields(r.Header.Get("Authorization"))) != 2 {
		return false // the SDK's bearer middleware splits it so, and refuses it
	}
	if r.Header.Get("Mcp-Method") != methodListen || len(r.Header.Values("Mcp-Name")) != 0 {
		return false
	}
	meta, ok := wire.ModernMeta(l.Meta)
	if _, leveled := meta[logLevelKey]; !ok || meta[progressTokenKey] != nil || leveled {
		return false // what the SDK makes of them on a listen is its own
	}
	e := s.cur.Load()
	if !(s.watch != nil || s.tasks != nil || (s.invoke && e.snap.offers("resources/read"))) {
		return false // the SDK's -32601
	}
	if len(l.URIs) > 0 && !s.invoke {
		return false
	}
	if (l.TaskIDs != nil || rec.listen.named()) && !s.holdsTasks(rec, meta) {
		return false
	}
	for _, uri := range l.URIs {
		if s.checkSubscribe(e, uri, rec.caller) != nil {
			return false
		}
	}
	if d := s.listenDeadline(rec.ti); !d.IsZero() && !d.After(time.Now()) {
		return false // a token within its clock skew: the SDK's, which ends it at once
	}
	return r.Context().Err() == nil
}

// The _meta keys of a request's progress token and log level.
const (
	progressTokenKey = "progressToken"
	logLevelKey      = "io.modelcontextprotocol/logLevel"
)

// holdsTasks reports whether the edge holds rec, a listen naming tasks,
// as far as its tasks go: the server runs tasks, the ids are a list the
// SDK's route takes (badListenTasks), read alike by the listen scanner
// and the SDK's decoder, and its client declared the tasks extension in
// meta, the _meta the SDK decodes (listenFor's checks). The SDK's route
// answers the others, with its errors.
func (s *server) holdsTasks(rec *record, meta mcp.Meta) bool {
	if s.tasks == nil || rec.held.TaskIDs == nil || rec.listen.bad || !slices.Equal(rec.held.TaskIDs, rec.listen.ids) {
		return false
	}
	req := &mcp.SubscriptionsListenRequest{Params: &mcp.SubscriptionsListenParams{Meta: meta}}
	return declaresTasks(req.ClientCapabilities())
}

// holdListen holds rec, a listen the edge holds (holdsListen), within
// the stream caps. A listen naming tasks follows them first, as the SDK's
// route does (taskRunner.follow): when the task store cannot be reached,
// it is the SDK's route's to answer, handed sdkTI as ServeHTTP hands the
// SDK every request it forwards.
func (h *Handler) holdListen(w http.ResponseWriter, r *http.Request, rec *record, sdkTI *auth.TokenInfo) {
	var ft *followed
	if rec.held.TaskIDs != nil {
		ts := newTaskStream(nil, rec.id)
		agreed, err := h.srv.tasks.follow(r.Context(), ts, rec.held.TaskIDs, rec.caller)
		if err != nil {
			h.forward(w, r, rec, sdkTI)
			return
		}
		defer h.srv.tasks.unwatch(ts, agreed)
		ft = &followed{ts: ts, agreed: agreed}
	}
	h.streams.serve(w, r, rec, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.serveListen(w, r, rec, ft)
	}))
}

// followed is the task part of a listen the edge holds: the stream its
// tasks' notifications wait in, and the task ids it agreed to.
type followed struct {
	ts     *taskStream
	agreed []string
}

// serveListen writes the listen's acknowledgement and then its events,
// kept alive, until it ends, with its result, as the SDK ends it: at once
// when it agreed to nothing, at its lifetime or its token's expiry, or
// when the request ends (the server shuts down, the client goes away, a
// write fails).
func (h *Handler) serveListen(w http.ResponseWriter, r *http.Request, rec *record, ft *followed) {
	s, l := h.srv, rec.held
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	aw := &aliveWriter{w: w, every: h.keepAlive, cancel: cancel}
	defer aw.end()
	el := &edgeListen{p: rec.caller, tools: l.Tools && s.opts.Swappable, wake: make(chan struct{}, 1)}
	el.prompts, el.resources = s.agreesLists(l)
	if len(l.URIs) > 0 {
		el.uris = l.URIs
	}
	var taskWake chan struct{} // nil: no task agreed
	var agreed []string
	if ft != nil && len(ft.agreed) > 0 {
		taskWake, agreed = ft.ts.wake, ft.agreed
	}
	active := el.tools || el.prompts || el.resources || el.uris != nil || agreed != nil
	if active {
		s.listens.add(el)
		defer s.listens.remove(el)
	}
	hd := aw.Header()
	hd.Set("Cache-Control", "no-cache, no-transform")
	hd.Set("Connection", "keep-alive")
	hd.Set("Content-Type", "text/event-stream")
	aw.WriteHeader(http.StatusOK)
	h.fastServed.Add(1)
	id := json.RawMessage(l.ID)
	ack := &mcp.SubscriptionsAcknowledgedParams{
		Meta: mcp.Meta{mcp.MetaKeySubscriptionID: id},
		Notifications: mcp.NotificationSubscriptions{
			ToolsListChanged:      el.tools,
			PromptsListChanged:    el.prompts,
			ResourcesListChanged:  el.resources,
			ResourceSubscriptions: el.uris,
		},
	}
	if !writeAck(aw, ack, agreed) {
		return
	}
	if !active {
		s.endListen(aw, id)
		return
	}
	var end <-chan time.Time
	if d := s.listenDeadline(rec.ti); !d.IsZero() {
		t := time.NewTimer(time.Until(d))
		defer t.Stop()
		end = t.C
	}
	for {
		select {
		case <-ctx.Done():
			// As the SDK's handler: its result, whatever ended the request
			// (the server's shutdown ends it on a live connection; to a
			// client gone, or a broken one, the write fails).
			s.endListen(aw, id)
			return
		case <-end:
			s.endListen(aw, id)
			return
		case <-taskWake:
			// The tasks' status, as the SDK's route's taskStream writes it.
			for _, b := range ft.ts.take() {
				if _, err := aw.Write(b); err != nil {
					return
				}
			}
			if err := aw.FlushError(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return
			}
			continue
		case <-el.wake:
		}
		for _, ev := range el.take() {
			meta := mcp.Meta{mcp.MetaKeySubscriptionID: id}
			var ok bool
			switch ev.kind {
			case listenTools:
				ok = writeNote(aw, methodToolsListChanged, &mcp.ToolListChangedParams{Meta: meta})
			case listenResources:
				ok = writeNote(aw, notificationResourcesListChanged, &mcp.ResourceListChangedParams{Meta: meta})
			case listenPrompts:
				ok = writeNote(aw, notificationPromptsListChanged, &mcp.PromptListChangedParams{Meta: meta})
			default:
				ok = writeNote(aw, notificationResourceUpdated, &mcp.ResourceUpdatedNotificationParams{Meta: meta, URI: ev.uri})
			}
			if !ok {
				return
			}
		}
	}
}

// The notifications of a subscribed resource's change and of the
// resource (and template) and prompt lists' changes.
const (
	notificationResourceUpdated      = "notifications/resources/updated"
	notificationResourcesListChanged = "notifications/resources/list_changed"
	notificationPromptsListChanged   = "notifications/prompts/list_changed"
)

// agreesLists reports whether the SDK's listen would agree to the prompt
// and the resource lists' changes l asks for (its allowedSubscriptions):
// when the capabilities the server was built with declare the list, as
// they declare it, listChanged when swappable; when not, while the SDK
// server holds one of them (a server built without, given some by a swap),
// as the SDK then derives the capability.
func (s *server) agreesLists(l *wire.Listen) (prompts, resources bool) {
	if l.Prompts {
		if c := s.caps.Prompts; c != nil {
			prompts = c.ListChanged
		} else {
			prompts = s.holds.prompts.Load()
		}
	}
	if l.Resources {
		if c := s.caps.Resources; c != nil {
			resources = c.ListChanged
		} else {
			resources = s.holds.resources.Load()
		}
	}
	return prompts, resources
}

// writeAck writes the listen's acknowledgement ack, naming the task ids
// agreed as the SDK's route names them (withTaskIDs on the SDK's bytes).
func writeAck(aw *aliveWriter, ack *mcp.SubscriptionsAcknowledgedParams, agreed []string) bool {
	if len(agreed) == 0 {
		return writeNote(aw, "notifications/subscriptions/acknowledged", ack)
	}
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	if !appendNote(buf, "notifications/subscriptions/acknowledged", ack) {
		return false
	}
	ev, ok := withTaskIDs(appendEvent(nil, buf.Bytes()), agreed)
	if !ok {
		return false
	}
	if _, err := aw.Write(ev); err != nil {
		return false
	}
	err := aw.FlushError()
	return err == nil || errors.Is(err, http.ErrNotSupported)
}

// writeNote writes the notification method with params as one event, as
// the SDK writes it, and flushes it; it reports whether the stream can
// still be written.
func writeNote(aw *aliveWriter, method string, params any) bool {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	return appendNote(buf, method, params) && writeEvent(aw, buf.Bytes())
}

// appendNote appends the notification method with params to buf, as the
// SDK encodes it; it reports whether it could.
func appendNote(buf *bytes.Buffer, method string, params any) bool {
	buf.WriteString(`{"jsonrpc":"2.0","method":`)
	if encode(buf, method) != nil {
		return false
	}
	buf.WriteString(`,"params":`)
	if encode(buf, params) != nil {
		return false
	}
	buf.WriteByte('}')
	return true
}

// endListen writes the listen's result, as the SDK's handler returns it
// when the listen's context ends.
func (s *server) endListen(aw *aliveWriter, id json.RawMessage) {
	buf := wire.GetBuf()
	defer wire.PutBuf(buf)
	buf.WriteString(`{"jsonrpc":"2.0","id":`)
	buf.Write(id)
	buf.WriteString(`,"result":{"resultType":"complete","_meta":`)
	if encode(buf, mcp.Meta{mcp.MetaKeyServerInfo: s.impl, mcp.MetaKeySubscriptionID: id}) != nil {
		return
	}
	buf.WriteString(`}}`)
	writeEvent(aw, buf.Bytes())
}

// writeEvent writes data as one event and flushes it.
func writeEvent(aw *aliveWriter, data []byte) bool {
	if _, err := aw.Write(appendEvent(nil, data)); err != nil {
		return false
	}
	err := aw.FlushError()
	return err == nil || errors.Is(err, http.ErrNotSupported)
}

// encode appends v's JSON to buf as the SDK's JSON-RPC layer encodes it:
// without escaping HTML.
func encode(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}
