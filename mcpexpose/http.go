package mcpexpose

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxBodyBytes is the default limit on the size of a request body.
const DefaultMaxBodyBytes = 1 << 20

// modernVersion is the first protocol version served without sessions.
const modernVersion = "2026-07-28"

// HandlerOptions configures [NewHandler]. A nil *HandlerOptions and every
// zero field mean the documented default.
type HandlerOptions struct {
	// Server configures the MCP server behind the handler.
	Server ServerOptions
	// Tokens, when set, verifies the bearer token every request must carry
	// (with the SDK's auth.RequireBearerToken); the verified facts reach
	// the Server.Identity mapper. Default: no tokens; every caller is
	// anonymous.
	Tokens auth.TokenVerifier
	// AllowedOrigins lists the browser origins ("https://app.example.com")
	// allowed besides the handler's own. A request with any other Origin
	// header is refused with 403. Requests without Origin (non-browser
	// clients) are not affected.
	AllowedOrigins []string
	// MaxBodyBytes limits request bodies; larger ones get 413. Default:
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
}

// Handler serves a snapshot over MCP's streamable HTTP transport, both
// protocol eras on one URL: 2026-07-28 requests statelessly, and the
// handshake era (2025-11-25, 2025-06-18 and older) with sessions. It mounts
// at any path of a net/http mux or router. It is safe for concurrent use.
type Handler struct {
	h         http.Handler
	stateless http.Handler
	stateful  http.Handler
	origins   []string
	maxBody   int64
	logger    *slog.Logger
}

// NewHandler returns the HTTP handler for snap.
//
// Before the SDK sees a request, the handler refuses a foreign Origin (403),
// a body over the limit (413) and a body that is not JSON (400, JSON-RPC
// parse error), and answers a task-augmented tools/call with -32602: this
// server runs no tasks. The SDK checks the Host header of loopback
// listeners (DNS rebinding protection).
func NewHandler(snap *Snapshot, opts *HandlerOptions) (*Handler, error) {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxBodyBytes < 0 {
		return nil, errors.New("mcpexpose: negative MaxBodyBytes")
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	origins := make([]string, 0, len(o.AllowedOrigins))
	for _, s := range o.AllowedOrigins {
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" {
			return nil, errors.New("mcpexpose: AllowedOrigins entries must be origins such as https://app.example.com, got " + s)
		}
		origins = append(origins, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	srv := newServer(snap, &o.Server, true)
	get := func(*http.Request) *mcp.Server { return srv.mcp }
	h := &Handler{
		stateless: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			Stateless:                    true,
			Logger:                       srv.logger,
			MaxRequestBodyBytes:          o.MaxBodyBytes,
			PropagateRequestCancellation: true,
		}),
		stateful: mcp.NewStreamableHTTPHandler(get, &mcp.StreamableHTTPOptions{
			EventStore:          mcp.NewMemoryEventStore(nil),
			Logger:              srv.logger,
			MaxRequestBodyBytes: o.MaxBodyBytes,
		}),
		origins: origins,
		maxBody: o.MaxBodyBytes,
		logger:  srv.logger,
	}
	h.h = http.HandlerFunc(h.route)
	if o.Tokens != nil {
		h.h = auth.RequireBearerToken(o.Tokens, nil)(h.h)
	}
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin, r) {
		writeRPCError(w, http.StatusForbidden, jsonrpc.CodeInvalidRequest, "origin not allowed")
		return
	}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
		r.Body.Close()
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest, "request body too large")
				return
			}
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "cannot read the request body")
			return
		}
		if !json.Valid(body) {
			writeRPCError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "the request body is not valid JSON")
			return
		}
		if id, ok := taskAugmented(body); ok {
			writeRPCResponse(w, id, jsonrpc.CodeInvalidParams, "task-augmented tools/call is not supported: this server runs no tasks")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	h.h.ServeHTTP(w, r)
}

// route sends 2026-07-28 requests to the stateless handler and handshake-era
// requests (no version header, as on initialize, or a legacy version) to the
// stateful one.
func (h *Handler) route(w http.ResponseWriter, r *http.Request) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && v >= modernVersion {
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.stateful.ServeHTTP(w, r)
}

func (h *Handler) originAllowed(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, r.Host) {
		return true // same origin
	}
	return slices.Contains(h.origins, strings.ToLower(u.Scheme+"://"+u.Host))
}

// taskAugmented reports whether body is a tools/call carrying params.task,
// and its id.
func taskAugmented(body []byte) (json.RawMessage, bool) {
	if !bytes.Contains(body, []byte(`"task"`)) {
		return nil, false // the common case, without decoding
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Task json.RawMessage `json:"task"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.Method != "tools/call" || msg.Params.Task == nil || msg.ID == nil {
		return nil, false
	}
	return msg.ID, true
}

func writeRPCError(w http.ResponseWriter, status int, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg},
	})
}

func writeRPCResponse(w http.ResponseWriter, id json.RawMessage, code int64, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": msg},
	})
}
