// Package agnaratest tests an application's capabilities as an MCP client
// sees them: it serves a compiled [mcpexpose.Snapshot] through
// [mcpexpose.NewHandler] on a loopback HTTP server, as production serves it,
// and connects the official SDK client to it, acting as a principal the test
// chooses, at the protocol era it chooses, answering the server's questions
// (confirmations, forms, sampling, roots) the way it is told. Calls come back
// as agnara's canonical outcomes: an [execution.Success] or an
// [*execution.Failure] with its code, reason, message and details.
//
// A typical test:
//
//	func TestDeleteNeedsAdmin(t *testing.T) {
//		snap := compile(t) // the application's exposure, compiled
//		reader := agnaratest.NewClient(t, snap, &agnaratest.Options{
//			Principal: policy.NewPrincipal("reader", []string{"users:read"}),
//		})
//		if names := reader.ToolNames(t); slices.Contains(names, "users.delete_user") {
//			t.Errorf("a reader sees %v", names)
//		}
//		admin := agnaratest.NewClient(t, snap, &agnaratest.Options{
//			Principal: policy.NewPrincipal("admin", []string{"users:admin"}),
//			Answer:    agnaratest.Confirm(),
//		})
//		admin.CallValue(t, "users.delete_user", map[string]any{"id": "1"}, nil) // confirmed
//		if q := admin.Questions(); len(q) != 1 {
//			t.Errorf("asked %d questions, want the confirmation", len(q))
//		}
//	}
//
// [NewClient] and the methods that take a testing.TB fail the test on
// anything a canonical outcome cannot say: a transport error, a JSON-RPC
// error, a result that is not agnara's shape. [Connect] and the methods that
// take a context return those as errors instead, for tests that expect them
// (an unknown tool, a missing scope over OAuth) and for programs and
// examples, which have no testing.TB.
//
// Tools exposed to run as tasks (mcpexpose.ToolOptions.Task) are called
// directly by [Client.CallTool], as by any client that does not declare the
// tasks extension. [Client.CallTask] declares it: the call creates a task,
// which CallTask follows to its end (polling tasks/get, answering its
// questions as [Options] say, cancelling it with tasks/cancel when its
// context ends), returning the statuses and status messages it saw and the
// final outcome.
//
// A tool's MCP App view (mcpexpose.ToolOptions.UI) is what a host would
// render: [UIOf] names the view a listed tool links, and [Client.ToolUI]
// reads it as the client's principal may, its page and its CSP.
//
// A principal other than the anonymous one reaches the server as it would in
// production with OAuth: a bearer token, verified by the handler, mapped by
// the identity mapper. So a call of a tool whose scopes the principal lacks
// is refused over HTTP with 403 insufficient_scope (a JSON-RPC error for
// [Client.CallTool]) unless [mcpexpose.ServerOptions].ForbiddenResult is set.
//
// Package internal/mcptest, by contrast, is for agnara's own tests of the raw
// wire; tests that must run a built program stay with that program.
package agnaratest
