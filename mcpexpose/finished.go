package mcpexpose

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The middleware runs tools/call, resources/read and prompts/get itself,
// with their records as arguments, and never reaches the SDK's handlers
// of tools, resources or prompts (ADR 74, ADR 75). What the SDK does to
// a handler's result before sending it, the functions here do to the
// middleware's: the result type the SDK keeps unexported, and the
// defaults it fills in.

// typedResults reports whether results on ss carry their result type, as
// the SDK gives them (clientSupportsMultiRoundTrip): on a session of
// 2026-07-28 or later, or on a request without a handshake.
func typedResults(ss *mcp.ServerSession) bool {
	if ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ProtocolVersion < modernVersion {
			return false
		}
	}
	return true
}

// sdkFinished does to the result of a call the middleware ran what the
// SDK's Server.callTool does to a tool handler's result: on a session of
// 2026-07-28 or later, or a request without one, it gets its result type
// (input_required with input requests, complete otherwise); a result that
// is not input-required gets an empty content list for null. (The check
// that a result holds content or input requests, never both, callTool
// makes on every route.) A task goes as it is.
func sdkFinished(req *mcp.CallToolRequest, res mcp.Result) mcp.Result {
	r, ok := res.(*mcp.CallToolResult)
	if !ok || r == nil {
		return res
	}
	typed := typedResults(req.Session)
	var out mcp.CallToolResult
	switch {
	case typed && r.InputRequests != nil:
		out = inputRequiredResult
	case typed:
		out = completeResult
	}
	out.Meta, out.Content, out.StructuredContent, out.IsError = r.Meta, r.Content, r.StructuredContent, r.IsError
	out.InputRequests, out.RequestState = r.InputRequests, r.RequestState
	if out.Content == nil && (!typed || r.InputRequests == nil) {
		out.Content = []mcp.Content{}
	}
	return &out
}

// readFinished does to the result of a read the middleware ran what the
// SDK's Server.readResource does to a resource handler's, mime being the
// MIME type of the resource or template read: a result that holds both
// contents and input requests is refused as a server bug; the result
// type is given as sdkFinished gives a call's, and the cache scope its
// default ("public"); unless the result asks for input, it must have
// contents, and each that names no URI or MIME type gets the read's.
func readFinished(req *mcp.ReadResourceRequest, r *mcp.ReadResourceResult, mime string) (*mcp.ReadResourceResult, error) {
	if r.InputRequests != nil && len(r.Contents) > 0 {
		return nil, errBothResults
	}
	var out mcp.ReadResourceResult
	typed := typedResults(req.Session)
	switch {
	case typed && r.InputRequests != nil:
		out = readInputRequired
	case typed:
		out = readComplete
	}
	out.Meta, out.Cacheable, out.Contents = r.Meta, r.Cacheable, r.Contents
	out.InputRequests, out.RequestState = r.InputRequests, r.RequestState
	if out.CacheScope == "" {
		out.CacheScope = "public"
	}
	if typed && r.InputRequests != nil {
		return &out, nil
	}
	uri := req.Params.URI
	if out.Contents == nil {
		return nil, fmt.Errorf("reading resource %s: read handler returned nil information", uri)
	}
	for _, c := range out.Contents {
		if c.URI == "" {
			c.URI = uri
		}
		if c.MIMEType == "" {
			c.MIMEType = mime
		}
	}
	return &out, nil
}

// errBothResults is the SDK's refusal of a result with both content and
// input requests.
var errBothResults = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server bug: result has both content and inputRequests"}

// promptFinished does to the result of a prompt the middleware got what
// the SDK's Server.getPrompt does to a prompt handler's: its result type,
// as sdkFinished gives a call's.
func promptFinished(req *mcp.GetPromptRequest, r *mcp.GetPromptResult) *mcp.GetPromptResult {
	var out mcp.GetPromptResult
	switch typed := typedResults(req.Session); {
	case typed && r.InputRequests != nil:
		out = promptInputRequired
	case typed:
		out = promptComplete
	}
	out.Meta, out.Description, out.Messages = r.Meta, r.Description, r.Messages
	out.InputRequests, out.RequestState = r.InputRequests, r.RequestState
	return &out
}

// Empty results of each result type, which a result copies to carry it:
// the SDK keeps the type unexported, and decoding is the one way to set it
// outside the SDK. TestFinishedCopiesEveryField holds the finishers to
// every field the SDK's results have, and fails when a result stops
// decoding its type.
var (
	completeResult      = resultOfType[mcp.CallToolResult]("complete", `"content":[]`)
	inputRequiredResult = resultOfType[mcp.CallToolResult]("input_required", `"content":[]`)
	readComplete        = resultOfType[mcp.ReadResourceResult]("complete", `"contents":[]`)
	readInputRequired   = resultOfType[mcp.ReadResourceResult]("input_required", `"contents":[]`)
	promptComplete      = resultOfType[mcp.GetPromptResult]("complete", `"messages":[]`)
	promptInputRequired = resultOfType[mcp.GetPromptResult]("input_required", `"messages":[]`)
)

// decodable is a result the SDK decodes with its result type.
type decodable[R any] interface {
	*R
	UnmarshalJSON([]byte) error
}

// resultOfType is an empty result of type R of the result type rt, decoded
// from a body whose one other member is list, R's required list, which the
// caller's copy replaces.
func resultOfType[R any, P decodable[R]](rt, list string) R {
	var r R
	_ = P(&r).UnmarshalJSON([]byte(`{` + list + `,"resultType":"` + rt + `"}`))
	return r
}
