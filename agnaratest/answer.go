package agnaratest

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An Answerer answers an elicitation: a capability's confirmation or a
// form it asks for. It is called once per question, possibly concurrently
// for questions asked together, at either protocol era (2026-07-28
// input-required rounds and handshake-era elicitation requests alike).
// Write one to answer per question, for example by its RequestedSchema or
// Message; an error fails the call. As [Options].OpenURL it answers URL
// elicitations (q.Mode "url", q.URL the page to open): Accept(nil) says
// the user opened it.
type Answerer func(ctx context.Context, q *mcp.ElicitParams) (*mcp.ElicitResult, error)

// Accept answers every question by accepting it with content.
func Accept(content map[string]any) Answerer {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: content}, nil
	}
}

// Confirm answers every question yes: accept with {"confirm": true}, the
// answer a capability's confirmation (CapabilityOptions.Confirm,
// execution.Context.Confirm) asks for.
func Confirm() Answerer { return Accept(map[string]any{"confirm": true}) }

// Decline answers every question by declining it.
func Decline() Answerer {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
}

// Cancel answers every question by cancelling it.
func Cancel() Answerer {
	return func(context.Context, *mcp.ElicitParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "cancel"}, nil
	}
}
