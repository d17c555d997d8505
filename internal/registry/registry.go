// Package registry hands the definitions package agnara records to the
// compiler in package execution. What only a compiler may do with an
// application (freeze it, read a capability's function and registration
// site) is not part of agnara's API; it passes through here instead, where
// no code outside this module can reach it.
//
// Package agnara installs the two accessors once, when it is initialised
// ([Install]); package execution calls [Freeze] and [Define]. Package
// execution in turn installs its compiler ([InstallCompiler]), which
// exposures call ([Compile]) for the plans compiled without a mistake,
// and what the MCP projection reads of a plan beyond its public face
// ([InstallPlanFacts], [Facts]), and the rate check of requests that
// invoke no plan ([InstallRateCheck], [RateCheck]), and the function type
// of a capability that validates its own structured results
// ([InstallCheckedResult], [CheckedResult]). Package di installs the way from its
// Registry to the engine behind it ([InstallDependencies]), which agnara
// builds its container from ([Dependencies]).
// They are not hooks anyone can swap: nothing outside this module can
// import this package, and each is installed by an init function before
// any value that uses it exists.
package registry

import (
	"log/slog"

	"github.com/agnara-go/agnara/internal/container"
	"github.com/agnara-go/agnara/internal/site"
	"github.com/agnara-go/agnara/policy"
)

// Frozen is what a frozen application hands its compiler. C is
// *agnara.Capability.
type Frozen[C any] struct {
	// Capabilities are the capabilities registered before the freeze, in
	// registration order.
	Capabilities []C
	// Container is the application's dependency container, built once.
	Container *container.Container
	// Err joins every registration mistake recorded so far, including the
	// dependency graph's.
	Err error

	Logger               *slog.Logger
	Scopes               policy.Scopes
	ConfirmationVerifier policy.ConfirmationVerifier
}

// Definition is what the compiler reads of one capability beyond its public
// accessors.
type Definition struct {
	// Site is where the capability was registered: every mistake found in
	// it is reported there.
	Site site.Site
	// Func is the registered function, unchecked.
	Func any
	// Err joins the mistakes found in the registration itself (name,
	// options, a registration after the freeze), or is nil.
	Err error
}

// Sealed is the argument type of agnara.Form's sealing method. Code outside
// this module cannot name it, so it cannot implement agnara.Form.
type Sealed struct{}

// PlanFacts are what an MCP exposure reads of a compiled plan beyond its
// public accessors: facts of the projection, not of the capability, which
// a service or an exposure for another transport has no use for (ADR 73).
type PlanFacts struct {
	// Asks: an invocation may ask its caller for input. The plan declares
	// a confirmation, or its function takes *execution.Context. A
	// function that takes context.Context, or none, cannot ask: mcpexpose
	// answers a handshake-era session's call of such a plan at its edge.
	Asks bool
	// OutputEnforced: the output schema was derived from the output type
	// and says nothing the type does not guarantee, so validating a
	// success against it can only pass.
	OutputEnforced bool
	// ReturnsContent: the capability returns rich content ([]Content or
	// Result), published without the {"result": ...} envelope.
	ReturnsContent bool
	// StructuredChecked: the capability returns a Result under a declared
	// output schema, and its function validates the Result's structured
	// value against that schema before it returns one (it was given the
	// type [CheckedResult] makes). An exposure then does not validate it
	// again (ADR 81).
	StructuredChecked bool
}

var (
	freeze  any // func(A) Frozen[C]
	define  any // func(C) Definition
	compile any // func(A) (P, []error)
	facts   any // func(P) PlanFacts
	deps    any // func(R) *container.Registry
	rate    any // execution's checkRate
	checked any // func(F) any, execution's checkedResult conversion
)

// Install connects the compiler to package agnara. Package agnara calls it
// from its init function, once.
func Install[A, C any](freezeApp func(A) Frozen[C], defineCapability func(C) Definition) {
	freeze, define = freezeApp, defineCapability
}

// Freeze closes registration of app and returns what it registered.
// Freezing again returns the same capabilities and container (and any
// registration made in between as a mistake). C is *agnara.Capability.
func Freeze[C, A any](app A) Frozen[C] {
	return freeze.(func(A) Frozen[C])(app)
}

// Define returns what the compiler reads of capability c.
func Define[C any](c C) Definition {
	return define.(func(C) Definition)(c)
}

// InstallCompiler connects exposures to the compiler. Package execution
// calls it from its init function, once; every exposure package imports
// execution, so it is installed before an exposure compiles.
func InstallCompiler[A, P any](compileApp func(A) (P, []error)) {
	compile = compileApp
}

// Compile compiles app as execution.Compile does, except that it returns
// the plans of the capabilities compiled without a mistake together with
// every mistake, one error each: an exposure checks its own declarations
// against those plans, so that its mistakes are reported in the same round
// as the application's (ADR 0054). Plans returned with a mistake are never
// served. P is *execution.Plans.
func Compile[P, A any](app A) (P, []error) {
	return compile.(func(A) (P, []error))(app)
}

// InstallPlanFacts connects exposures to the facts of a compiled plan.
// Package execution calls it from its init function, once.
func InstallPlanFacts[P any](planFacts func(P) PlanFacts) {
	facts = planFacts
}

// Facts returns the projection's facts of plan p, fixed when it was
// compiled. An exposure reads them once per plan, where it builds what it
// serves, not per request. P is *execution.Plan.
func Facts[P any](p P) PlanFacts {
	return facts.(func(P) PlanFacts)(p)
}

// InstallDependencies connects package agnara to the engine behind a
// di.Registry. Package di calls it from its init function, once; agnara
// imports di, so it is installed before an application is built.
func InstallDependencies[R any](engine func(R) *container.Registry) {
	deps = engine
}

// Dependencies returns the engine's registry behind r, nil for a nil r. R
// is *di.Registry.
func Dependencies[R any](r R) *container.Registry {
	return deps.(func(R) *container.Registry)(r)
}

// InstallRateCheck connects exposures to the rate check that
// execution.Plan.Invoke applies to a call, for requests an exposure limits
// that invoke no plan. Package execution calls it from its init function,
// once. F is
//
//	func(ctx context.Context, lim execution.Limiter, name string, p policy.Principal, limit agnara.RateLimit) (*execution.Failure, error)
//
// It counts one request of p under name against limit with lim, and
// returns the failure to refuse the request with, or nil to admit it;
// with the limiter's error, to log, when the limiter could not decide (the
// failure then refuses the request: the check fails closed).
func InstallRateCheck[F any](check F) {
	rate = check
}

// RateCheck returns the rate check execution installed. F is its type (see
// [InstallRateCheck]); a wrong F panics. An exposure resolves it once,
// when it builds its server, and keeps the typed function: a request pays
// no lookup or type assertion.
func RateCheck[F any]() F {
	return rate.(F)
}

// InstallCheckedResult connects this module's capabilities to the
// function type execution's compiler reads as "validates its own
// structured value" ([PlanFacts].StructuredChecked). Package execution
// calls it from its init function, once. F is
//
//	func(*execution.Context, json.RawMessage) (execution.Result, error)
func InstallCheckedResult[F any](mark func(F) any) {
	checked = mark
}

// CheckedResult returns f with the type that tells execution's compiler
// that f validates the structured value of every Result it returns
// against the output schema it is registered with, so that exposures
// need not (ADR 81): register the returned value in f's place. Only
// packages of this module can call it, for functions that keep that
// promise (mcpimport's imported tools). F is as for
// [InstallCheckedResult]; a wrong F panics, at registration.
func CheckedResult[F any](f F) any {
	return checked.(func(F) any)(f)
}
