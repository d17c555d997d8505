package mcptest

import (
	"net/http"
	"strconv"
	"strings"
)

// Unframe removes from h, the headers of an answer whose body is raw, the
// one way an edge's answer may differ from the SDK's outside its bytes
// (ADR 68): a whole event stream sent with its length, where the SDK
// sends the same bytes chunked. The length must be the body's own: a wrong
// one is left in, for a differential test to see.
func Unframe(h http.Header, raw string) {
	if strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") && h.Get("Content-Length") == strconv.Itoa(len(raw)) {
		h.Del("Content-Length")
	}
}
