// Package mcpimport imports selected tools of a remote MCP server as
// capabilities of an agnara application, under the host's explicit
// authorization, so that the same scopes, policies, outcomes and logging
// apply to them as to local capabilities, and so that mcpexpose can serve
// them again (a governed gateway).
//
// # The host owns the session
//
// The application connects ([Connect]) and closes the [Session], and owns
// its transport, credentials and limits; this package only lists tools
// (every page) and makes single tools/call requests on it. The session's
// [Monitor], wired in by Connect, follows it: it accepts the protocol version the real handshake negotiated
// (2026-07-28, 2025-11-25 or 2025-06-18) and receives tools/list_changed
// notifications, after which every catalog discovered earlier is stale.
// There is no implicit rediscovery: the host calls [Discover] again and swaps
// catalogs at a safe point, or keeps its catalog when nothing it imports
// changed ([Catalog.Renew]). With [Options.AllowAbsent], a bound tool that
// went away or no longer fits the profile is left out alone
// ([Catalog.Absent]) instead of failing the whole discovery.
//
// # Explicit bindings
//
// [Discover] imports only the tools the host binds, each with a local name, a
// read policy title, a scope validator (or an explicit declaration that none
// is needed) and a concurrency declaration. Remote annotations grant nothing.
// The result is a [Catalog] holding a detached, immutable [Snapshot]:
// schema version 1, the server id, the negotiated protocol version, entries
// sorted by local name and a revision digest over all of it, computed over
// the snapshot's RFC 8785 canonical JSON form, so that two hosts agree.
//
// # Schema profile
//
// Selected input and output schemas must fit a strict profile
// (agnara.schema-profile/v1), or discovery fails with [SchemaUnsupported]
// naming the tool. Nothing is stripped or weakened and no argument is
// coerced. In short: the root is a closed object ("type": "object",
// "additionalProperties": false); every object is closed or a typed map;
// only the keywords agnara itself publishes are allowed (type, properties,
// required, additionalProperties, items, enum, const, format, pattern,
// minLength, maxLength, minimum, maximum, exclusiveMinimum, exclusiveMaximum,
// multipleOf, minItems, maxItems, uniqueItems, title, description, examples,
// deprecated, readOnly, writeOnly, anyOf, oneOf, contentEncoding,
// contentMediaType); "$schema" only at the root and only as
// "https://json-schema.org/draft/2020-12/schema" (it is kept in the snapshot
// and the digest); no "$ref", "$defs", "default", vendor ("x-...") or other
// keywords. docs/import.md has the full rules. A working handshake proves
// nothing about a tool's compatibility.
//
// A binding may opt in to [ProfileStandard] instead ([Binding.Profile],
// [WriteBinding.Profile]): standard JSON Schema of drafts 07, 2019-09 or
// 2020-12 as its "$schema" declares, with "$ref"s within the document (an
// external reference is refused; nothing is ever fetched), open objects and
// "default" values, under the same size and depth limits. Such a schema is
// published and digested unchanged, arguments are validated against it
// before the call is sent, and a default is never applied.
//
// # Results and failures
//
// A successful call returns an [execution.Result]: the remote content
// blocks (text, images, audio, resource links, embedded resources, with
// their annotations), each checked and bounded ([Limits].BlockBytes,
// ResultBytes, ContentBlocks), and, when the remote tool advertises an
// output schema, its structured content, required and valid against that
// schema, which is also the local tool's output schema: served again, the
// caller sees the remote's structured content once, unwrapped (ADR 40).
// JSON-looking text is never a substitute for it; without an output schema
// structured content is not passed on. isError results fail closed. A
// failed call ends in a canonical failure whose
// [execution.Failure.Reason] is one of the call reasons
// ([ReasonInvalidArguments] ... [ReasonResultTooLarge]), or for a write one
// of the approval reasons of package approval; what the remote server said
// never reaches the caller. There
// are no retries and no hidden calls. Cancellation stops the wait and
// discards a late result; the remote server may go on executing.
//
// # Questions
//
// A remote tool's elicitation and sampling requests, and its
// input-required results, are put to the imported tool's caller
// ([execution.Context.Relay], installed by [Connect] or [RouteQuestions]):
// checked, bounded, asked in the caller's era, and answered upstream on
// the caller's next round, which sends the call again. For a write, the
// approval is claimed once and held across the rounds that only ask; a
// decline ends it without sending the call again, effect unknown (the
// call that asked was sent: [ReasonQuestionDeclined]). A question that
// is not relayed fails with [ReasonQuestionRefused]. ADR 41 and
// docs/import.md, "Questions", have the rules.
//
// # Resources and prompts
//
// [DiscoverFeatures] imports a remote server's resources, resource
// templates and prompts the same way: only those the host binds
// ([FeatureBindings]: a remote URI, URI template or prompt name to a local
// name, local URI or URI template, title and scopes), discovered with
// resources/list, resources/templates/list and prompts/list under the
// limits, each definition recorded in the snapshot and its digest
// ([Snapshot.Resources], [Snapshot.ResourceTemplates], [Snapshot.Prompts]).
// [Catalog.RegisterResources] and [Catalog.RegisterPrompts] make them
// capabilities an exposure serves as resources and prompts; each read or
// get is one resources/read or prompts/get whose answer is checked (the
// URI read, text or blob, media types, roles, content kinds, sizes) and
// fails closed like a tool call. A resources/list_changed or
// prompts/list_changed makes such a catalog stale, and leaves the tool
// catalogs of the session alone. docs/import.md, "Resources and prompts",
// has the rules.
//
// # Remote tasks
//
// A binding may let its remote tool answer with a task (the MCP tasks
// extension; [Binding].Task, on a session connected with
// [ConnectOptions].Tasks): the call declares the extension in its own
// request capabilities, polls tasks/get until the task ends, within the
// binding's [TaskOptions] (timeout, poll budget) and the remote's poll
// interval hint within [MinTaskPollInterval] and [MaxTaskPollInterval],
// and sends tasks/cancel when it gives up (the caller cancelled, the time
// or polls ran out, the task asked for input that is not relayed). The
// final result is checked as a direct call's. A task answer to a binding
// that did not opt in fails with [ReasonProtocolError]; a task's input
// requests are the caller's questions, as a direct call's are, answered
// with tasks/update. docs/import.md, "Remote tasks", has the wire.
package mcpimport
