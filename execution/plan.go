package execution

import (
	"encoding/json"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/policy"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Plan is the compiled, immutable form of one capability: its published
// metadata and schemas, and everything needed to invoke it without further
// reflection on types. Plans are made by [Compile].
//
// A Plan is safe for concurrent use. Accessors return copies: changing what
// they return changes nothing in the plan.
type Plan struct {
	capability  *agnara.Capability
	identity    string
	scopes      []string
	policies    []policy.Policy
	confirm     string
	verifier    policy.ConfirmationVerifier
	timeout     time.Duration
	rateLimit   agnara.RateLimit
	limiter     Limiter // the compilation's LocalLimiter
	annotations agnara.Annotations

	inputSchema  []byte
	outputSchema []byte
	// outputEnforced: every encodable value of the output type satisfies
	// outputSchema (enforced.go).
	outputEnforced bool
	// structuredChecked: the function validates its Result's structured
	// value against outputSchema itself (checkedResult).
	structuredChecked bool
	validator         *jsonschema.Schema
	decoder           *inputDecoder // for a struct input
	// onepass reads a struct input whose schema was derived from its type,
	// checking it as it decodes it (ADR 86); nil: the decoder and the
	// validator read it (the general path).
	onepass *onePass

	fn     reflect.Value
	sig    signature
	nargs  int
	recipe *container.Recipe // nil when the function has no dependencies

	logger   *slog.Logger
	scopeC   policy.Scopes
	observer agnara.Observer
}

// Capability returns the capability the plan was compiled from.
func (p *Plan) Capability() *agnara.Capability { return p.capability }

// Identity returns the capability's identity, "<app>.<name>".
func (p *Plan) Identity() string { return p.identity }

// Scopes returns the scopes a caller must all hold, in declaration order.
func (p *Plan) Scopes() []string { return slices.Clone(p.scopes) }

// Allows reports whether principal holds every scope the plan requires, by
// the application's scope rule. It is the predicate of the scope guard, for
// exposures that hide what a caller cannot invoke.
func (p *Plan) Allows(principal policy.Principal) bool {
	return p.scopeC.Allows(principal, p.scopes)
}

// Annotations returns the capability's annotations.
func (p *Plan) Annotations() agnara.Annotations { return p.annotations }

// asks reports whether an invocation of the plan may ask its caller for
// input ([InputRequired]): it declares a confirmation
// (CapabilityOptions.Confirm), or its function takes *execution.Context,
// through which a handler asks ([Context.Confirm], [Ask], [Context.Sample],
// [Context.Roots]). A function that takes context.Context, or none, cannot:
// the execution context it can reach with [FromContext] refuses to ask
// for it. An adapter may so serve such a plan where no question could
// reach the caller (mcpexpose answers a handshake-era session's call of one
// at its own edge).
func (p *Plan) asks() bool { return p.confirm != "" || p.sig.ctx == execContext }

// InputSchema returns the JSON Schema of the arguments: a closed object
// schema for an input struct (every object closed with
// "additionalProperties": false, properties in field order, no $ref, no
// default), an empty closed object for a capability without input, or the
// schema a raw capability supplied, verbatim.
func (p *Plan) InputSchema() json.RawMessage { return slices.Clone(p.inputSchema) }

// OutputSchema returns the JSON Schema of the value a successful invocation
// returns (Success.Value): derived from the output type, or the schema a
// capability returning json.RawMessage declared, verbatim. For a capability
// returning [Result] it is the declared schema of Success.Structured,
// verbatim, or nil when it declared none. It is nil for a function that
// returns only error, and for []Content.
func (p *Plan) OutputSchema() json.RawMessage { return slices.Clone(p.outputSchema) }

// facts returns what the MCP projection reads of the plan beyond its
// public accessors (registry.PlanFacts, installed by init in compile.go):
//
//   - Asks: Plan.asks;
//   - OutputEnforced: the output schema was derived from the output type
//     and says nothing the type does not already guarantee, so that every
//     value encoding/json encodes satisfies it: validating a success
//     against it can only pass. It is false for a declared OutputSchema,
//     for types with their own JSON or text encoding, interfaces or
//     embedded structs, and for schemas with constraints from tags
//     (minimum, enum, format, pattern…), whose successes must be
//     validated;
//   - StructuredChecked: the capability returns a [Result] under a
//     declared OutputSchema, and its function has the type
//     registry.CheckedResult gives (checkedResult): it validates the
//     structured value against that schema itself (ADR 81);
//   - ReturnsContent: the capability returns rich content ([]Content or
//     [Result]) rather than a structured value: exposures then publish no
//     envelope, and a Result's structured value, when its plan has an
//     OutputSchema, is published under that schema as it is.
func (p *Plan) facts() registry.PlanFacts {
	return registry.PlanFacts{Asks: p.asks(), OutputEnforced: p.outputEnforced, ReturnsContent: p.sig.content, StructuredChecked: p.structuredChecked}
}

func (p *Plan) String() string { return p.identity }
