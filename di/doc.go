// Package di is agnara's dependency injection: a [Registry] of constructor
// functions keyed by the type they build, passed to the application in
// agnara.Options.Dependencies. The application builds and owns the values
// at run time: it builds each when an invocation first needs it, and
// agnara.App.Close releases them.
//
// A constructor is an ordinary function:
//
//	func NewUserStore(ctx context.Context, db *sql.DB) (*UserStore, func(), error)
//
// It may take a leading [context.Context], then any number of dependencies
// (resolved by type from the same registry), and returns the value, optionally
// followed by a cleanup func() and an error. Two lifetimes exist:
//
//   - Singleton ([Provide]): built once, lazily, on first use, safe under
//     concurrent first use, and cleaned up when the application closes. A
//     failed construction is not cached: the next use tries again.
//   - Per invocation ([ProvidePerInvocation]): built for each invocation that
//     needs it and cleaned up, in reverse order of construction, when that
//     invocation ends on any path (success, failure, timeout, cancellation or
//     panic).
//
// A capability's function takes its dependencies as parameters after its
// input. A singleton may not depend on a per-invocation value (it would
// outlive it). Missing providers, cycles and such lifetime mistakes are
// reported, with the file:line of each registration, when the plans that
// need them are compiled, not when a call first needs them.
//
// All reflection happens at registration and compile time; an invocation
// only calls the constructors.
package di
