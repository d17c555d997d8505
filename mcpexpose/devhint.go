package mcpexpose

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// What a developer is told of tools that vanish for lack of a scope: a tool
// whose scopes the caller does not hold is in no list and answers a call
// "unknown tool", exactly as a tool that does not exist, so that no caller
// learns what it may not use. That is right in production and baffling the
// first time a Scopes line is added to a server nobody signs in to.

// devLogger is where the server's development records go: its logger, or,
// when that logs nothing at Warn (agnara's default is to discard), the
// process's default logger, standard error, so that an application that
// configured no logger still reads them.
func (s *server) devLogger() *slog.Logger {
	if !s.logger.Enabled(context.Background(), slog.LevelWarn) {
		return slog.Default()
	}
	return s.logger
}

// warnUnreachable logs, once, how many of snap's tools no caller of an
// HTTP handler without token verification can call. Without
// HandlerOptions.Tokens no request carries verified token facts, so the
// identity mapper never runs and every caller is one principal: the
// anonymous one, which holds no scope, or the development principal, which
// holds the scopes it was given. A tool whose scopes that principal does not
// all hold is listed to nobody and answers every call "unknown tool".
// Nothing is logged when every tool can be called.
func (s *server) warnUnreachable(snap *Snapshot) {
	caller := policy.Anonymous()
	if dp := s.opts.DevelopmentPrincipal; dp != nil {
		caller = *dp
	}
	n := 0
	var scopes []string
	for _, t := range snap.tools {
		if t.plan.Allows(caller) {
			continue
		}
		n++
		for _, sc := range t.plan.Scopes() {
			if !caller.HasScope(sc) && !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
	}
	if n == 0 {
		return
	}
	msg := "tools declare scopes no caller can hold, so no tools/list shows them and every tools/call answers unknown tool: without HandlerOptions.Tokens every caller is anonymous and holds no scope; verify tokens (HandlerOptions.Tokens, whose scopes Server.Identity maps), or, to try them locally, set Server.DevelopmentPrincipal with these scopes"
	if s.opts.DevelopmentPrincipal != nil {
		msg = "tools declare scopes no caller can hold, so no tools/list shows them and every tools/call answers unknown tool: without HandlerOptions.Tokens every caller acts as Server.DevelopmentPrincipal, which lacks them; give it these scopes, or verify tokens (HandlerOptions.Tokens, whose scopes Server.Identity maps)"
	}
	s.devLogger().Warn(msg, slog.Int("tools", n), slog.Int("of", len(snap.tools)), slog.Any("scopes", scopes))
}

// hiddenTool is the answer to rec's call of the tool name, which exists but
// needs scopes its caller does not all hold: "unknown tool", as for a tool
// that does not exist; but to the development principal (a caller without a
// token, of a server with ServerOptions.DevelopmentPrincipal), the scopes it
// needs, in an error of the same code. Both routes answer through it
// (callTool), so the edge and the SDK say the same.
func (s *server) hiddenTool(rec *record, name string, scopes []string) error {
	dp := s.opts.DevelopmentPrincipal
	if dp == nil || s.local != nil || rec.ti != nil {
		return unknownTool(name)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
		"tool %q is hidden from the development principal %q: it requires the scopes %q; add them to ServerOptions.DevelopmentPrincipal (a hint of development mode: without it this call answers unknown tool)",
		name, dp.ID(), scopes)}
}
