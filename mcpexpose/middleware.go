package mcpexpose

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// allowedMethods are the methods the server answers; everything else is
// "method not found", so no surface the server does not mean to offer is
// reachable through the SDK's defaults.
var allowedMethods = map[string]bool{
	"initialize": true, "notifications/initialized": true, "ping": true,
	"server/discover": true, "notifications/cancelled": true,
	"tools/list": true, "tools/call": true,
}

// middleware answers tools/list itself, guards tools/call, and refuses
// methods the server does not offer.
func (s *server) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			rec, release := s.recordOf(ctx, method, req)
			defer release()
			return s.listToolsOf(ctx, rec, req)
		case "tools/call":
			if !s.invoke {
				return nil, errNoCall
			}
			cr, _ := req.(*mcp.CallToolRequest)
			if cr == nil || cr.Params == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "missing params"}
			}
			rec, release := s.recordOf(ctx, method, req)
			defer release()
			// The call is the middleware's to run, with its record as an
			// argument: the SDK's tool handler is never reached (handler),
			// and the result is finished as the SDK finishes a handler's
			// (sdkFinished). A call that became a task answers its task.
			if s.pollAfter > 0 {
				if stop := s.poll(cr); stop != nil {
					defer stop()
				}
			}
			res, err := s.callTool(ctx, rec, cr, nil)
			if err != nil {
				return nil, err
			}
			return sdkFinished(cr, res), nil
		case "resources/list", "resources/templates/list", "resources/read",
			"resources/subscribe", "resources/unsubscribe",
			"prompts/list", "prompts/get", "completion/complete":
			return s.serveFeature(ctx, method, req, next)
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
			if s.tasks != nil {
				return s.serveTask(ctx, method, req)
			}
		case "logging/setLevel":
			if s.opts.ForwardLogs {
				res, err := next(ctx, method, req)
				// The edge's calls on the session log at the level the
				// SDK accepted.
				//lint:ignore SA1019 logging is deprecated at 2026-07-28 (SEP-2577) but served during the deprecation window
				sr, _ := req.(*mcp.ServerRequest[*mcp.SetLoggingLevelParams])
				if err == nil && s.levelSet != nil && sr != nil && sr.Session != nil && sr.Params != nil {
					s.levelSet(sr.Session.ID(), sr.Params.Level)
				}
				return res, err
			}
		case "initialize":
			if s.watch != nil {
				if p, err := s.callerOf(ctx, method, req); err == nil {
					ss, _ := req.GetSession().(*mcp.ServerSession)
					s.watch.seen(ss, p)
				}
			}
			return next(ctx, method, req)
		case "subscriptions/listen":
			// The 2026-07-28 way to hear of changes; only a server whose
			// list can change, that runs tasks (whose status a listen may
			// follow: tasknotify.go), or that has resources to subscribe
			// to, offers it. A handshake-era session hears of them on its GET
			// stream: a listen of its own would park a handler that its
			// client's going away does not end (streams.go).
			if !legacySession(req) && (s.watch != nil || s.tasks != nil || (s.invoke && s.cur.Load().snap.offers("resources/read"))) {
				p, err := s.callerOf(ctx, method, req)
				if err != nil {
					return nil, err
				}
				if err := s.checkListen(req, p); err != nil {
					return nil, err
				}
				if s.watch != nil {
					ss, _ := req.GetSession().(*mcp.ServerSession)
					s.watch.seen(ss, p)
					defer s.watch.forget(ss)
				}
				ctx, cancel := s.boundListen(ctx, req)
				defer cancel()
				if tl := taskListenIn(ctx); tl != nil && s.tasks != nil {
					stop, active, err := s.tasks.listenFor(ctx, req, tl, p)
					if err != nil {
						return nil, err
					}
					defer stop()
					if active {
						// The SDK returns at once from a listen with no
						// subscription of its own; one for tasks lasts as
						// its others do, until the stream ends.
						res, err := next(ctx, method, req)
						if err == nil {
							<-ctx.Done()
						}
						return res, err
					}
				}
				return next(ctx, method, req)
			}
		default:
			if allowedMethods[method] {
				return next(ctx, method, req)
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method %q is not offered by this server", method)}
	}
}

// requestInfo describes a request for the application's observer.
func (s *server) requestInfo(method, tool string, req mcp.Request, p policy.Principal) agnara.RequestInfo {
	info := agnara.RequestInfo{Method: method, Tool: tool, PrincipalID: p.ID()}
	// Params may be a typed nil (a legacy tools/list sends none).
	switch params := req.GetParams().(type) {
	case *mcp.ListToolsParams:
		if params != nil {
			info.Meta = params.Meta
		}
	case *mcp.CallToolParamsRaw:
		if params != nil {
			info.Meta = params.Meta
		}
	}
	switch r := req.(type) {
	case *mcp.CallToolRequest:
		info.ProtocolVersion = r.ProtocolVersion()
	case *mcp.ListToolsRequest:
		info.ProtocolVersion = r.ProtocolVersion()
	}
	return info
}

// labelOf is the label of a request whose result needs no further naming:
// answered, or refused with a protocol error.
func labelOf(err error) agnara.Label {
	if err != nil {
		return agnara.LabelError
	}
	return agnara.LabelOK
}

// principalOf maps verified token facts; nil means anonymous.
func (s *server) principalOf(ctx context.Context, ti *auth.TokenInfo) (policy.Principal, error) {
	if ti == nil {
		switch {
		case s.local != nil:
			return *s.local, nil
		case s.opts.DevelopmentPrincipal != nil:
			return *s.opts.DevelopmentPrincipal, nil
		}
		return policy.Anonymous(), nil
	}
	p, err := s.identity(ctx, identityOf(ti))
	if err != nil {
		s.logger.LogAttrs(ctx, slog.LevelWarn, "identity mapper refused a caller", slog.Any("error", err))
		return policy.Principal{}, errDenied
	}
	return p, nil
}

// legacySession reports whether req came on a handshake-era session, which
// hears of list changes without asking.
func legacySession(req mcp.Request) bool {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion < modernVersion
}

// listTools answers tools/list for p from e: the tools p may see, in one
// page.
func (s *server) listTools(e *epoch, req mcp.Request, p policy.Principal) (mcp.Result, error) {
	if params, _ := req.GetParams().(*mcp.ListToolsParams); params != nil && params.Cursor != "" {
		return nil, errCursor
	}
	visible := e.snap.visible(p)
	var res *mcp.ListToolsResult
	if sr := e.snap.search; sr != nil {
		res = &mcp.ListToolsResult{Tools: sr.list(visible, req)}
	} else {
		res = &mcp.ListToolsResult{Tools: make([]*mcp.Tool, len(visible))}
		for i, t := range visible {
			res.Tools[i] = t.listed(req)
		}
	}
	res.TTLMs = 0
	res.CacheScope = "public"
	if e.private {
		res.CacheScope = "private"
	}
	return res, nil
}

// boundListen returns the context a subscriptions/listen handler waits on:
// ctx, ending at the handler's StreamLifetime or at the expiry of the
// token the listen came with, whichever is first. When it ends, the SDK's
// handler returns the listen's result and the stream closes cleanly, as
// the 2026-07-28 revision lets a server end it, for the client to listen
// again (with a fresh token).
func (s *server) boundListen(ctx context.Context, req mcp.Request) (context.Context, context.CancelFunc) {
	var ti *auth.TokenInfo
	if extra := req.GetExtra(); extra != nil {
		ti = extra.TokenInfo
	}
	deadline := s.listenDeadline(ti)
	if deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline)
}

// listenDeadline is when a listen with the token facts ti ends: at the
// handler's StreamLifetime or at the token's expiry, whichever is first;
// zero for never. The SDK's listen (boundListen) and the edge's
// (serveListen) end alike.
func (s *server) listenDeadline(ti *auth.TokenInfo) time.Time {
	var deadline time.Time
	if s.streamLifetime > 0 {
		deadline = time.Now().Add(s.streamLifetime)
	}
	if ti != nil {
		if exp := ti.Expiration; !exp.IsZero() && (deadline.IsZero() || exp.Before(deadline)) {
			deadline = exp
		}
	}
	return deadline
}

// poll arms the SSE polling of the stream of req, a tools/call the SDK
// serves (Limits.PollAfter): once pollAfter has passed, the SDK ends the
// call's stream with a retry: field of pollRetry, and what the call sends
// afterwards waits in the event store for the client to resume the
// stream. It returns the function that disarms it, or nil when req's
// stream is not polled: only a 2025-11-25 session's, whose client has the
// event id of the priming event to resume from.
func (s *server) poll(req *mcp.CallToolRequest) func() bool {
	if req.Extra == nil || req.Extra.CloseSSEStream == nil || req.ProtocolVersion() != mcpversion.Handshake20251125 {
		return nil
	}
	end, retry := req.Extra.CloseSSEStream, s.pollRetry
	return time.AfterFunc(s.pollAfter, func() { end(mcp.CloseSSEStreamArgs{RetryAfter: retry}) }).Stop
}
