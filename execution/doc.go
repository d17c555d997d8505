// Package execution compiles an application's capabilities into immutable
// plans and invokes them.
//
// [Compile] does all the checking and reflection up front: it derives each
// capability's input and output JSON Schemas, checks the function's
// signature, and checks its dependencies against the application's di
// registry. It reports every mistake at once, each with the file:line of the
// registration that made it.
//
// [Plan.Invoke] then runs one invocation in a fixed order — scope guard,
// input validation and strict decoding, policies and confirmation,
// dependencies, handler under a deadline — and returns an [Outcome]: a
// [Success], or a [*Failure] with a code from a closed set ([Code]). Handlers
// end an invocation with a deliberate failure by returning one (see [Fail]);
// any other error, and any panic, becomes an [InternalFailure] whose cause is
// logged and never shown to the caller.
//
// # Failure reasons
//
// [ReasonOf] is the one accessor for why something failed, whichever
// package made the error: it answers a [Reason] for a [*Failure] (its
// finer reason, or its code's name), for the discovery errors of package
// mcpimport and for the store errors of package approval, through any
// wrapping. Those packages define their reasons as constants; the
// "Failure reasons" section of docs/capabilities.md lists them all.
//
// # Schemas
//
// Input schemas are generated from the input struct by reflection, with
// the tags read as github.com/invopop/jsonschema read them (agnara-go used
// it until ADR 71, with the same schemas): fields in declaration order,
// required unless tagged omitempty (or omitzero), every object closed with
// "additionalProperties": false, nested and embedded structs inlined (no $ref
// or $defs), no $schema or $id. Struct tags such as
// jsonschema:"minLength=1,enum=a,enum=b,format=email" and
// jsonschema_description:"..." add constraints and descriptions; a type
// with a JSONSchema() method describes itself with what the method
// returns, encoded as JSON (a *jsonschema.Schema of
// github.com/google/jsonschema-go or of invopop/jsonschema). A default
// (jsonschema:"default=...") is a compile error: defaults are never
// published. Types whose JSON cannot be described without $ref (recursive
// types), or cannot be represented at all (channels, functions, complex
// numbers, maps with non-string keys), are compile errors too.
//
// A top-level input field tagged mcp:"header=Region" is a header parameter:
// its property publishes "x-mcp-header": "Region", so that MCP clients of
// the 2026-07-28 revision mirror the argument in an Mcp-Param-Region HTTP
// header (SEP-2243). Only string, integer and boolean fields that are not
// pointers qualify, under HTTP-token names unique regardless of case; see
// the header-parameter example.
//
// Arguments are validated with github.com/santhosh-tekuri/jsonschema/v6
// (formats such as date-time and email are asserted) and every violation is
// reported, as a list of [Violation] under the "violations" key of the
// InvalidInput failure's details.
package execution
