package execution

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agnara-go/agnara/internal/schemacheck"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrInputRequired is returned by [Context.Confirm], [Ask], [Context.Sample],
// [Context.Roots] and [Context.AskURL] when the caller has not answered yet. A handler
// returns it (or an error wrapping it) as is; the invocation then ends with
// an [*InputRequired] outcome carrying every question asked so far, keyed.
//
// The caller answers and retries the same call; the handler runs again from
// the start and this time finds the answers. Work done before the question
// therefore runs again on the retry: ask first, act after, and make anything
// before a question safe to repeat.
var ErrInputRequired = errors.New("execution: input required from the caller")

// ConfirmKey is the key of the question asked for a capability that
// declares CapabilityOptions.Confirm. Handlers cannot ask under it: its
// answer is evidence for the confirmation verifier, and only the declared
// question may produce it.
const ConfirmKey = "agnara.confirm"

// InputKind is the kind of an input request.
type InputKind uint8

// The kinds of input a capability can ask for.
const (
	// Elicitation asks the user to fill in a form (or confirm).
	Elicitation InputKind = iota + 1
	// Sampling asks the client's language model for a completion.
	Sampling
	// Roots asks the client for its filesystem roots.
	Roots
	// URLElicitation asks the user to open a URL, out of band (MCP's
	// elicitation in url mode; [Context.AskURL]). Clients declare it
	// apart from forms, so it is a kind of its own.
	URLElicitation
)

// MarshalText encodes the kind's name.
func (k InputKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText decodes a kind's name.
func (k *InputKind) UnmarshalText(b []byte) error {
	for _, c := range []InputKind{Elicitation, Sampling, Roots, URLElicitation} {
		if c.String() == string(b) {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("execution: unknown input kind %q", b)
}

// String returns "elicitation", "sampling", "roots" or "url_elicitation".
func (k InputKind) String() string {
	switch k {
	case URLElicitation:
		return "url_elicitation"
	case Elicitation:
		return "elicitation"
	case Sampling:
		return "sampling"
	case Roots:
		return "roots"
	}
	return "unknown"
}

// InputRequest is one question put to the caller.
type InputRequest struct {
	Kind InputKind `json:"kind"`
	// Message is the question, for Elicitation and URLElicitation.
	Message string `json:"message,omitempty"`
	// URL is the address the user is asked to open, for URLElicitation.
	URL string `json:"url,omitempty"`
	// Schema is the form's JSON Schema, for Elicitation: a flat object of
	// strings, numbers, booleans and enums.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Sampling is the completion request, for Sampling.
	Sampling *SamplingRequest `json:"sampling,omitempty"`
}

// SamplingRequest asks the client's model for a completion.
type SamplingRequest struct {
	Messages     []SamplingMessage
	SystemPrompt string
	MaxTokens    int
}

// SamplingMessage is one text message of a sampling conversation.
type SamplingMessage struct {
	Role string // "user" or "assistant"
	Text string
}

// SamplingResult is the client model's answer.
type SamplingResult struct {
	Role       string
	Text       string
	Model      string
	StopReason string
}

// Root is one of the client's filesystem roots.
type Root struct {
	URI  string
	Name string
}

// Answer is the caller's answer to one [InputRequest]. Answers are
// untrusted input: they are validated against what was asked before a
// handler sees them.
type Answer struct {
	Kind InputKind
	// Action is "accept", "decline" or "cancel", for Elicitation and
	// URLElicitation (where accept means the user agreed to open the URL,
	// not that what it leads to is done).
	Action string
	// Content is the submitted form, for an accepted Elicitation.
	Content json.RawMessage
	// Sampling is the model's answer, for Sampling.
	Sampling *SamplingResult
	// Roots are the client's roots, for Roots.
	Roots []Root
}

// declined is the failure a declined or cancelled question ends with.
func declined(action string) *Failure {
	verb := "declined"
	if action == "cancel" {
		verb = "cancelled"
	}
	return &Failure{Code: Forbidden, Message: "the caller " + verb + " the request for input", Details: map[string]any{"action": action}}
}

// invalidAnswer is the failure for an accepted answer to the question under
// key whose content does not match the question's form: said once, with
// every violation, instead of asking the same question again.
func invalidAnswer(key string, validator *jsonschema.Schema, content json.RawMessage) *Failure {
	var f *Failure
	if len(bytes.TrimSpace(content)) == 0 {
		f = invalidInput([]Violation{{Path: "", Message: "an accepted answer must carry the submitted form as its content"}}, false)
	} else if f = validateArguments(validator, content); f == nil {
		return nil
	}
	f.Message = strings.Replace(f.Message, "the arguments do not match the input schema", fmt.Sprintf("the answer to %q does not match the requested form", key), 1)
	f.Details["question"] = key
	return f
}

// confirmationAnswer reads the answer to a declared confirmation: accept
// with {"confirm": true} or {"confirm": false}, decline, or cancel (both
// not confirmed). Anything else is an InvalidInput failure saying what a
// confirmation answer is.
func confirmationAnswer(a Answer) (accepted bool, f *Failure) {
	if a.Kind != Elicitation {
		return false, invalidInput([]Violation{{Path: "", Message: "the confirmation is answered with an elicitation result"}}, false)
	}
	switch a.Action {
	case "decline", "cancel":
		return false, nil
	case "accept":
		form, err := confirmForm()
		if err != nil {
			return false, internal()
		}
		if f := invalidAnswer(ConfirmKey, form.validator, a.Content); f != nil {
			return false, f
		}
		var v struct {
			Confirm bool `json:"confirm"`
		}
		if err := json.Unmarshal(a.Content, &v); err != nil {
			return false, invalidAnswer(ConfirmKey, form.validator, nil)
		}
		return v.Confirm, nil
	}
	return false, invalidInput([]Violation{{Path: "/action", Message: fmt.Sprintf("%q is not an answer: want accept, decline or cancel", a.Action)}}, false)
}

// interaction is the per-invocation state of questions and answers.
type interaction struct {
	mu          sync.Mutex
	answers     map[string]Answer
	unsolicited map[string]Answer
	supports    func(InputKind) bool
	pending     map[string]InputRequest
	roundIn     []byte // Invocation.RoundState
	roundOut    []byte // Context.SetRoundState, guarded by mu
	urlDone     func(key string)
}

// answer finds the answer of kind under key: one to a question that was
// asked, else, unless the question is a confirmation, one the caller sent
// unasked.
func (in *interaction) answer(key string, kind InputKind, confirmation bool) (Answer, bool) {
	a, ok := in.answers[key]
	if !ok && !confirmation {
		a, ok = in.unsolicited[key]
	}
	return a, ok && a.Kind == kind
}

func (in *interaction) ask(key string, r InputRequest) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.pending == nil {
		in.pending = map[string]InputRequest{}
	}
	in.pending[key] = r
	return ErrInputRequired
}

func (in *interaction) requests() map[string]InputRequest {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.pending
}

// roundState is what the handler kept for the next round.
func (in *interaction) roundState() []byte {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.roundOut
}

// CanAsk reports whether the caller can answer questions of kind k (for
// MCP: whether the client declared the capability). A capability that can
// do without an answer should check it and do without.
func (c *Context) CanAsk(k InputKind) bool {
	return c.inter.supports == nil || c.inter.supports(k)
}

var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Confirm"}},"required":["confirm"]}`)

// confirmForm is the compiled form of every confirmation, compiled once, on
// first use.
var confirmForm = sync.OnceValues(func() (*formSchema, error) {
	v, err := schemacheck.Compile(confirmSchema)
	if err != nil {
		return nil, fmt.Errorf("execution: the confirmation form does not compile: %w", err)
	}
	return &formSchema{schema: confirmSchema, validator: v}, nil
})

// Confirm asks the caller a yes/no question under key. It returns the
// answer once given, and only an answer to the question as asked: a yes
// the caller sends before being asked ([Invocation.Unsolicited]) does not
// count. A declined or cancelled question ends the invocation: the error is
// a Forbidden [*Failure] to return as is.
func (c *Context) Confirm(key, message string) (bool, error) {
	var v struct {
		Confirm bool `json:"confirm"`
	}
	form, err := confirmForm()
	if err != nil {
		return false, err
	}
	if err := c.askForm(key, message, form, true, &v); err != nil {
		return false, err
	}
	return v.Confirm, nil
}

// mayAsk refuses a question of a plan that does not ask (Plan.asks):
// its function took context.Context and reached the execution context
// through FromContext. The invocation ends with internal_failure, its
// cause logged, on every transport alike.
func (c *Context) mayAsk() error {
	if c.plan.asks() {
		return nil
	}
	return fmt.Errorf("execution: %s asks its caller, but its function takes context.Context: take *execution.Context to ask", c.plan.identity)
}

// errReservedKey refuses handler questions under the key of the declared
// confirmation, whose answer is evidence for the confirmation verifier.
var errReservedKey = fmt.Errorf("execution: the question key %q is reserved for CapabilityOptions.Confirm", ConfirmKey)

// askForm answers from a valid accepted answer, or asks. A confirmation
// takes only the answer to a question that was asked.
func (c *Context) askForm(key, message string, f *formSchema, confirmation bool, dst any) error {
	if key == ConfirmKey {
		return errReservedKey
	}
	if err := c.mayAsk(); err != nil {
		return err
	}
	if a, ok := c.inter.answer(key, Elicitation, confirmation); ok {
		switch a.Action {
		case "decline", "cancel":
			return declined(a.Action)
		case "accept":
			if fail := invalidAnswer(key, f.validator, a.Content); fail != nil {
				return fail
			}
			if json.Unmarshal(a.Content, dst) != nil {
				return invalidAnswer(key, f.validator, nil)
			}
			return nil
		}
		return invalidInput([]Violation{{Path: "/action", Message: fmt.Sprintf("%q is not an answer: want accept, decline or cancel", a.Action)}}, false)
	}
	return c.inter.ask(key, InputRequest{Kind: Elicitation, Message: message, Schema: bytes.Clone(f.schema)})
}

// Sample asks the client's model for a completion under key.
func (c *Context) Sample(key string, r SamplingRequest) (SamplingResult, error) {
	if err := c.mayAsk(); err != nil {
		return SamplingResult{}, err
	}
	if a, ok := c.inter.answer(key, Sampling, false); ok && a.Sampling != nil {
		return *a.Sampling, nil
	}
	r.Messages = slices.Clone(r.Messages)
	return SamplingResult{}, c.inter.ask(key, InputRequest{Kind: Sampling, Sampling: &r})
}

// Roots asks the client for its filesystem roots under key.
func (c *Context) Roots(key string) ([]Root, error) {
	if err := c.mayAsk(); err != nil {
		return nil, err
	}
	if a, ok := c.inter.answer(key, Roots, false); ok && a.Roots != nil {
		return slices.Clone(a.Roots), nil
	}
	return nil, c.inter.ask(key, InputRequest{Kind: Roots})
}
