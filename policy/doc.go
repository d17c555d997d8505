// Package policy holds the authorization vocabulary shared by every part of
// agnara: who is calling ([Principal]), what they hold (scopes, checked by
// [Scopes]), and the extension point for application rules ([Policy]).
//
// The package is a leaf: it imports nothing from agnara and nothing from the
// Model Context Protocol. A principal is built by the application (for MCP,
// by its identity mapper from verified token facts) and travels with one
// invocation in its [context.Context]; see [WithPrincipal] and
// [PrincipalFrom].
//
// Declared scopes authorize nothing by themselves: a capability that declares
// "users:admin" is only guarded because the runtime checks the principal's
// scopes with [Scopes.Missing] before anything else runs. Policies add rules
// that scopes cannot express, such as "only the owner may delete".
package policy
