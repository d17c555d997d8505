package mcpimport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP Go SDK v1.8.0 decodes every tools/call answer into a
// CallToolResult, which has no place for a task handle: a CreateTaskResult's
// taskId is dropped before CallTool returns, and the SDK lets no custom
// method replace tools/call. So a session that follows remote tasks
// ([ConnectOptions].Tasks) keeps a copy of the raw answer of each tools/call
// that declared the extension, one layer below the SDK: in the connection
// for message transports (stdio, command, in-memory), in the HTTP client for
// the streamable HTTP transport (whose connection cannot be wrapped: the
// SDK talks to it through an unexported interface). The call asks for the
// copy by putting a *capture in the request's context; nothing else is
// copied. See ADR 25.

// capture receives the raw result of one tools/call, up to limit bytes.
type capture struct {
	limit int

	mu        sync.Mutex
	raw       json.RawMessage
	oversized bool
	body      bytes.Buffer // HTTP: the response body as the SDK read it, bounded
}

type captureKey struct{}

// taskNameKey carries the task id a tasks/get or tasks/cancel is about, for
// the Mcp-Name header taskRoundTripper sets.
type taskNameKey struct{}

func withTaskName(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, taskNameKey{}, id)
}

func withCapture(ctx context.Context, c *capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

func captureFrom(ctx context.Context) *capture {
	c, _ := ctx.Value(captureKey{}).(*capture)
	return c
}

func (c *capture) record(result json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(result) > c.limit {
		c.oversized = true
		return
	}
	c.raw = bytes.Clone(result)
}

// result returns the raw result captured, and whether it was over the limit.
func (c *capture) result() (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw == nil && !c.oversized && c.body.Len() > 0 {
		c.raw, c.oversized = resultFromBody(c.body.Bytes(), c.limit)
	}
	return c.raw, c.oversized
}

// taskTransport is a transport whose connection captures tools/call answers.
type taskTransport struct{ mcp.Transport }

func (t taskTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &taskConn{Connection: conn, pending: map[jsonrpc.ID]*capture{}}, nil
}

// taskConn hands each captured call's response to its capture.
type taskConn struct {
	mcp.Connection

	mu      sync.Mutex
	pending map[jsonrpc.ID]*capture
}

func (c *taskConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() && req.Method == "tools/call" {
		if cp := captureFrom(ctx); cp != nil {
			c.mu.Lock()
			c.pending[req.ID] = cp
			c.mu.Unlock()
			// A response that never comes (the call gave up) leaves nothing behind.
			context.AfterFunc(ctx, func() {
				c.mu.Lock()
				delete(c.pending, req.ID)
				c.mu.Unlock()
			})
		}
	}
	return c.Connection.Write(ctx, msg)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if res, ok := msg.(*jsonrpc.Response); ok && err == nil {
		c.mu.Lock()
		cp := c.pending[res.ID]
		delete(c.pending, res.ID)
		c.mu.Unlock()
		if cp != nil && res.Error == nil {
			cp.record(res.Result)
		}
	}
	return msg, err
}

// taskRoundTripper keeps a bounded copy of the body of each captured
// tools/call POST, as the SDK reads it.
type taskRoundTripper struct{ base http.RoundTripper }

func (rt taskRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if id, ok := req.Context().Value(taskNameKey{}).(string); ok && req.Method == http.MethodPost && req.Header.Get("Mcp-Name") == "" {
		// SEP-2663 routes tasks/* requests by Mcp-Name, which must name the
		// task; the SDK sets it only for the methods it knows.
		req = req.Clone(req.Context())
		req.Header.Set("Mcp-Name", id)
	}
	cp := captureFrom(req.Context())
	if cp != nil && req.Method == http.MethodPost {
		// Each POST's answer replaces the one before: the SDK client
		// retries a call that asked (an input-required result) on the same
		// context, and the retry's answer is the call's.
		cp.mu.Lock()
		cp.body.Reset()
		cp.raw, cp.oversized = nil, false
		cp.mu.Unlock()
	}
	resp, err := rt.base.RoundTrip(req)
	if err != nil || cp == nil || req.Method != http.MethodPost {
		return resp, err
	}
	resp.Body = &teeBody{ReadCloser: resp.Body, cp: cp}
	return resp, nil
}

type teeBody struct {
	io.ReadCloser
	cp *capture
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.cp.mu.Lock()
		// Room for the framing around a result at the limit; past it, the
		// result cannot fit.
		if room := 2*b.cp.limit + 4096 - b.cp.body.Len(); room >= n {
			b.cp.body.Write(p[:n])
		} else {
			b.cp.oversized = true
		}
		b.cp.mu.Unlock()
	}
	return n, err
}

// resultFromBody finds the result of the JSON-RPC response in an HTTP body:
// one JSON message, or the data of server-sent events.
func resultFromBody(body []byte, limit int) (json.RawMessage, bool) {
	var datas [][]byte
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '{' {
		datas = append(datas, trimmed)
	} else {
		var data bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), len(body)+1)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data:"):
				if data.Len() > 0 {
					data.WriteByte('\n')
				}
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			case line == "":
				if data.Len() > 0 {
					datas = append(datas, bytes.Clone(data.Bytes()))
					data.Reset()
				}
			}
		}
		if data.Len() > 0 {
			datas = append(datas, data.Bytes())
		}
	}
	for _, d := range datas {
		var msg struct {
			Result json.RawMessage `json:"result"`
		}
		if json.Unmarshal(d, &msg) == nil && msg.Result != nil {
			if len(msg.Result) > limit {
				return nil, true
			}
			return msg.Result, false
		}
	}
	return nil, false
}

// withTaskCapture returns transport so that its tools/call answers can be
// captured.
func withTaskCapture(transport mcp.Transport) mcp.Transport {
	st, ok := transport.(*mcp.StreamableClientTransport)
	if !ok {
		return taskTransport{transport}
	}
	cp := *st
	hc := http.DefaultClient
	if st.HTTPClient != nil {
		hc = st.HTTPClient
	}
	c := *hc
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = taskRoundTripper{base: base}
	cp.HTTPClient = &c
	return &cp
}
