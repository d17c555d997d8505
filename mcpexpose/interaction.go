//lint:file-ignore SA1019 logging, sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcpversion"
	"github.com/agnara-go/agnara/mcpexpose/internal/projection"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLegacyRounds bounds the rounds of questions bridged to a handshake-era
// client within one tools/call.
const maxLegacyRounds = 8

var (
	errBadState     = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState"}
	errToolChanged  = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the tool changed since this request began; call it again"}
	errStateUnavail = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "requestState cannot be verified now; retry later"}
)

// roundState is what sealed request state carries between rounds: the
// digest of the tool that asked, the keys asked in the round it closes, the
// answers of earlier rounds, and what the handler kept for the next round
// (execution.Context.SetRoundState).
type roundState struct {
	Tool    string                      `json:"tool"`
	Asked   []string                    `json:"asked"`
	Answers map[string]execution.Answer `json:"answers,omitempty"`
	Kept    []byte                      `json:"kept,omitempty"`
	// URLs are the URL questions asked in this call so far, by key, each
	// with the elicitation id it was sent with at 2025-11-25 ("" at
	// 2026-07-28, which has none): the answer to one is a URL answer, and
	// execution.Context.URLDone names the id (ADR 0078).
	URLs map[string]string `json:"urls,omitempty"`
}

// callRound is what a tools/call round knows about earlier rounds. The
// arguments digest and binding are computed only when a round needs them
// (a retry, or a question), not on every call.
type callRound struct {
	s         *server
	params    *mcp.CallToolParamsRaw
	principal policy.Principal
	answers   map[string]execution.Answer
	kept      []byte            // the handler's round state, from the sealed state
	urls      map[string]string // roundState.URLs, from the sealed state
	// unsolicited are the answers no sealed question vouches for.
	unsolicited map[string]execution.Answer
	digest      string
	binding     requeststate.Binding
	bound       bool
	// resumed: the round's request state opened, which proves an earlier
	// round of this call ran, past its rate limit (the state is sealed
	// only after that, and opens once): this round is not counted again.
	resumed bool
}

// bind computes the arguments digest and the state binding, once.
func (r *callRound) bind() error {
	if r.bound {
		return nil
	}
	digest, err := execution.ArgumentsDigest(r.params.Arguments)
	if err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments are not valid JSON"}
	}
	r.digest, r.binding, r.bound = digest, r.s.binding("tools/call", r.params.Name, digest, r.principal), true
	return nil
}

// binding is what the sealed state of a request of method, acting on
// target with arguments of digest, for p, is bound to: the one binding of
// every round of every method. It names the caller by the two halves of
// its key (policy.Principal.Key), issuer and id, which the sealer keeps
// apart unambiguously (each length-prefixed): the same bytes as before the
// key existed, so that states in flight across an upgrade still open (ADR
// 0058).
func (s *server) binding(method, target, digest string, p policy.Principal) requeststate.Binding {
	return requeststate.Binding{
		Method:          method,
		Target:          target,
		ArgumentsDigest: digest,
		PrincipalID:     p.ID(),
		PrincipalIssuer: p.Issuer(),
		Audience:        s.audience,
	}
}

// openRound verifies a retry's requestState and collects the answers it
// may carry: answers to questions the sealed state says were asked, and —
// on a 2026-07-28 request, where inputResponses exist — the others, as
// unsolicited answers (ADR 0023). The revision says to ignore what a
// server does not recognize or need: an unsolicited answer that answers no
// question the handler asks is dropped, and one never answers a
// confirmation (execution.Invocation.Unsolicited).
//
// A state sealed by another tool than t — the same name, but a snapshot
// swapped in since defines it otherwise — is refused with errToolChanged:
// its questions and answers belong to a definition no longer served.
//
// The round is filled into round, a zero callRound of the caller's: a
// direct call's stays on its stack (call), a task's goes with the task.
func (s *server) openRound(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, round *callRound) error {
	params := req.Params
	*round = callRound{s: s, params: params, principal: p}
	var asked []string
	if params.RequestState != "" {
		if err := round.bind(); err != nil {
			return err
		}
		data, err := s.sealer.Open(ctx, params.RequestState, round.binding)
		if errors.Is(err, requeststate.ErrUnavailable) {
			// The sealed error's text is deliberately bare; log the store's own.
			s.logger.LogAttrs(ctx, slog.LevelError, "request state store unavailable", slog.String("error", storeCause(err)))
			return errStateUnavail
		}
		if err != nil {
			return errBadState
		}
		var st roundState
		if json.Unmarshal(data, &st) != nil {
			return errBadState
		}
		if st.Tool != t.digest {
			return errToolChanged
		}
		round.answers, asked, round.resumed, round.kept, round.urls = st.Answers, st.Asked, true, st.Kept, st.URLs
		if round.answers == nil {
			round.answers = map[string]execution.Answer{}
		}
	}
	modern := mcpversion.IsModern(req.ProtocolVersion())
	for key, resp := range params.InputResponses {
		a, ok := answerOf(resp, askedKind(round.urls, key))
		switch {
		case !ok:
			// not an answer we can read: ignored
		case slices.Contains(asked, key):
			round.answers[key] = a
		case modern:
			if round.unsolicited == nil {
				round.unsolicited = map[string]execution.Answer{}
			}
			round.unsolicited[key] = a
		}
	}
	return nil
}

// storeCause returns the replay store's own error inside err, or err's text.
func storeCause(err error) string {
	if multi, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range multi.Unwrap() {
			if e != nil && !errors.Is(e, requeststate.ErrUnavailable) {
				return e.Error()
			}
		}
	}
	return err.Error()
}

// interact turns an InteractionRequired outcome into an input-required
// result with fresh sealed state, or -32021 when the client cannot answer.
func (s *server) interact(ctx context.Context, req *mcp.CallToolRequest, t *tool, round *callRound, ir *execution.InputRequired) (*mcp.CallToolResult, error) {
	requests := ir.Requests
	if err := missingCapabilities(req.ClientCapabilities(), requests, "tool"); err != nil {
		return nil, err
	}
	if err := round.bind(); err != nil {
		return nil, err
	}
	st := roundState{Tool: t.digest, Answers: round.answers, Kept: ir.RoundState, URLs: maps.Clone(round.urls)}
	out := make(mcp.InputRequestMap, len(requests))
	version := req.ProtocolVersion()
	for key, r := range requests {
		st.Asked = append(st.Asked, key)
		id := st.askURL(key, r, version)
		out[key] = inputRequestOf(r, version, id)
	}
	slices.Sort(st.Asked)
	data, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	state, err := s.sealer.Seal(round.binding, data)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: out, RequestState: state}, nil
}

// askURL records r, asked under key in a round of a request at version,
// when it is a URL question, and returns the elicitation id it is sent
// with: a fresh one at 2025-11-25, none at 2026-07-28 (ADR 0078).
func (st *roundState) askURL(key string, r execution.InputRequest, version string) string {
	if r.Kind != execution.URLElicitation {
		return ""
	}
	id := ""
	if version < modernVersion {
		id = newElicitationID()
	}
	if st.URLs == nil {
		st.URLs = map[string]string{}
	}
	st.URLs[key] = id
	return id
}

// newElicitationID is a fresh, unguessable elicitation id (130 random
// bits): a URL elicitation's id is the client's handle on it, and a
// guessed one could mark another's as complete.
func newElicitationID() string { return rand.Text() }

// askedKind is the kind of the question asked under key: a URL question
// when urls (roundState.URLs) has it, else whatever the answer says.
func askedKind(urls map[string]string, key string) execution.InputKind {
	if _, ok := urls[key]; ok {
		return execution.URLElicitation
	}
	return 0
}

// supports reports whether a client that declared caps can answer
// questions of kind k. A client that declares elicitation with only url
// mode has no forms, as the SDK's ServerSession.Elicit reads it; one that
// declares neither mode has forms only.
func supports(caps *mcp.ClientCapabilities, k execution.InputKind) bool {
	if caps == nil {
		return false
	}
	switch k {
	case execution.Elicitation:
		e := caps.Elicitation
		return e != nil && (e.Form != nil || e.URL == nil)
	case execution.URLElicitation:
		return caps.Elicitation != nil && caps.Elicitation.URL != nil
	case execution.Sampling:
		return caps.Sampling != nil
	case execution.Roots:
		return caps.RootsV2 != nil
	}
	return false
}

// inputRequestOf is the question r in the words of the revision version;
// id is a URL question's elicitation id ("" at 2026-07-28).
func inputRequestOf(r execution.InputRequest, version, id string) mcp.InputRequest {
	switch r.Kind {
	case execution.URLElicitation:
		return &mcp.ElicitParams{Mode: "url", Message: r.Message, URL: r.URL, ElicitationID: id}
	case execution.Sampling:
		p := &mcp.CreateMessageParams{MaxTokens: int64(r.Sampling.MaxTokens), SystemPrompt: r.Sampling.SystemPrompt}
		for _, m := range r.Sampling.Messages {
			p.Messages = append(p.Messages, &mcp.SamplingMessage{Role: mcp.Role(m.Role), Content: &mcp.TextContent{Text: m.Text}})
		}
		return p
	case execution.Roots:
		return &mcp.ListRootsParams{}
	}
	return &mcp.ElicitParams{Mode: "form", Message: r.Message, RequestedSchema: elicitSchema(r.Schema, version)}
}

// answerOf converts a client's input response to a question of kind
// asked (0 when the question is not known); false when it is not one. An
// elicitation result answers a URL question when one was asked: its
// action alone, since a URL question asks for no content.
func answerOf(r mcp.InputResponse, asked execution.InputKind) (execution.Answer, bool) {
	switch r := r.(type) {
	case *mcp.ElicitResult:
		if asked == execution.URLElicitation {
			return execution.Answer{Kind: execution.URLElicitation, Action: r.Action}, true
		}
		a := execution.Answer{Kind: execution.Elicitation, Action: r.Action}
		if r.Content != nil {
			b, err := json.Marshal(r.Content)
			if err != nil {
				return execution.Answer{}, false
			}
			a.Content = b
		}
		return a, true
	case *mcp.CreateMessageWithToolsResult:
		res := &execution.SamplingResult{Role: string(r.Role), Model: r.Model, StopReason: r.StopReason}
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				res.Text += t.Text
			}
		}
		return execution.Answer{Kind: execution.Sampling, Sampling: res}, true
	case *mcp.CreateMessageResult:
		res := &execution.SamplingResult{Role: string(r.Role), Model: r.Model, StopReason: r.StopReason}
		if t, ok := r.Content.(*mcp.TextContent); ok {
			res.Text = t.Text
		}
		return execution.Answer{Kind: execution.Sampling, Sampling: res}, true
	case *mcp.ListRootsResult:
		roots := []execution.Root{}
		for _, root := range r.Roots {
			if root != nil {
				roots = append(roots, execution.Root{URI: root.URI, Name: root.Name})
			}
		}
		return execution.Answer{Kind: execution.Roots, Roots: roots}, true
	}
	return execution.Answer{}, false
}

// legacyRounds bridges input requests to a handshake-era client as
// server-to-client requests on its session, round after round, calling the
// tool again with the answers, until the call completes.
func (s *server) legacyRounds(ctx context.Context, req *mcp.CallToolRequest, t *tool, p policy.Principal, adm execution.Admission, route callRoute) (*mcp.CallToolResult, agnara.Label, error) {
	// On the edge, the questions go on the call's own stream (edgeask.go).
	ask := askSession
	if route != nil {
		if a := route.asker(); a != nil {
			ask = a
		}
	}
	res, label, err := s.call(ctx, req, t, p, adm, route)
	for round := 0; err == nil && res.InputRequests != nil && req.Session != nil; round++ {
		if round == maxLegacyRounds {
			f := execution.Fail(execution.InteractionRequired, "too many rounds of questions", nil)
			return projection.Failure(f), execution.LabelOf(f), nil
		}
		responses := make(mcp.InputResponseMap, len(res.InputRequests))
		for key, ir := range res.InputRequests {
			var resp mcp.InputResponse
			var ferr error
			resp, ferr = ask(ctx, req.Session, ir)
			if ferr != nil {
				return nil, "error", ferr
			}
			responses[key] = resp
		}
		params := *req.Params
		params.InputResponses = responses
		params.RequestState = res.RequestState
		retry := *req
		retry.Params = &params
		req = &retry
		res, label, err = s.call(ctx, req, t, p, adm, route)
	}
	return res, label, err
}
