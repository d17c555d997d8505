package hotspots

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// pingMessage is the smallest request the SDK handles.
const pingMessage = `{"jsonrpc":"2.0","id":1,"method":"ping"}`

// callMessage returns a tools/call request whose only argument is a string
// of n bytes, so the message grows with n and nothing else changes.
func callMessage(n int) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"s":%q}}}`, strings.Repeat("x", n))
}

// envelope is a JSON-RPC message shape for the encoding/json baseline: the
// same work the SDK's decode does (split off params, read the method), with
// the standard library.
type envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// decodeCases are the messages of BenchmarkDecodeMessage, smallest first.
func decodeCases() []struct {
	name string
	data []byte
} {
	cases := []struct {
		name string
		data []byte
	}{{"ping", []byte(pingMessage)}}
	for _, n := range []int{16, 1 << 10, 16 << 10, 64 << 10} {
		cases = append(cases, struct {
			name string
			data []byte
		}{fmt.Sprintf("call/args=%dB", n), callMessage(n)})
	}
	return cases
}

// BenchmarkDecodeMessage decodes one JSON-RPC message with the SDK's public
// jsonrpc.DecodeMessage, which every transport calls on every incoming
// message, and the same bytes with encoding/json for comparison.
//
// The SDK's internal json.Unmarshal wraps the bytes it already holds in a
// reader and decodes them with a new segmentio json.Decoder, whose first
// read allocates a 32 KiB buffer. DecodeMessage unmarshals twice for a
// request (the envelope, then the method string), so B/op stays at about
// 64 KiB from a 40-byte ping to a 16 KiB call, and only grows past that
// when the buffer has to double. encoding/json's B/op follows the message
// size.
func BenchmarkDecodeMessage(b *testing.B) {
	for _, c := range decodeCases() {
		b.Run("sdk/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jsonrpc.DecodeMessage(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("encoding-json/"+c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				var e envelope
				if err := json.Unmarshal(c.data, &e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeCases checks that the benchmark's messages are requests the SDK
// accepts, with the method the benchmark names.
func TestDecodeCases(t *testing.T) {
	for _, c := range decodeCases() {
		msg, err := jsonrpc.DecodeMessage(c.data)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("%s: decoded %T, want *jsonrpc.Request", c.name, msg)
		}
		if want := strings.SplitN(c.name, "/", 2)[0]; want == "call" && req.Method != "tools/call" || want == "ping" && req.Method != "ping" {
			t.Errorf("%s: method %q", c.name, req.Method)
		}
	}
}
