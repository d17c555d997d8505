package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
)

// recorded is one request of a recorded conformance run: what the fast
// path's differential test replays (testdata/traffic.jsonl).
type recorded struct {
	Header map[string][]string `json:"header"`
	Body   string              `json:"body"`
}

// recordedHeaders are the request headers a recording keeps: the ones the
// handler reads.
var recordedHeaders = []string{"Content-Type", "Accept", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Last-Event-Id", "Origin", "Authorization"}

// recorder passes every request to h, and appends each 2026-07-28 POST to
// w as a JSON line first.
func recorder(w io.Writer, h http.Handler) http.Handler {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") >= "2026-07-28" {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(rw, "cannot read the body", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec := recorded{Header: map[string][]string{}, Body: string(body)}
			for _, k := range recordedHeaders {
				if v := r.Header.Values(k); len(v) > 0 {
					rec.Header[k] = v
				}
			}
			mu.Lock()
			_ = enc.Encode(rec)
			mu.Unlock()
		}
		h.ServeHTTP(rw, r)
	})
}
