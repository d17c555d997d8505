package wire

import (
	"encoding/json"
	"net/http"
)

// WriteNoIDError writes a JSON-RPC error response without an id (null),
// as for a body that could not be read as a request.
func WriteNoIDError(w http.ResponseWriter, status int, code int64, msg string) {
	WriteError(w, status, nil, code, msg)
}

// WriteError writes a JSON-RPC error response; id nil is null.
func WriteError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   any             `json:"error"`
	}{"2.0", id, struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
}
