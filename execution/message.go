package execution

// Message is one message of a prompt: who says it and what. A capability
// exposed as a prompt returns []Message (or, when every message is the
// user's, []Content or a string); adapters project each message to their
// protocol's prompt message (for MCP, a PromptMessage).
type Message struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// Role is who says a [Message].
type Role string

// The roles of a prompt's messages.
const (
	User      Role = "user"
	Assistant Role = "assistant"
)
