package di

// Hooks for the black-box tests of package di_test.

// Lifetime is the unexported lifetime a registration chooses.
type Lifetime = lifetime

// The two lifetimes, as [Provide] and [ProvidePerInvocation] choose them.
const (
	Singleton     = singleton
	PerInvocation = perInvocation
)
