//lint:file-ignore SA1019 sampling and roots are deprecated at 2026-07-28 (SEP-2577) but remain in the protocol during the deprecation window; agnara-go serves them on purpose.

package mcpexpose

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/policy"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// featureCall is one prompts/get or resources/read invocation: the same
// pipeline as a tools/call (the plan's scope guard passed as adm, input
// validation, policies, dependencies, the handler), with the same
// multi-round-trip rules. Its state binds the method and target, so state
// sealed for a prompt opens for no tool and no resource.
type featureCall struct {
	method, target string
	digest         string // the definition's; state from another is refused
	plan           *execution.Plan
	adm            execution.Admission
	p              policy.Principal
	args           json.RawMessage
	state          string
	responses      mcp.InputResponseMap
}

// featureOutcome is a finished invocation, or the questions of a
// 2026-07-28 round with their sealed state.
type featureOutcome struct {
	outcome execution.Outcome
	asked   mcp.InputRequestMap
	state   string
}

// invokeFeature runs c. A handshake-era caller is asked each round's
// questions as server-to-client requests on its session, and the plan runs
// again with the answers, until it finishes; a 2026-07-28 caller gets the
// questions with sealed state, as an input-required result.
func (s *server) invokeFeature(ctx context.Context, req mcp.Request, c featureCall) (featureOutcome, error) {
	digest, err := execution.ArgumentsDigest(c.args)
	if err != nil {
		return featureOutcome{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "arguments are not valid JSON"}
	}
	binding := s.binding(c.method, c.target, digest, c.p)
	answers, kept, err := s.openFeatureState(ctx, c, binding)
	if err != nil {
		return featureOutcome{}, err
	}
	session, _ := req.GetSession().(*mcp.ServerSession)
	version := featureVersion(req)
	legacy := session != nil && version < modernVersion
	caps := clientCapabilities(req)
	// A retry whose state opened continues a call whose first round was
	// counted against the rate limit, as does every later legacy round:
	// one logical call is counted once.
	counted := c.state != ""
	// The elicitation ids of the URL questions asked on a session, by
	// key, for execution.Context.URLDone.
	var urls roundState
	for round := 0; ; round++ {
		inv := &execution.Invocation{
			Principal: c.p, Admission: c.adm, Arguments: c.args, ArgumentsDigest: digest,
			Timeout: s.opts.Timeout, RateLimit: s.opts.RateLimit, Limiter: s.opts.Limiter,
			Counted:    counted || round > 0,
			Answers:    answers,
			RoundState: kept,
			Supports:   func(k execution.InputKind) bool { return supports(caps, k) },
		}
		if legacy && len(urls.URLs) > 0 {
			inv.URLDone = func(key string) { notifyURLDone(ctx, session, urls.URLs[key]) }
		}
		out, err := c.plan.Invoke(ctx, inv)
		if err != nil {
			return featureOutcome{}, err // the caller went away
		}
		ir, ok := out.(*execution.InputRequired)
		if !ok {
			return featureOutcome{outcome: out}, nil
		}
		if err := missingCapabilities(caps, ir.Requests, "request"); err != nil {
			return featureOutcome{}, err
		}
		if !legacy {
			return s.sealFeatureRound(c, binding, answers, ir)
		}
		kept = ir.RoundState
		if round == maxLegacyRounds {
			return featureOutcome{outcome: execution.Fail(execution.InteractionRequired, "too many rounds of questions", nil)}, nil
		}
		if answers == nil {
			answers = map[string]execution.Answer{}
		}
		for key, r := range ir.Requests {
			resp, err := askSession(ctx, session, inputRequestOf(r, version, urls.askURL(key, r, version)))
			if err != nil {
				return featureOutcome{}, err
			}
			if a, ok := answerOf(resp, r.Kind); ok {
				answers[key] = a
			}
		}
	}
}

// openFeatureState verifies a 2026-07-28 retry's state and returns the
// answers it vouches for: only answers to questions it says were asked.
func (s *server) openFeatureState(ctx context.Context, c featureCall, binding requeststate.Binding) (map[string]execution.Answer, []byte, error) {
	if c.state == "" {
		return nil, nil, nil // answers without state answer nothing asked
	}
	data, err := s.sealer.Open(ctx, c.state, binding)
	if errors.Is(err, requeststate.ErrUnavailable) {
		s.logger.LogAttrs(ctx, slog.LevelError, "request state store unavailable", slog.String("error", storeCause(err)))
		return nil, nil, errStateUnavail
	}
	if err != nil {
		return nil, nil, errBadState
	}
	var st roundState
	if json.Unmarshal(data, &st) != nil {
		return nil, nil, errBadState
	}
	if st.Tool != c.digest {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "the " + featureNoun(c.method) + " changed since this request began; ask again"}
	}
	answers := st.Answers
	if answers == nil {
		answers = map[string]execution.Answer{}
	}
	for key, resp := range c.responses {
		if !slices.Contains(st.Asked, key) {
			continue
		}
		if a, ok := answerOf(resp, askedKind(st.URLs, key)); ok {
			answers[key] = a
		}
	}
	return answers, st.Kept, nil
}

func (s *server) sealFeatureRound(c featureCall, binding requeststate.Binding, answers map[string]execution.Answer, ir *execution.InputRequired) (featureOutcome, error) {
	requests := ir.Requests
	st := roundState{Tool: c.digest, Answers: answers, Kept: ir.RoundState}
	asked := make(mcp.InputRequestMap, len(requests))
	for key, r := range requests {
		st.Asked = append(st.Asked, key)
		asked[key] = inputRequestOf(r, modernVersion, st.askURL(key, r, modernVersion))
	}
	slices.Sort(st.Asked)
	data, err := json.Marshal(st)
	if err != nil {
		return featureOutcome{}, err
	}
	state, err := s.sealer.Seal(binding, data)
	if err != nil {
		return featureOutcome{}, err
	}
	return featureOutcome{asked: asked, state: state}, nil
}

func featureNoun(method string) string {
	if method == "prompts/get" {
		return "prompt"
	}
	return "resource"
}

// missingCapabilities is -32021 naming the client capabilities the
// questions of a request of noun ("tool", "request") need and the client
// did not declare, or nil. A URL question needs elicitation.url; a form
// needs elicitation, and elicitation.form of a client that declared
// elicitation without it (or that lacks url mode too).
func missingCapabilities(caps *mcp.ClientCapabilities, requests map[string]execution.InputRequest, noun string) error {
	var missing []execution.InputKind
	for _, r := range requests {
		if !supports(caps, r.Kind) && !slices.Contains(missing, r.Kind) {
			missing = append(missing, r.Kind)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	slices.Sort(missing)
	need := map[string]any{}
	form, url := slices.Contains(missing, execution.Elicitation), slices.Contains(missing, execution.URLElicitation)
	for _, k := range missing {
		if k != execution.Elicitation && k != execution.URLElicitation {
			need[k.String()] = map[string]any{}
		}
	}
	if form || url {
		modes := map[string]any{}
		if url {
			modes["url"] = map[string]any{}
		}
		if form && (url || (caps != nil && caps.Elicitation != nil)) {
			modes["form"] = map[string]any{}
		}
		need["elicitation"] = modes
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": need})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: fmt.Sprintf("this %s needs the client capabilities %v", noun, missing), Data: data}
}

// notifyURLDone sends notifications/elicitation/complete for the URL
// elicitation id on ss, best effort (execution.Context.URLDone): nothing
// for no id.
func notifyURLDone(ctx context.Context, ss *mcp.ServerSession, id string) {
	if id == "" || ss == nil {
		return
	}
	// A notice that cannot be sent must not fail the call: it is advisory.
	_ = ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: id})
}

// askSession asks one question of a handshake-era client on its session.
//
// An elicitation's answer is the client's, as it sent it. The SDK's
// ServerSession.Elicit checks an accepted answer against the requested
// schema itself and, when it does not fit, drops it for a bare error,
// which goes out as a JSON-RPC error with code 0. The plan checks every
// answer against its form, so the answer goes to the plan, and one that
// does not fit ends the call with the same invalid_input failure, naming
// every violation, as at 2026-07-28, where it comes in inputResponses.
func askSession(ctx context.Context, ss *mcp.ServerSession, ir mcp.InputRequest) (mcp.InputResponse, error) {
	switch q := ir.(type) {
	case *mcp.ElicitParams:
		sent := new(elicitAnswer)
		res, err := ss.Elicit(context.WithValue(ctx, elicitAnswerKey{}, sent), q)
		if err != nil && sent.res != nil {
			return sent.res, nil // the client answered; the SDK's objection to the answer is not the plan's
		}
		return res, err
	case *mcp.CreateMessageParams:
		return ss.CreateMessage(ctx, q)
	case *mcp.ListRootsParams:
		return ss.ListRoots(ctx, q)
	}
	return nil, fmt.Errorf("unsupported input request %T", ir)
}

// elicitAnswer is where keepElicitAnswer leaves the answer a client sent
// to the elicitation/create askSession sent.
type elicitAnswer struct{ res *mcp.ElicitResult }

type elicitAnswerKey struct{}

// keepElicitAnswer is a sending middleware of every server: it leaves the
// answer to an elicitation/create askSession sends where askSession finds
// it, before ServerSession.Elicit checks it. Elicit keeps nothing of an
// answer it refuses, and the request's context is the one way past it.
func keepElicitAnswer(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if sent, ok := ctx.Value(elicitAnswerKey{}).(*elicitAnswer); ok && err == nil && method == "elicitation/create" {
			sent.res, _ = res.(*mcp.ElicitResult)
		}
		return res, err
	}
}

// featureVersion is the protocol version of a prompts/get or
// resources/read request, or "" for another request.
func featureVersion(req mcp.Request) string {
	switch r := req.(type) {
	case *mcp.GetPromptRequest:
		return r.ProtocolVersion()
	case *mcp.ReadResourceRequest:
		return r.ProtocolVersion()
	}
	return ""
}

// clientCapabilities returns what the client of req declared.
func clientCapabilities(req mcp.Request) *mcp.ClientCapabilities {
	switch r := req.(type) {
	case *mcp.GetPromptRequest:
		return r.ClientCapabilities()
	case *mcp.ReadResourceRequest:
		return r.ClientCapabilities()
	}
	return nil
}
