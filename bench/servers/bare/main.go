// Command bare answers the benchmark's tools with a hand-written net/http
// JSON-RPC handler and no MCP library: the ceiling the MCP servers are
// measured against, not a conforming MCP server. It knows just enough to
// serve the load generator in both eras: initialize (minting a session id
// that later requests must carry), notifications (202), tools/call of echo
// and of the realistic workload's quote (a JSON response with structured
// content and its text copy) and DELETE of a session. It validates nothing
// against a schema: quote's arguments are decoded into the workload's Go
// types with encoding/json and priced, and that is all.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/agnara-go/agnara/bench/internal/realistic"
	"github.com/agnara-go/agnara/bench/internal/serve"
)

const modernVersion = "2026-07-28"

type request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string    `json:"name"`
		Arguments arguments `json:"arguments"`
	} `json:"params"`
}

// arguments holds either tool's: echo's message, or quote's order, whose
// fields the embedded pointer promotes (allocated only when one is present),
// so that an echo call is decoded as cheaply as before quote was added.
type arguments struct {
	Message *string `json:"message"`
	*realistic.Request
}

type echoOut struct {
	Message string `json:"message"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type callResult struct {
	Content           []textContent `json:"content"`
	StructuredContent echoOut       `json:"structuredContent"`
}

type quoteResult struct {
	Content           []textContent      `json:"content"`
	StructuredContent realistic.Envelope `json:"structuredContent"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type bare struct {
	mu       sync.Mutex
	sessions map[string]bool
}

func handler() (http.Handler, error) { return &bare{sessions: map[string]bool{}}, nil }

func (b *bare) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		b.mu.Lock()
		delete(b.sessions, r.Header.Get("Mcp-Session-Id"))
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil || req.JSONRPC != "2.0" {
		reply(w, http.StatusBadRequest, response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: &rpcError{-32700, "parse error"}})
		return
	}
	if req.ID == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	modern := r.Header.Get("Mcp-Protocol-Version") >= modernVersion
	if req.Method == "initialize" && !modern {
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		sid := hex.EncodeToString(id)
		b.mu.Lock()
		b.sessions[sid] = true
		b.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Result: map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "bare", "version": "1"},
		}})
		return
	}
	if !modern {
		b.mu.Lock()
		ok := b.sessions[r.Header.Get("Mcp-Session-Id")]
		b.mu.Unlock()
		if !ok {
			reply(w, http.StatusNotFound, response{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{-32600, "unknown session"}})
			return
		}
	}
	switch {
	case req.Method != "tools/call":
		reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{-32601, "method not found"}})
	case req.Params.Name == realistic.ToolName:
		if req.Params.Arguments.Request == nil {
			reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{-32602, "an order is required"}})
			return
		}
		out := realistic.Envelope{Result: realistic.Compute(*req.Params.Arguments.Request)}
		text, _ := json.Marshal(out)
		reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Result: quoteResult{
			Content:           []textContent{{Type: "text", Text: string(text)}},
			StructuredContent: out,
		}})
	case req.Params.Name != "echo":
		reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{-32602, "unknown tool"}})
	case req.Params.Arguments.Message == nil:
		reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Error: &rpcError{-32602, "message is required"}})
	default:
		out := echoOut{Message: *req.Params.Arguments.Message}
		text, _ := json.Marshal(out)
		reply(w, http.StatusOK, response{JSONRPC: "2.0", ID: req.ID, Result: callResult{
			Content:           []textContent{{Type: "text", Text: string(text)}},
			StructuredContent: out,
		}})
	}
}

func reply(w http.ResponseWriter, status int, resp response) {
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func main() { serve.Main(handler) }
