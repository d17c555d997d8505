package mcpimport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agnara-go/agnara/execution"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fast path against the SDK client on the answers of an upstream that
// says anything at all: a test server answers server/discover as the SDK's
// stateless handler does and every tools/call with a given status, content
// type and body ("@ID@" in it becomes the request's id), and a session of
// each path calls through it. Both must return the same result, as the
// import layer sees it, or fail with the same reason.

// answerServer serves one canned tools/call answer.
type answerServer struct {
	*httptest.Server
	status int
	ctype  string
	body   []byte
}

func newAnswerServer(t testing.TB, status int, ctype string, body []byte) *answerServer {
	t.Helper()
	upstream := mcp.NewServer(&mcp.Implementation{Name: "answers", Version: "1"}, nil)
	upstream.AddTool(&mcp.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "unreached"}}}, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return upstream }, &mcp.StreamableHTTPOptions{Stateless: true})
	a := &answerServer{status: status, ctype: ctype, body: body}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Method") != "tools/call" {
			sdk.ServeHTTP(w, r)
			return
		}
		req, _ := io.ReadAll(r.Body)
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(req, &msg)
		if a.ctype != "" {
			w.Header().Set("Content-Type", a.ctype)
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(bytes.ReplaceAll(a.body, []byte("@ID@"), msg.ID))
	}))
	t.Cleanup(a.Close)
	return a
}

// outcome is what one call came to, at the SDK client's surface and as
// the import layer projects it.
type outcome struct {
	Reason     execution.Reason // the call's failure, as classify names it; "" on success
	Result     *mcp.CallToolResult
	Wire       string // the result as the SDK encodes it
	NeedsInput bool
	Envelope   string
	Projected  execution.Reason
}

// projector is an imported tool, for the projection of results.
func projector(t testing.TB) *tool {
	t.Helper()
	limits, _ := Limits{}.resolve()
	c := &Catalog{limits: limits}
	def := &mcp.Tool{InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}
	b := Binding{Name: "t", Title: "T", NoScopeValidator: true}
	tl, errs := newTool(c, b.selection("t"), def, limits)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return tl
}

func outcomeOf(ctx context.Context, tl *tool, res *mcp.CallToolResult, err error) outcome {
	if err != nil {
		return outcome{Reason: classify(ctx, err)}
	}
	o := outcome{Result: res, NeedsInput: res.NeedsInput()}
	if b, err := json.Marshal(res); err == nil {
		o.Wire = string(b)
	} else {
		o.Wire = "unencodable: " + err.Error()
	}
	env, code := tl.project(res)
	if b, err := json.Marshal(env); err == nil {
		o.Envelope = string(b)
	} else {
		o.Envelope = "unencodable: " + err.Error()
	}
	o.Projected = code
	return o
}

// fastPair connects a session that posts calls itself and one that leaves
// them to the SDK client to url, at 2026-07-28.
func fastPair(t testing.TB, url string, opts *mcp.StreamableClientTransport) (fast, sdk *Session) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(disable bool) *Session {
		tr := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
		if opts != nil {
			cp := *opts
			cp.Endpoint = url
			tr = &cp
		}
		s, err := Connect(ctx, "answers", tr, &ConnectOptions{DisableFastPath: disable})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	fast, sdk = connect(false), connect(true)
	if fast.fast == nil || sdk.fast != nil {
		t.Fatalf("fast path set up: %v and %v, want a fast session and an SDK one", fast.fast != nil, sdk.fast != nil)
	}
	return fast, sdk
}

// bothCall calls tool t with args on both sessions at once, each within
// wait, and returns their outcomes.
func bothCall(tl *tool, fast, sdk *Session, name string, args json.RawMessage, wait time.Duration) (f, s outcome) {
	var wg sync.WaitGroup
	run := func(sess *Session, into *outcome) {
		defer wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		res, err := sess.ClientSession().CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		*into = outcomeOf(ctx, tl, res, err)
	}
	wg.Add(2)
	go run(fast, &f)
	go run(sdk, &s)
	wg.Wait()
	return f, s
}

// sameAnswer calls through both paths on fresh sessions to the server and
// reports how their outcomes differ ("" when they do not). A call that
// waits for an answer that cannot come ends at a short deadline; when only
// one side timed out, both are asked again with a generous one, so that a
// loaded machine is not taken for a difference.
//
// It also requires the fast path to have taken the call: posted it, and
// answered it unless the answer asked for input, which goes to the SDK.
func sameAnswer(t testing.TB, tl *tool, srv *answerServer, transport *mcp.StreamableClientTransport) (diff string, fast outcome) {
	t.Helper()
	for _, wait := range []time.Duration{time.Second, 20 * time.Second} {
		fs, ss := fastPair(t, srv.URL, transport)
		fast, s := bothCall(tl, fs, ss, "t", json.RawMessage(`{}`), wait)
		switch taken, passed := fs.fastStats(); {
		case taken == 1 && passed == 0:
		case taken == 0 && passed == 1 && fs.fast.resent.Load() == 1:
		default:
			return fmt.Sprintf("the fast path answered %d calls and passed %d on (%d asked again), want one answered", taken, passed, fs.fast.resent.Load()), fast
		}
		// reflect.DeepEqual first: cmp.Diff compares each element of a
		// slice twice, which deeply nested values make exponential.
		// Where they differ, the results are compared in their wire form,
		// for the same reason.
		diff = ""
		if !reflect.DeepEqual(s, fast) {
			a, b := s, fast
			a.Result, b.Result = nil, nil
			if diff = cmp.Diff(a, b); diff == "" {
				diff = "the results differ in their Go values, not in their wire form"
			}
		}
		if diff == "" || (fast.Reason != ReasonTimeout && s.Reason != ReasonTimeout) {
			return diff, fast
		}
	}
	return diff, fast
}

// answerCases are hand-written answers: the commonest ones first, then
// every way the SDK client reads an answer differently.
var answerCases = []struct {
	name   string
	status int
	ctype  string
	body   string
}{
	{"sse text", 200, "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],\"structuredContent\":{\"message\":\"hi\"},\"resultType\":\"complete\"}}\n\n"},
	{"sse agnara", 200, "text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"up\",\"version\":\"1\"}},\"content\":[{\"type\":\"text\",\"text\":\"{\\\"result\\\":{\\\"message\\\":\\\"hi\\\"}}\"}],\"structuredContent\":{\"result\":{\"message\":\"hi\"}},\"resultType\":\"complete\"}}\n\n"},
	{"json text", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"hi"}]}}`},
	{"json charset", 200, "application/json; charset=utf-8", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"hi"}],"resultType":"complete"}}`},
	{"no content", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{}}`},
	{"null content", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":null}}`},
	{"unicode", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"h\u00e9 \u2028 \ud83d\ude00 \" \\ </script> ` + "é 😀" + `"}]}}`},
	{"lone surrogate", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"\ud800"}]}}`},
	{"invalid utf-8", 200, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}}"},
	{"structured numbers", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":{"a":9007199254740993,"b":1e300,"c":-0,"d":[1.5,true,null,"x"],"e":{"f":{}}}}}`},
	{"structured array", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":[1,2]}}`},
	{"structured null", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":null}}`},
	{"number too large", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":{"a":1e400}}}`},
	{"is error", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"isError":true,"content":[{"type":"text","text":"boom"}]}}`},
	{"meta", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"_meta":{"k":[1,{"x":null}]},"content":[{"type":"text","text":"hi","_meta":{"a":1},"annotations":{"audience":["user"],"priority":0.5}}]}}`},
	{"meta not an object", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"_meta":"x","content":[]}}`},
	{"meta empty", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"_meta":{},"content":[]}}`},
	{"meta null", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"_meta":null,"content":[]}}`},
	{"meta spaced, escaped, repeated", 200, "application/json", "{\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"_meta\" : { \"a\\u00e9\" : \"\\\"q\\\"\", \"b\":{\"c:d\":[\"é\"]}, \"a\u00e9\":2 },\"content\":[]}}"},
	{"meta array", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"_meta":[1],"content":[]}}`},
	{"meta bad value", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"_meta":{"a":1e999},"content":[]}}`},
	{"image", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"image","data":"AQI=","mimeType":"image/png"}]}}`},
	{"image bad base64", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"image","data":"!!","mimeType":"image/png"}]}}`},
	{"text with bad data", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"hi","data":"!!"}]}}`},
	{"text with bad size", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"hi","size":"big"}]}}`},
	{"resource link", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"resource_link","uri":"file:///x","name":"x"}]}}`},
	{"unknown content", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"video"}]}}`},
	{"null block", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[null]}}`},
	{"content not an array", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":{"type":"text","text":"hi"}}}`},
	{"text not a string", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":5}]}}`},
	{"case of keys", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"Content":[{"type":"text","text":"hi"}],"IsError":true}}`},
	{"duplicate keys", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"a"}],"content":[{"type":"text","text":"b"}],"isError":true,"isError":false}}`},
	{"result type input_required", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}}}}`},
	{"input requests elicit", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"input_required","inputRequests":{"r":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object","properties":{}}}}}}}`},
	{"result type task", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"task","task":{"taskId":"x"}}}`},
	{"result type other", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":"later","content":[]}}`},
	{"result type number", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"resultType":5,"content":[]}}`},
	{"result null", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":null}`},
	{"result a string", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":"ok"}`},
	{"no result", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@}`},
	{"error invalid params", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32602,"message":"bad"}}`},
	{"error internal", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32603,"message":"oops","data":{"x":1}}}`},
	{"error and result", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[]},"error":{"code":1,"message":"both"}}`},
	{"error code a string", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":"x","message":"bad"}}`},
	{"id as string", 200, "application/json", `{"jsonrpc":"2.0","id":"@ID@","result":{"content":[]}}`},
	{"id with fraction", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@.7,"result":{"content":[{"type":"text","text":"hi"}]}}`},
	{"id as exponent", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@e0,"result":{"content":[{"type":"text","text":"hi"}]}}`},
	{"id missing", 200, "application/json", `{"jsonrpc":"2.0","result":{"content":[]}}`},
	{"id an object", 200, "application/json", `{"jsonrpc":"2.0","id":{},"result":{"content":[]}}`},
	{"version missing", 200, "application/json", `{"id":@ID@,"result":{"content":[]}}`},
	{"trailing garbage", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"hi"}]}} {{{ ` + "\xff"},
	{"truncated", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[`},
	{"empty json", 200, "application/json", ``},
	{"too deep", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}}`},
	{"deep but within", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":` + strings.Repeat("[", 990) + strings.Repeat("]", 990) + `}}`},
	{"deep at the bound", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":` + strings.Repeat("[", 998) + strings.Repeat("]", 998) + `}}`},
	{"deep one past the bound", 200, "application/json", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[],"structuredContent":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}}`},
	{"sse two data lines", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\ndata: \"result\":{\"content\":[]}}\n\n"},
	{"sse crlf", 200, "text/event-stream", "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\r\n\r\n"},
	{"sse comment and priming", 200, "text/event-stream", ": hello\n\nid: 0\ndata:\n\nretry: 10\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse other event name", 200, "text/event-stream", "event: ping\ndata: {\"bad\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse notification first", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse server request first", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"ping\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse other response first", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":987654,\"result\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse no final newline", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}"},
	{"sse ends without answer", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"},
	{"sse ends with id", 200, "text/event-stream", "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n"},
	{"sse empty", 200, "text/event-stream", ""},
	{"sse malformed line", 200, "text/event-stream", "nonsense\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse bad data", 200, "text/event-stream", "data: {nope\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"sse answer then garbage", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\nnonsense\n\n"},
	{"sse error answer", 200, "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"error\":{\"code\":-32602,\"message\":\"no\"}}\n\n"},
	{"sse content type params", 200, "text/event-stream; charset=utf-8", "data: {\"jsonrpc\":\"2.0\",\"id\":@ID@,\"result\":{\"content\":[]}}\n\n"},
	{"json wrong id", 200, "application/json", `{"jsonrpc":"2.0","id":987654,"result":{"content":[]}}`},
	{"json request instead", 200, "application/json", `{"jsonrpc":"2.0","id":5,"method":"ping"}`},
	{"json notification instead", 200, "application/json", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`},
	{"status 202", 202, "", ``},
	{"status 204", 204, "", ``},
	{"unknown content type", 200, "text/plain", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[]}}`},
	{"no content type", 200, "", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[]}}`},
	{"bad content type", 200, "application/json; =", `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[]}}`},
	{"400 with error", 400, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32602,"message":"bad"}}`},
	{"404 with error", 404, "application/json", `{"jsonrpc":"2.0","id":null,"error":{"code":-32601,"message":"no such method"}}`},
	{"400 plain", 400, "text/plain", `bad request`},
	{"401", 401, "text/plain", `who are you`},
	{"403 with error", 403, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32001,"message":"forbidden"}}`},
	{"500 with error", 500, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32603,"message":"boom"}}`},
	{"502", 502, "text/plain", `bad gateway`},
	{"503", 503, "", ``},
	{"429", 429, "application/json", `{"jsonrpc":"2.0","id":@ID@,"error":{"code":-32000,"message":"slow down"}}`},
	{"301", 301, "text/plain", ``},
}

// TestFastCallAnswers: for every hand-written answer, the fast path and the
// SDK client come to the same outcome.
func TestFastCallAnswers(t *testing.T) {
	tl := projector(t)
	for _, tc := range answerCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newAnswerServer(t, tc.status, tc.ctype, []byte(tc.body))
			if diff, _ := sameAnswer(t, tl, srv, nil); diff != "" {
				t.Errorf("fast path vs SDK client (-sdk +fast):\n%s", diff)
			}
		})
	}
}

// TestFastCallEventLimit: an event over the transport's MaxEventSize fails
// the call on both paths, and one within it does not.
func TestFastCallEventLimit(t *testing.T) {
	tl := projector(t)
	big := `{"jsonrpc":"2.0","id":@ID@,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 2000) + `"}]}}`
	for _, max := range []int{1000, 4000, -1} {
		srv := newAnswerServer(t, 200, "text/event-stream", []byte("data: "+big+"\n\n"))
		diff, f := sameAnswer(t, tl, srv, &mcp.StreamableClientTransport{MaxRetries: -1, MaxEventSize: max})
		if diff != "" {
			t.Errorf("MaxEventSize %d (-sdk +fast):\n%s", max, diff)
		}
		if failed := f.Reason != ""; failed != (max == 1000) {
			t.Errorf("MaxEventSize %d: reason %q", max, f.Reason)
		}
	}
}

// FuzzFastCallAnswers: whatever an upstream answers a tools/call with, the
// fast path and the SDK client come to the same result or the same
// failure reason. The seed corpus is answerCases.
func FuzzFastCallAnswers(f *testing.F) {
	types := []string{"application/json", "text/event-stream", "", "text/plain", "application/json; charset=utf-8"}
	for _, tc := range answerCases {
		ct := 0
		for i, s := range types {
			if s == tc.ctype {
				ct = i
			}
		}
		f.Add(uint16(tc.status), uint8(ct), []byte(tc.body))
	}
	tl := projector(f)
	f.Fuzz(func(t *testing.T, status uint16, ct uint8, body []byte) {
		code := 200 + int(status)%400
		if code >= 300 && code < 400 {
			code = 200 // redirects are the HTTP client's, on both paths alike
		}
		srv := newAnswerServer(t, code, types[int(ct)%len(types)], body)
		if diff, _ := sameAnswer(t, tl, srv, nil); diff != "" {
			t.Errorf("status %d, %q, body %q: fast path vs SDK client (-sdk +fast):\n%s", code, types[int(ct)%len(types)], body, diff)
		}
	})
}
