package execution

import (
	"errors"
	"reflect"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/internal/registry"
	"github.com/agnara-go/agnara/internal/site"
)

// Plans is the compiled form of an application: one [Plan] per capability,
// in registration order. It is immutable and safe for concurrent use.
type Plans struct {
	list  []*Plan
	index map[string]*Plan
}

// Compile checks every capability of app and compiles it into a plan. It
// freezes app: capabilities registered later are reported as errors by the
// next compile and are never served.
//
// Compile does not stop at the first mistake, nor at the first capability
// with one: it returns every mistake it finds (registration, signature,
// schema, struct tags, dependency graph) in one round, and no plans. The
// error is an errors.Join of one error per mistake, in registration order;
// each reads "file:line: <app>.<capability>: what is wrong", with the
// file:line of the registration that made it and, for a schema or tag
// mistake, the Go path of the field ("input SearchInput.Limit: ..."). Its
// Unwrap() []error lists them. Compiling the same application again returns
// equivalent plans, sharing the application's singleton dependencies.
func Compile(app *agnara.App) (*Plans, error) {
	ps, errs := compile(app)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return ps, nil
}

// What only the exposures of this module may read or call passes through
// internal/registry (ADR 54, ADR 73): the compiler that returns partial
// plans, a plan's projection facts, and the rate check of requests that
// invoke no plan.
func init() {
	registry.InstallCompiler(compile)
	registry.InstallPlanFacts((*Plan).facts)
	registry.InstallRateCheck(checkRate)
	registry.InstallCheckedResult(markChecked)
}

// compile compiles every capability of app, and returns the plans of those
// without a mistake and every mistake found, one error each. Exposures
// check their own declarations against the plans it did compile
// (registry.Compile), so that their mistakes are reported in the same round
// as the application's.
func compile(app *agnara.App) (*Plans, []error) {
	frozen := registry.Freeze[*agnara.Capability](app)
	errs := mistakes(nil, frozen.Err)
	ps := &Plans{index: make(map[string]*Plan, len(frozen.Capabilities))}
	limiter, err := NewLocalLimiter(nil)
	if err != nil {
		return ps, append(errs, err)
	}
	for _, c := range frozen.Capabilities {
		p, perrs := compilePlan(&frozen, c)
		errs = append(errs, perrs...)
		if p != nil {
			p.limiter = limiter
			ps.list = append(ps.list, p)
			ps.index[p.identity] = p
		}
	}
	return ps, errs
}

// mistakes appends to dst each mistake err reports: the errors it joins,
// recursively, or err itself. A nil err adds nothing.
func mistakes(dst []error, err error) []error {
	if err == nil {
		return dst
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			dst = mistakes(dst, e)
		}
		return dst
	}
	return append(dst, err)
}

// Lookup returns the plan of the capability with the given identity
// ("<app>.<name>").
func (ps *Plans) Lookup(identity string) (*Plan, bool) {
	p, ok := ps.index[identity]
	return p, ok
}

// Plan returns the plan compiled from c, if c belongs to these plans.
func (ps *Plans) Plan(c *agnara.Capability) (*Plan, bool) {
	p, ok := ps.index[c.Identity()]
	if !ok || p.capability != c {
		return nil, false
	}
	return p, true
}

// All returns the plans in registration order.
func (ps *Plans) All() []*Plan {
	return append([]*Plan(nil), ps.list...)
}

func compilePlan(app *registry.Frozen[*agnara.Capability], c *agnara.Capability) (*Plan, []error) {
	def := registry.Define(c)
	errs := mistakes(nil, def.Err)
	fail := func(format string, args ...any) {
		errs = append(errs, site.Errorf(def.Site, c.Identity(), format, args...))
	}
	// failSchema reports each problem of a schema derivation as a mistake
	// of its own.
	failSchema := func(what string, err error) {
		var ps schemaProblems
		if !errors.As(err, &ps) {
			fail("%s %v", what, err)
			return
		}
		for _, p := range ps {
			fail("%s %s", what, p)
		}
	}
	fn := reflect.ValueOf(def.Func)
	if def.Func == nil || fn.Kind() != reflect.Func || fn.IsNil() {
		if def.Err == nil {
			fail("want a function, got %T", def.Func)
		}
		return nil, errs
	}
	opts := c.Options()
	sig, problems := analyze(fn.Type())
	for _, p := range problems {
		fail("%s", p)
	}
	p := &Plan{
		capability:  c,
		identity:    c.Identity(),
		scopes:      opts.Scopes,
		policies:    opts.Policies,
		confirm:     opts.Confirm,
		verifier:    opts.ConfirmationVerifier,
		timeout:     opts.Timeout,
		rateLimit:   opts.RateLimit,
		annotations: opts.Annotations,
		fn:          fn,
		sig:         sig,
		nargs:       fn.Type().NumIn(),
		logger:      app.Logger,
		scopeC:      app.Scopes,
		observer:    c.App().Observer(),
	}
	if p.verifier == nil {
		p.verifier = app.ConfirmationVerifier
	}

	for i, f := range opts.Forms {
		if f == nil || reflect.ValueOf(f).IsNil() {
			fail("form %d is nil", i)
		} else if err := f.Err(); err != nil {
			fail("%v", err)
		}
	}

	// Input schema.
	switch sig.input {
	case structInput:
		if opts.InputSchema != nil {
			fail("InputSchema is only for capabilities whose input is json.RawMessage; the schema of %s is derived from it", sig.inType)
		}
		s, v, err := generateInputSchema(sig.inType)
		if err != nil {
			failSchema("input", err)
		} else if root, _ := parseOrdered(s); !isObjectSchema(root) {
			fail("input %s is not encoded as a JSON object; arguments are always an object", sig.inType)
		} else if d, err := newInputDecoder(sig.inType); err != nil {
			fail("input %v", err)
		} else {
			p.inputSchema, p.validator, p.decoder = s, v, d
			p.onepass = onePassFor(sig.inType, d, v)
		}
	case rawInput:
		if opts.InputSchema == nil {
			fail("a capability whose input is json.RawMessage must declare CapabilityOptions.InputSchema")
		} else if err := checkRawSchema(opts.InputSchema); err != nil {
			fail("%v", err)
		} else {
			p.inputSchema = opts.InputSchema
		}
	default:
		if opts.InputSchema != nil {
			fail("InputSchema is set but the function takes no json.RawMessage input")
		}
		p.inputSchema = emptyObjectSchema
	}
	if p.inputSchema != nil && p.validator == nil {
		v, err := compileValidator(p.inputSchema)
		if err != nil {
			fail("input schema does not compile: %v", err)
		}
		p.validator = v
	}

	// Output schema.
	switch {
	case opts.OutputSchema != nil && sig.out != rawMessageType && !sig.result:
		fail("OutputSchema is only for capabilities whose output is json.RawMessage or execution.Result")
	case opts.OutputSchema != nil:
		if _, err := parseOrdered(opts.OutputSchema); err != nil {
			fail("OutputSchema is not valid JSON: %v", err)
		} else if _, err := compileValidator(opts.OutputSchema); err != nil {
			fail("OutputSchema does not compile: %v", err)
		} else {
			p.outputSchema = opts.OutputSchema
			p.structuredChecked = sig.result && fn.Type() == checkedResultType
		}
	case sig.out != nil && !sig.content:
		s, err := generateSchema(sig.out, true)
		if err != nil {
			failSchema("output", err)
		}
		p.outputSchema = s
		p.outputEnforced = err == nil && outputEnforced(sig.out, s)
	}

	// Dependencies: check each one, so that every missing provider is named.
	if len(sig.deps) > 0 {
		recipe, err := app.Container.Recipe(sig.deps)
		if err != nil {
			for i, t := range sig.deps {
				if _, err := app.Container.Recipe([]reflect.Type{t}); err != nil {
					idx := sig.firstDep + i
					if msg := inputMistake(t, idx, sig); msg != "" {
						fail("parameter %d (%s): %s", idx+1, t, msg)
					} else {
						fail("parameter %d (%s): %v%s", idx+1, t, err, dependencyHint(t, idx, sig))
					}
				}
			}
		}
		p.recipe = recipe
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return p, nil
}

func isObjectSchema(root any) bool {
	o, ok := root.(*object)
	return ok && o.vals["type"] == "object"
}
