//lint:file-ignore SA1019 sampling is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; an upstream's sampling requests are relayed to the caller on purpose.

package mcpimport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream asks questions while a tools/call is out: at 2026-07-28 as
// an input-required result, which the SDK client turns into calls of its
// ElicitationHandler and CreateMessageHandler (and retries the call with
// the answers), and in the handshake era as server-to-client requests on
// the session, which reach the same handlers. The handlers [Connect]
// installs relay each question to the caller of the imported tool through
// execution's own questions ([execution.Context.Relay]): checked, bounded,
// shown as the upstream put it. When the caller has answered it (a later
// round of the same call, ADR 41), the answer goes upstream; when not, the
// upstream's question is refused, the call ends asking, and the next round
// sends the call again, this time with the answer ready. A handshake-era
// roots/list is relayed the same way ([RelayRoots]).

// errAsked answers an upstream's question the caller has not answered
// yet: the round ends asking the caller instead.
var errAsked = errors.New("mcpimport: the question was put to the caller")

// errNotRelayed answers an upstream's question no call can take: it came
// outside a call, a call whose capability cannot ask, or it failed the
// checks.
var errNotRelayed = errors.New("mcpimport: the question was not relayed")

// errCallerCannotAnswer refuses a question of a kind the caller's client
// did not declare.
var errCallerCannotAnswer = errors.New("mcpimport: the caller cannot answer questions of this kind")

// missingCapability is the code a 2026-07-28 server refuses a request
// with, before running it, when the client lacks a capability the request
// needs (here: to answer the tool's questions).
const missingCapability = -32021

// maxQuestions bounds the questions one round of a call relays.
const maxQuestions = 16

// asker relays the questions an upstream puts during one call.
type asker struct {
	ec     *execution.Context
	limits Limits
	mu     sync.Mutex
	n      int
	asked  []execution.InputRequest // questions waiting for the caller
	err    error                    // a question failed the checks, or the answer did
	// urls are the keys of the URL questions the caller accepted, by the
	// upstream's elicitation id (handshake-era upstreams), so that the
	// upstream's completion reaches the caller (relayURLDone); pending
	// counts those not completed yet, and completed is signalled at each.
	urls      map[string]string
	pending   int
	completed chan struct{}
}

// urlDoneGrace bounds how long a call whose caller accepted a
// handshake-era upstream's URL elicitation waits, once the upstream has
// answered, for the upstream's completion of it. The SDK client hands a
// notification to its handler on another goroutine than the answer that
// followed it on the wire, so one the upstream sent before answering may
// still be on its way; an upstream that sends none (the notice is
// optional) costs its callers this much.
const urlDoneGrace = 250 * time.Millisecond

// awaitURLDone waits, at most urlDoneGrace, for the completions of the
// URL elicitations the caller accepted during the call.
func (a *asker) awaitURLDone(ctx context.Context) {
	a.mu.Lock()
	pending, completed := a.pending, a.completed
	a.mu.Unlock()
	if pending == 0 {
		return
	}
	t := time.NewTimer(urlDoneGrace)
	defer t.Stop()
	for {
		select {
		case <-completed:
			a.mu.Lock()
			pending = a.pending
			a.mu.Unlock()
			if pending == 0 {
				return
			}
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// outcome reports how the questions went: asked (the round ends asking)
// or an error that ends the call.
func (a *asker) outcome() (asked bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.asked) > 0, a.err
}

// waiting returns the questions waiting for the caller.
func (a *asker) waiting() []execution.InputRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.asked
}

// relay asks the caller q and returns the answer, or errAsked.
func (a *asker) relay(q execution.InputRequest) (execution.Answer, error) {
	a.mu.Lock()
	a.n++
	over := a.n > maxQuestions
	a.mu.Unlock()
	if over {
		return a.refuse(errors.New("too many questions"))
	}
	if !a.ec.CanAsk(q.Kind) {
		// Asking would end the caller's round with -32021: refused here,
		// at once, so that the upstream does not wait.
		return a.refuse(errCallerCannotAnswer)
	}
	key := questionKey(q)
	ans, err := a.ec.Relay(key, q)
	if errors.Is(err, execution.ErrInputRequired) {
		a.mu.Lock()
		a.asked = append(a.asked, q)
		a.mu.Unlock()
		return execution.Answer{}, errAsked
	}
	if err != nil {
		return a.refuse(err)
	}
	return ans, nil
}

func (a *asker) refuse(err error) (execution.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err == nil {
		a.err = err
	}
	return execution.Answer{}, errNotRelayed
}

// questionKey is the key a relayed question is asked under: a digest of
// the question itself, so that an answer counts only for the question it
// answered, as the upstream put it, when the upstream asks it again on the
// next round.
func questionKey(q execution.InputRequest) string {
	b, _ := json.Marshal(q) // plain values: cannot fail
	h := sha256.New()
	h.Write([]byte("agnara.relayed-question/v1\x00"))
	h.Write(b)
	return "upstream." + hex.EncodeToString(h.Sum(nil)[:12])
}

type askerKey struct{}

// withAsker returns ctx carrying a, for the questions the SDK client's
// multi-round-trip middleware relays with the call's own context, and
// records a as the call in flight on cs, for the questions a
// handshake-era upstream sends on the session. The returned func ends
// the call.
func withAsker(ctx context.Context, cs *mcp.ClientSession, a *asker) (context.Context, func()) {
	inflight.add(cs, a)
	return context.WithValue(ctx, askerKey{}, a), func() { inflight.remove(cs, a) }
}

// inflight holds, per client session, the calls out on it that may take
// questions. A handshake-era upstream's server-to-client request names no
// call; it is relayed to the session's only call in flight, and refused
// when there are several (docs/import.md, "Questions").
var inflight = &calls{m: map[*mcp.ClientSession]map[*asker]struct{}{}}

type calls struct {
	mu sync.Mutex
	m  map[*mcp.ClientSession]map[*asker]struct{}
}

func (c *calls) add(cs *mcp.ClientSession, a *asker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[cs]
	if s == nil {
		s = map[*asker]struct{}{}
		c.m[cs] = s
	}
	s[a] = struct{}{}
}

func (c *calls) remove(cs *mcp.ClientSession, a *asker) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m[cs], a)
	if len(c.m[cs]) == 0 {
		delete(c.m, cs)
	}
}

// only returns the one call in flight on cs, or nil.
func (c *calls) only(cs *mcp.ClientSession) *asker {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m[cs]) != 1 {
		return nil
	}
	for a := range c.m[cs] {
		return a
	}
	return nil
}

// askerOf finds the call a question belongs to.
func askerOf(ctx context.Context, cs *mcp.ClientSession) *asker {
	if a, ok := ctx.Value(askerKey{}).(*asker); ok {
		return a
	}
	return inflight.only(cs)
}

// RouteQuestions installs in co the handlers that relay an upstream's
// elicitation and sampling requests to the caller of the imported tool
// that is out when they come, unless co has its own. [Connect] calls it; a
// host that builds its own SDK client for [NewSession] calls it on the
// client's options. docs/import.md, "Questions", has the rules.
//
// With the elicitation handler it declares both elicitation modes, form
// and url, unless co declares elicitation itself: a URL elicitation is
// relayed too (ADR 0078), and a handshake-era upstream's completion of one
// (notifications/elicitation/complete) is passed on to the caller.
func RouteQuestions(co *mcp.ClientOptions) {
	if co.ElicitationHandler == nil {
		co.ElicitationHandler = relayElicitation
		if co.ElicitationCompleteHandler == nil {
			co.ElicitationCompleteHandler = relayURLDone
		}
		caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}} // the SDK's default
		if co.Capabilities != nil {
			cp := *co.Capabilities // the host's own is not changed
			caps = &cp
		}
		if caps.Elicitation == nil {
			caps.Elicitation = &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}
		}
		co.Capabilities = caps
	}
	if co.CreateMessageHandler == nil && co.CreateMessageWithToolsHandler == nil {
		co.CreateMessageHandler = relaySampling
	}
}

// relayElicitation relays an elicitation: a form, or a URL the caller is
// asked to open, which must pass the checks of execution.Context.AskURL
// (an absolute https URL, without user information, bounded) whoever
// chose it.
func relayElicitation(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	a := askerOf(ctx, req.Session)
	if a == nil || req.Params == nil {
		return nil, errNotRelayed
	}
	return a.elicit(req.Params)
}

// elicit relays p.
func (a *asker) elicit(p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	switch {
	case p.Mode == "url" || p.Mode == "" && (p.URL != "" || p.ElicitationID != ""):
		return a.elicitURL(p)
	case p.Mode != "" && p.Mode != "form":
		_, err := a.refuse(errors.New("an elicitation of an unknown mode is not relayed"))
		return nil, err
	}
	schema, err := json.Marshal(p.RequestedSchema)
	switch {
	case err != nil:
		_, err = a.refuse(errors.New("the form does not encode"))
		return nil, err
	case len(p.Message) > a.limits.DescriptionBytes:
		_, err = a.refuse(errors.New("the question is over DescriptionBytes"))
		return nil, err
	case len(schema) > a.limits.SchemaBytes:
		_, err = a.refuse(errors.New("the form is over SchemaBytes"))
		return nil, err
	}
	ans, err := a.relay(execution.InputRequest{Kind: execution.Elicitation, Message: p.Message, Schema: schema})
	if err != nil {
		return nil, err
	}
	res := &mcp.ElicitResult{Action: ans.Action}
	if ans.Action == "accept" && len(ans.Content) > 0 {
		if err := json.Unmarshal(ans.Content, &res.Content); err != nil {
			_, err = a.refuse(errors.New("the answer does not decode"))
			return nil, err
		}
	}
	return res, nil
}

// elicitURL relays p, a URL elicitation: the URL and message as the
// upstream put them, checked as the caller's own URL questions are. The
// answer is the caller's action alone.
func (a *asker) elicitURL(p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	if len(p.Message) > a.limits.DescriptionBytes {
		_, err := a.refuse(errors.New("the question is over DescriptionBytes"))
		return nil, err
	}
	q := execution.InputRequest{Kind: execution.URLElicitation, Message: p.Message, URL: p.URL}
	ans, err := a.relay(q)
	if err != nil {
		return nil, err
	}
	if ans.Action == "accept" && p.ElicitationID != "" {
		a.mu.Lock()
		if a.urls == nil {
			a.urls = map[string]string{}
		}
		if _, dup := a.urls[p.ElicitationID]; !dup && len(a.urls) < maxQuestions {
			a.urls[p.ElicitationID] = questionKey(q)
			a.pending++
			if a.completed == nil {
				a.completed = make(chan struct{}, maxQuestions)
			}
		}
		a.mu.Unlock()
	}
	return &mcp.ElicitResult{Action: ans.Action}, nil
}

// relayURLDone passes a handshake-era upstream's completion of a URL
// elicitation on to the caller that accepted it, while that caller's call
// is out (execution.Context.URLDone); any other completion is dropped:
// one that names no question the call relayed, or that comes after the
// call ended.
func relayURLDone(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
	if req.Params == nil {
		return
	}
	a := askerOf(ctx, req.Session)
	if a == nil {
		return
	}
	a.mu.Lock()
	key, ok := a.urls[req.Params.ElicitationID]
	if ok {
		delete(a.urls, req.Params.ElicitationID) // one completion each
		a.pending--
	}
	a.mu.Unlock()
	if ok {
		// The key is one the caller accepted: URLDone cannot refuse it.
		_ = a.ec.URLDone(key)
		a.completed <- struct{}{} // buffered for every pending one
	}
}

// relaySampling relays a sampling request of text messages.
func relaySampling(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	a := askerOf(ctx, req.Session)
	if a == nil || req.Params == nil {
		return nil, errNotRelayed
	}
	return a.sample(req.Params)
}

// sample relays p.
func (a *asker) sample(p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	s := &execution.SamplingRequest{SystemPrompt: p.SystemPrompt, MaxTokens: int(min(p.MaxTokens, 1<<20))}
	size := len(p.SystemPrompt)
	for _, m := range p.Messages {
		var text *mcp.TextContent
		if m != nil {
			text, _ = m.Content.(*mcp.TextContent)
		}
		if text == nil {
			_, err := a.refuse(errors.New("a sampling message that is not text is not relayed"))
			return nil, err
		}
		size += len(text.Text)
		s.Messages = append(s.Messages, execution.SamplingMessage{Role: string(m.Role), Text: text.Text})
	}
	if size > a.limits.ObjectBytes {
		_, err := a.refuse(errors.New("the sampling request is over ObjectBytes"))
		return nil, err
	}
	ans, err := a.relay(execution.InputRequest{Kind: execution.Sampling, Sampling: s})
	if err != nil {
		return nil, err
	}
	r := ans.Sampling
	return &mcp.CreateMessageResult{Role: mcp.Role(r.Role), Content: &mcp.TextContent{Text: r.Text}, Model: r.Model, StopReason: r.StopReason}, nil
}

// answerAll relays every question of a remote task's inputRequests and
// returns the responses, encoded for tasks/update; errAsked when the
// caller has yet to answer one; errNotRelayed when one cannot be relayed.
func (a *asker) answerAll(raw json.RawMessage) (json.RawMessage, error) {
	var reqs mcp.InputRequestMap
	if err := json.Unmarshal(raw, &reqs); err != nil || len(reqs) == 0 {
		_, err := a.refuse(errors.New("the task's input requests do not decode"))
		return nil, err
	}
	out := map[string]any{}
	var asked bool
	for key, r := range reqs {
		var res any
		var err error
		switch q := r.(type) {
		case *mcp.ElicitParams:
			res, err = a.elicit(q)
		case *mcp.CreateMessageParams:
			res, err = a.sample(q)
		default:
			_, err = a.refuse(errors.New("a task's question of a kind that is not relayed"))
		}
		switch {
		case errors.Is(err, errAsked):
			asked = true
		case err != nil:
			return nil, err
		default:
			out[key] = res
		}
	}
	if asked {
		return nil, errAsked
	}
	b, err := json.Marshal(out)
	if err != nil {
		_, err = a.refuse(errors.New("the answers do not encode"))
		return nil, err
	}
	return b, nil
}

// maxRelayedRoots bounds the roots passed upstream.
const maxRelayedRoots = 64

// RelayRoots is a receiving middleware for the SDK client that relays a
// handshake-era upstream's roots/list, sent during a call, to the caller of
// the imported tool, as [RouteQuestions] does elicitation and sampling.
// [Connect] installs it; a host that builds its own SDK client for
// [NewSession] adds it (Client.AddReceivingMiddleware). A roots/list that
// comes outside a call, or while several calls are out on the session, is
// answered by the SDK client itself (its own roots: none, unless the host
// added some). The caller's roots pass as it gave them, at most 64, each
// with an absolute URI; at 2026-07-28 the SDK client answers an
// input-required roots request itself, and they are not relayed.
func RelayRoots(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "roots/list" {
			return next(ctx, method, req)
		}
		cs, _ := req.GetSession().(*mcp.ClientSession)
		a := askerOf(ctx, cs)
		if a == nil {
			return next(ctx, method, req)
		}
		ans, err := a.relay(execution.InputRequest{Kind: execution.Roots})
		if err != nil {
			return nil, err
		}
		if len(ans.Roots) > maxRelayedRoots {
			_, err := a.refuse(errors.New("more roots than can be passed on"))
			return nil, err
		}
		out := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
		for _, r := range ans.Roots {
			if !absoluteURI(r.URI) {
				_, err := a.refuse(errors.New("a root without an absolute URI"))
				return nil, err
			}
			out.Roots = append(out.Roots, &mcp.Root{URI: r.URI, Name: r.Name})
		}
		return out, nil
	}
}
