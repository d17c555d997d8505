package mcpexpose_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/mcpexpose"
)

// askCaps is what a client that can be asked everything declares.
const askCaps = `{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{"listChanged":true}}`

// answers is a scripted client: the result (or error) it answers each
// question with, by method; a method it has no answer for fails the test.
// A key "before <method>" names a hook, run with the question's id before
// the answer (answers.before).
type answers map[string]string

// with returns a copy of a answering method with result; a key "drop
// after <method>" has the client's stream drop after it answers method,
// and the client resume it with a GET (converse).
func (a answers) with(method, result string) answers {
	cp := answers{method: result}
	for k, v := range a {
		if k != method {
			cp[k] = v
		}
	}
	return cp
}

// hooks are the functions answers.before registers, by name.
var hooks = map[string]func(id string){}

// before returns a with f run, with the question's id, before a question
// of method is answered.
func (a answers) before(method string, f func(id string)) answers {
	name := fmt.Sprintf("hook-%d", len(hooks))
	hooks[name] = f
	cp := answers{"before " + method: name}
	for k, v := range a {
		cp[k] = v
	}
	return cp
}

var (
	maskAskID        = regexp.MustCompile(`^\{"jsonrpc":"2.0","id":[^,]*,"method"`)
	maskResumedAskID = regexp.MustCompile(`(?m)^data: \{"jsonrpc":"2.0","id":[^,]*,"method"`)
)

// converse POSTs body, a tools/call, on the session and answers each
// question the server asks on the call's stream from script, POSTing each
// answer to the session as a JSON-RPC response, until the call's answer
// comes. It returns the transcript: each event's name and data (the
// server's request ids, stream ids and log times masked; event indexes
// kept), and the status of each answer's POST; and the id of the call's
// first event, for a resume.
func (c *sessionConn) converse(t *testing.T, rev, body string, script answers) (transcript []string, first string) {
	t.Helper()
	resp := c.do(t, "POST", rev, body)
	defer func() { resp.Body.Close() }()
	transcript = append(transcript, fmt.Sprintf("status %d %s", resp.StatusCode, resp.Header.Get("Content-Type")))
	r := bufio.NewReader(resp.Body)
	var name, id, data, lastID string
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if err != io.EOF {
				t.Fatalf("reading the call's stream: %v", err)
			}
			if data != "" || name != "" {
				transcript = append(transcript, "unterminated "+name+" "+data)
			}
			return transcript, first
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
			continue
		case strings.HasPrefix(line, "id: "):
			id = line[len("id: "):]
			if first == "" {
				first = id
			}
			lastID = id
			continue
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
			continue
		case line != "":
			transcript = append(transcript, "line "+line)
			continue
		}
		// The end of an event.
		masked := maskStream.ReplaceAllString("id: "+id, "id: …_")
		if id == "" {
			masked = "no id"
		}
		transcript = append(transcript, name+" "+masked+" "+mask(maskAskID.ReplaceAllString(data, `{"jsonrpc":"2.0","id":…,"method"`), http.Header{}))
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if data != "" && json.Unmarshal([]byte(data), &msg) == nil && msg.ID != nil && msg.Method != "" {
			result, ok := script[msg.Method]
			if !ok {
				t.Fatalf("the server asked %s, which the script does not answer", msg.Method)
			}
			if hook, ok := script["before "+msg.Method]; ok {
				hooks[hook](string(msg.ID))
			}
			switch result {
			case "!cancel":
				// The client gives up on its call instead of answering.
				var call struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.Unmarshal([]byte(body), &call)
				x := c.send(t, wireRequest{name: "cancel", header: sessionHeader(rev), body: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + string(call.ID) + `,"reason":"gave up"}}`})
				transcript = append(transcript, fmt.Sprintf("cancelled the call: %d %q", x.status, x.body))
				name, id, data = "", "", ""
				continue
			case "!delete":
				// The client ends its session instead of answering.
				dr := c.do(t, "DELETE", rev, "")
				dr.Body.Close()
				transcript = append(transcript, fmt.Sprintf("deleted the session: %d", dr.StatusCode))
				name, id, data = "", "", ""
				continue
			}
			field := `"result"`
			if strings.HasPrefix(result, "error:") {
				field, result = `"error"`, strings.TrimPrefix(result, "error:")
			}
			x := c.send(t, wireRequest{name: "answer", header: sessionHeader(rev), body: `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,` + field + `:` + result + `}`})
			transcript = append(transcript, fmt.Sprintf("answered %s: %d %q", msg.Method, x.status, x.body))
			if _, probe := script["probe after "+msg.Method]; probe {
				// A GET that resumes the stream while the client still
				// reads it.
				pr := c.resumeStream(t, rev, lastID)
				pb, _ := io.ReadAll(pr.Body)
				pr.Body.Close()
				transcript = append(transcript, fmt.Sprintf("resumed while reading: %d %s %q", pr.StatusCode, pr.Header.Get("Content-Type"), pb))
			}
			if _, drop := script["drop after "+msg.Method]; drop {
				// The client's stream drops; it resumes it with a GET
				// from the last event it read, as clients do, and reads
				// the rest of the call there.
				resp.Body.Close()
				// Until the server has seen the stream drop, it refuses
				// the resume (409): the client tries again.
				for tries := 0; ; tries++ {
					resp = c.resumeStream(t, rev, lastID)
					if resp.StatusCode != http.StatusConflict || tries == 500 {
						break
					}
					resp.Body.Close()
					time.Sleep(10 * time.Millisecond)
				}
				transcript = append(transcript, fmt.Sprintf("resumed from %s: %d %s", maskStream.ReplaceAllString("id: "+lastID, "id: …_"), resp.StatusCode, resp.Header.Get("Content-Type")))
				r = bufio.NewReader(resp.Body)
			}
		}
		name, id, data = "", "", ""
	}
}

// TestSessionEdgeAsksDifferential runs conversations — a call whose tool
// asks its client a form, a model and the roots, and one that asks for a
// confirmation — on a handshake-era session of a handler whose edge
// answers them and of one without (DisableFastPath), at each handshake
// revision, with a scripted client that answers each question, and
// requires the same transcript: every event of the call's stream, byte
// for byte (the server's request ids, stream ids and log times masked),
// and the same status for every answer POSTed. A GET resuming the call's
// stream after its first event must replay the same events too.
func TestSessionEdgeAsksDifferential(t *testing.T) {
	accept := answers{
		"elicitation/create":     `{"action":"accept","content":{"name":"Ada","team":"red"}}`,
		"sampling/createMessage": `{"role":"assistant","model":"m-1","content":{"type":"text","text":"a <b> line"},"stopReason":"endTurn"}`,
		"roots/list":             `{"roots":[{"uri":"file:///work","name":"work"},{"uri":"file:///home"}]}`,
	}
	with := func(method, result string) answers { return accept.with(method, result) }
	interview := `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"interview","arguments":{}}}`
	signin := `{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"signin","arguments":{}}}`
	cases := []struct {
		name, body string
		script     answers
	}{
		{"accepted", interview, accept},
		{"with-progress", `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"interview","arguments":{},"_meta":{"progressToken":"p"}}}`, accept},
		{"default-team", interview, with("elicitation/create", `{"action":"accept","content":{"name":"Ada"}}`)},
		{"declined", interview, with("elicitation/create", `{"action":"decline"}`)},
		{"cancelled", interview, with("elicitation/create", `{"action":"cancel"}`)},
		{"too-short", interview, with("elicitation/create", `{"action":"accept","content":{"name":"A"}}`)},
		{"not-an-option", interview, with("elicitation/create", `{"action":"accept","content":{"name":"Ada","team":"green"}}`)},
		{"not-a-form", interview, with("elicitation/create", `{"action":"accept","content":"Ada"}`)},
		{"no-action", interview, with("elicitation/create", `{}`)},
		{"elicitation-error", interview, with("elicitation/create", `error:{"code":-32600,"message":"user <closed> it"}`)},
		{"model-error", interview, with("sampling/createMessage", `error:{"code":-1,"message":"no model"}`)},
		{"two-blocks", interview, with("sampling/createMessage", `{"role":"assistant","model":"m","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`)},
		{"no-content", interview, with("sampling/createMessage", `{"role":"assistant","model":"m"}`)},
		{"roots-not-a-list", interview, with("roots/list", `{"roots":"x"}`)},
		{"roots-null", interview, with("roots/list", `null`)},
		{"resumed-while-read", interview, with("probe after elicitation/create", "")},
		{"resumed", interview, with("drop after elicitation/create", "")},
		{"resumed-twice", interview, with("drop after elicitation/create", "").with("drop after sampling/createMessage", "")},
		{"call-cancelled", interview, with("sampling/createMessage", "!cancel")},
		{"url-accepted", signin, answers{"elicitation/create": `{"action":"accept"}`}},
		{"url-declined", signin, answers{"elicitation/create": `{"action":"decline"}`}},
		{"url-cancelled", signin, answers{"elicitation/create": `{"action":"cancel"}`}},
		{"url-resumed", signin, answers{"elicitation/create": `{"action":"accept"}`, "drop after elicitation/create": ""}},
		{"confirmed", `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"purge","arguments":{"id":"r1"}}}`, answers{"elicitation/create": `{"action":"accept","content":{"confirm":true}}`}},
		{"not-confirmed", `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"purge","arguments":{"id":"r1"}}}`, answers{"elicitation/create": `{"action":"accept","content":{"confirm":false}}`}},
	}
	configs := []struct {
		name  string
		authz string
		opts  mcpexpose.HandlerOptions
	}{
		{"anonymous", "", mcpexpose.HandlerOptions{}},
		{"tokens", "Bearer writer", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}}},
		{"logs", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{ForwardLogs: true}}},
		// Calls that may be polled, answered before they are.
		{"polled", "", mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{PollAfter: time.Minute}}},
	}
	for _, rev := range []string{"2025-11-25", "2025-06-18"} {
		for _, cfg := range configs {
			t.Run(rev+"/"+cfg.name, func(t *testing.T) {
				edgeApp, sdkApp := newDiffApp(t), newDiffApp(t)
				edgeH, _, edgeURL, sdkURL := servePair(t, edgeApp.snap, sdkApp.snap, cfg.opts)
				client := &http.Client{Timeout: 20 * time.Second}
				for _, tc := range cases {
					t.Run(tc.name, func(t *testing.T) {
						// A session each, on each handler.
						edge := openSessionWith(t, client, edgeURL, cfg.authz, rev, askCaps)
						sdk := openSessionWith(t, client, sdkURL, cfg.authz, rev, askCaps)
						before := edgeH.FastPathRequests()
						got, gotFirst := edge.converse(t, rev, tc.body, tc.script)
						want, wantFirst := sdk.converse(t, rev, tc.body, tc.script)
						if edgeH.FastPathRequests() != before+1 {
							t.Error("the edge did not answer the call")
						}
						if tc.name == "call-cancelled" {
							// The SDK tells the client its question is
							// withdrawn from a goroutine that races the
							// call's answer onto the stream, or not
							// (ADR 74): compared without it.
							got, want = withoutWithdrawal(got), withoutWithdrawal(want)
						}
						if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
							t.Fatalf("edge:\n%s\nsdk:\n%s", g, w)
						}
						if !strings.Contains(strings.Join(got, "\n"), `"id":…,"method"`) {
							t.Errorf("the server asked nothing:\n%s", strings.Join(got, "\n"))
						}
						if strings.HasPrefix(tc.name, "url-") {
							// Asked in url mode, with an id; told it is
							// done only when accepted.
							joined := strings.Join(got, "\n")
							asked := strings.Contains(joined, `"params":{"mode":"url","message":"Sign in to <Example> & come back","url":"`+signinURL+`","elicitationId":"…"}`)
							done := strings.Contains(joined, `{"jsonrpc":"2.0","method":"notifications/elicitation/complete","params":{"elicitationId":"…"}}`)
							if accepted := strings.HasSuffix(tc.name, "accepted") || strings.HasSuffix(tc.name, "resumed"); !asked || done != accepted {
								t.Errorf("asked in url mode: %v, told done: %v (want %v):\n%s", asked, done, accepted, joined)
							}
						}
						if rev != "2025-11-25" {
							return // no event ids to resume from
						}
						if gotFirst == "" || wantFirst == "" {
							t.Fatal("no event to resume after")
						}
						g, w := edge.resume(t, rev, gotFirst), sdk.resume(t, rev, wantFirst)
						g.body = maskResumedAskID.ReplaceAllString(g.body, `data: {"jsonrpc":"2.0","id":…,"method"`)
						w.body = maskResumedAskID.ReplaceAllString(w.body, `data: {"jsonrpc":"2.0","id":…,"method"`)
						if tc.name == "call-cancelled" {
							// The SDK's withdrawal races the answer onto
							// the stored stream too (ADR 74).
							g.body, w.body = resumedWithdrawal.ReplaceAllString(g.body, ""), resumedWithdrawal.ReplaceAllString(w.body, "")
						}
						if !g.equal(w) {
							t.Errorf("resuming after the first event:\nedge: %d %v\n%s\nsdk:  %d %v\n%s", g.status, g.header, g.body, w.status, w.header, w.body)
						}
					})
				}
				if a, b := edgeApp.calls.Load(), sdkApp.calls.Load(); a != b || a == 0 {
					t.Errorf("handlers ran %d times behind the edge, %d times behind the SDK", a, b)
				}
			})
		}
	}
}

// TestEdgeAskEndsWithItsSession deletes a session while a call the edge
// answers waits for the client's answer to its question: the DELETE is
// answered, the question fails as the SDK's fails when its connection
// closes, and the call's stream ends, with nothing more of a session that
// is gone. (The SDK's own DELETE of a session whose call waits for an
// answer waits for that call, which waits for an answer that cannot come:
// go-sdk v1.8.0 hangs there, so this is no differential test.)
func TestEdgeAskEndsWithItsSession(t *testing.T) {
	for _, rev := range []string{"2025-11-25", "2025-06-18"} {
		t.Run(rev, func(t *testing.T) {
			app := newDiffApp(t)
			h, err := mcpexpose.NewHandler(app.snap, nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			client := &http.Client{Timeout: 20 * time.Second}
			c := openSessionWith(t, client, srv.URL, "", rev, askCaps)
			got, _ := c.converse(t, rev, `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"interview","arguments":{}}}`, answers{
				"elicitation/create":     `{"action":"accept","content":{"name":"Ada"}}`,
				"sampling/createMessage": `{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`,
				"roots/list":             "!delete",
			})
			transcript := strings.Join(got, "\n")
			if !strings.Contains(transcript, "deleted the session: 204") || !strings.HasSuffix(transcript, "deleted the session: 204") {
				t.Fatalf("the DELETE was not answered, or the call wrote after its session was gone:\n%s", transcript)
			}
			if h.FastPathRequests() != 1 {
				t.Errorf("the edge answered %d requests, want the call", h.FastPathRequests())
			}
		})
	}
}

// FuzzSessionEdgeAnswers has a scripted client answer the interview tool's
// questions with arbitrary results (the form's answer and the model's, as
// JSON), on a 2025-11-25 session of a handler whose edge answers the call
// and of one without, and requires the same transcripts.
func FuzzSessionEdgeAnswers(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"action":"accept","content":{"name":"Ada","team":"red"}}`, `{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`},
		{`{"action":"accept","content":{"name":"Ada"}}`, `{"role":"assistant","model":"m","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`},
		{`{"action":"decline"}`, `{}`},
		{`{"action":"accept","content":{"name":"A","team":"green"}}`, `null`},
		{`{"action":"accept","content":"Ada"}`, `{"role":"user","content":{"type":"image","data":"aGk=","mimeType":"image/png"}}`},
		{`{"Action":"accept","content":{"name":"Ada"}}`, `{"role":"assistant","model":"m","content":{"type":"text","text":"x"},"stopReason":5}`},
		{`[]`, `"x"`},
	} {
		f.Add(seed[0], seed[1])
	}
	edgeApp, sdkApp := newDiffApp(f), newDiffApp(f)
	edgeH, _, edgeURL, sdkURL := servePair(f, edgeApp.snap, sdkApp.snap, mcpexpose.HandlerOptions{})
	client := &http.Client{Timeout: 20 * time.Second}
	const rev = "2025-11-25"
	f.Fuzz(func(t *testing.T, form, model string) {
		if !json.Valid([]byte(form)) || !json.Valid([]byte(model)) || strings.HasPrefix(form, "!") || strings.HasPrefix(model, "!") {
			return // the scripted client sends JSON-RPC responses only
		}
		script := answers{"elicitation/create": form, "sampling/createMessage": model, "roots/list": `{"roots":[]}`}
		body := `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"interview","arguments":{}}}`
		edge := openSessionWith(t, client, edgeURL, "", rev, askCaps)
		sdk := openSessionWith(t, client, sdkURL, "", rev, askCaps)
		defer edge.close(t)
		defer sdk.close(t)
		before := edgeH.FastPathRequests()
		got, _ := edge.converse(t, rev, body, script)
		want, _ := sdk.converse(t, rev, body, script)
		if edgeH.FastPathRequests() != before+1 {
			t.Error("the edge did not answer the call")
		}
		if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
			t.Fatalf("edge:\n%s\nsdk:\n%s", g, w)
		}
	})
}

// close ends the session, as a client that is done does.
func (c *sessionConn) close(t testing.TB) {
	t.Helper()
	c.do(t, "DELETE", "2025-11-25", "").Body.Close()
}

// do sends an HTTP request of method on the session, with body for a
// POST, as the session's client at revision rev.
func (c *sessionConn) do(t testing.TB, method, rev, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, c.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = sessionHeader(rev)
	req.Header.Set("Mcp-Session-Id", c.id)
	if c.authz != "" {
		req.Header.Set("Authorization", c.authz)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestEdgeQuestionsAnswerOnlyToTheirSession has others answer a question
// the edge asked on a session opened with one caller's token: another
// caller, on that session (403, the SDK's refusal of a stranger), and the
// same caller on another of its sessions (not this session's question).
// Neither answer reaches the call; the question stays open, and the
// session's own client then answers it.
func TestEdgeQuestionsAnswerOnlyToTheirSession(t *testing.T) {
	const rev = "2025-11-25"
	app := newDiffApp(t)
	h, err := mcpexpose.NewHandler(app.snap, &mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Timeout: 20 * time.Second}
	wendy := openSessionWith(t, client, srv.URL, "Bearer writer", rev, askCaps)
	other := openSessionWith(t, client, srv.URL, "Bearer writer", rev, askCaps)
	rita := &sessionConn{url: wendy.url, id: wendy.id, authz: "Bearer reader", client: client}

	var attempts []string
	got, _ := wendy.converse(t, rev, `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"interview","arguments":{}}}`, answers{
		"elicitation/create":     `{"action":"accept","content":{"name":"Ada"}}`,
		"sampling/createMessage": `{"role":"assistant","model":"m","content":{"type":"text","text":"x"}}`,
		"roots/list":             `{"roots":[]}`,
	}.before("elicitation/create", func(id string) {
		forged := `{"jsonrpc":"2.0","id":` + id + `,"result":{"action":"accept","content":{"name":"Mallory"}}}`
		for _, c := range []*sessionConn{rita, other} {
			x := c.send(t, wireRequest{name: "forged answer", header: sessionHeader(rev), body: forged})
			attempts = append(attempts, fmt.Sprint(x.status))
		}
	}))
	transcript := strings.Join(got, "\n")
	if len(attempts) != 2 || attempts[0] != "403" {
		t.Errorf("another caller's answer on the session got %v, want 403 first", attempts)
	}
	if strings.Contains(transcript, "Mallory") || !strings.Contains(transcript, `Ada of blue: x (0 roots)`) {
		t.Fatalf("the call took an answer that was not its session's:\n%s", transcript)
	}
}

var eventIndex = regexp.MustCompile(`id: …_[0-9]+`)

// withoutWithdrawal is a transcript without the notification that
// withdraws a question, and without event indexes, which it shifts.
// resumedWithdrawal is the SDK's withdrawal of a question, as an event of
// a resumed stream.
var resumedWithdrawal = regexp.MustCompile(`event: message\nid: …\ndata: \{"jsonrpc":"2.0","method":"notifications/cancelled"[^\n]*\n\n`)

func withoutWithdrawal(transcript []string) []string {
	var out []string
	for _, line := range transcript {
		if strings.Contains(line, `"method":"notifications/cancelled"`) {
			continue
		}
		out = append(out, eventIndex.ReplaceAllString(line, "id: …_"))
	}
	return out
}
