package mcpimport

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agnara-go/agnara/execution"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a remote server says of its own failure never reaches the caller
// (its failure has a fixed message, see failure): it could carry anything,
// an injection aimed at the model among it. The operator needs it though
// ("path outside allowed directories" is why a call failed), so it is
// logged, at warn: a call the remote refused did not do what was asked,
// and the remote's configuration or permissions may need a person; warn
// is above the info level servers log at by default, while error stays
// for the server's own faults. The text is the remote's, bounded and with
// its invisible characters escaped, so that it cannot flood a log or forge
// a line of it. The arguments and anything the caller sent stay out.

// remoteTextBytes bounds the remote's text a log record holds: its first
// 512 bytes, cut at a character boundary.
const remoteTextBytes = 512

// remoteError is the text of a remote tool's isError result, as a call's
// cause.
type remoteError struct{ text string }

func (e *remoteError) Error() string { return "the remote tool reported an error: " + e.text }

// resultError returns the remote's own explanation of a result that
// failed for reason, as a cause to log: the text of an isError result's
// text blocks (or its structured content, when it has no text), or nil
// for any other reason.
func resultError(res *mcp.CallToolResult, reason execution.Reason) error {
	if reason != ReasonToolError || res == nil {
		return nil
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	if len(texts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			texts = append(texts, string(b))
		}
	}
	return &remoteError{text: strings.Join(texts, "\n")}
}

// remoteFailed logs, at warn, a call the remote server failed and
// explained: an isError result (cause a *remoteError) or a JSON-RPC error
// answer (cause a *jsonrpc.Error), with the remote's text in remote_error
// (see operatorText) and, for a JSON-RPC error, its code. It reports
// whether the failure was one to log so. (Reads of resources and prompts
// keep the remote's text at debug: TestReadFailuresAreLoggedAtDebugOnly.)
func remoteFailed(ctx context.Context, logger *slog.Logger, server, tool string, reason execution.Reason, cause error) bool {
	var (
		text   string
		re     *remoteError
		wire   *jsonrpc.Error
		attrs  []slog.Attr
		logged = true
	)
	switch {
	case errors.As(cause, &re):
		text = re.text
	case errors.As(cause, &wire):
		text = wire.Message
		attrs = append(attrs, slog.Int64("code", wire.Code))
	default:
		logged = false
	}
	if !logged || !logger.Enabled(ctx, slog.LevelWarn) {
		return logged
	}
	attrs = append([]slog.Attr{
		slog.String("server", server),
		slog.String("tool", tool),
		slog.String("reason", string(reason)),
		slog.String("remote_error", operatorText(text)),
	}, attrs...)
	logger.LogAttrs(ctx, slog.LevelWarn, "mcpimport: remote tool failed", attrs...)
	return true
}

// operatorText is s for a log record: its first remoteTextBytes bytes, cut
// at a character boundary and then marked " …(cut)", with every character
// that is not graphic (control characters such as a newline or an escape,
// bidirectional overrides, invalid UTF-8) written as its Go escape (\n,
// \x1b, \u202e), so that the record shows what the remote wrote on one
// line and cannot forge another, whatever handler writes it.
func operatorText(s string) string {
	cut := len(s) > remoteTextBytes
	if cut {
		n := remoteTextBytes
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case strconv.IsGraphic(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRuneToASCII(r) // '\n', '\x1b', '\u202e'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	if cut {
		b.WriteString(" …(cut)")
	}
	return b.String()
}
