//lint:file-ignore SA1019 sampling is deprecated at 2026-07-28 (SEP-2577) but remains in the protocol during the deprecation window; the test asks the test client a task's sampling question on purpose.
package agnaratest

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestTaskSamplingWithToolsIsRefused: a task's sampling question that
// offers tools is refused, saying so, rather than answered by
// Options.Sample with the tools dropped; one without tools reaches it.
func TestTaskSamplingWithToolsIsRefused(t *testing.T) {
	asked := 0
	c := &Client{sample: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
		asked++
		return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "ok"}}, nil
	}}
	msg := []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}
	_, err := c.answerTask(context.Background(), "", &mcp.CreateMessageWithToolsParams{Messages: msg, MaxTokens: 5,
		Tools: []*mcp.Tool{{Name: "search", InputSchema: map[string]any{"type": "object"}}}})
	if err == nil || !strings.Contains(err.Error(), "offers tools") || asked != 0 {
		t.Fatalf("a question with tools: %v (Sample asked %d times); want refused, naming the tools", err, asked)
	}
	if _, err := c.answerTask(context.Background(), "", &mcp.CreateMessageWithToolsParams{Messages: msg, MaxTokens: 5}); err != nil || asked != 1 {
		t.Fatalf("a question without tools: %v (Sample asked %d times); want it answered", err, asked)
	}
}
