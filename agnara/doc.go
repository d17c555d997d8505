// Package agnara is where an application declares what it can do: an [App]
// with a name, and capabilities, which are ordinary typed Go functions plus
// the metadata that governs them (description, scopes, policies,
// confirmation, timeout, annotations).
//
// A capability is a function of this shape:
//
//	func GetUser(ctx context.Context, in GetUserInput, store *UserStore) (User, error)
//
// with an optional leading context.Context (or *execution.Context), at most one
// input struct whose fields are the arguments callers send, then any number of
// dependencies resolved by type from the application's [di.Registry]. It
// returns (Out, error) or just error.
//
// Registration only records the function and its options, with the file:line
// it was made from. Checking and compiling happen later, all at once, in
// [github.com/agnara-go/agnara/execution.Compile], which reports every mistake
// together. Nothing here depends on a transport: the same capabilities can be
// served over MCP (package mcpexpose) or anything else.
package agnara
