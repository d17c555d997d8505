package mcpexpose_test

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
)

// sessionConn is one handshake-era session of the differential test, on
// one handler.
type sessionConn struct {
	url, id, authz string
	client         *http.Client
}

// openSession initializes a session at revision rev (and sends
// notifications/initialized), as a client does.
func openSession(t testing.TB, client *http.Client, url, authz, rev string) *sessionConn {
	t.Helper()
	return openSessionWith(t, client, url, authz, rev, `{}`)
}

// openSessionWith opens a session as openSession does, for a client that
// declares the capabilities caps (a JSON object).
func openSessionWith(t testing.TB, client *http.Client, url, authz, rev, caps string) *sessionConn {
	t.Helper()
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	init := wireRequest{name: "initialize", header: h, body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":` + caps + `,"clientInfo":{"name":"diff","version":"1.0.0"}}}`}
	req, err := http.NewRequest("POST", url, strings.NewReader(init.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize at %s: %d %s", rev, resp.StatusCode, body)
	}
	c := &sessionConn{url: url, id: id, authz: authz, client: client}
	if x := c.send(t, wireRequest{name: "initialized", header: sessionHeader(rev), body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`}); x.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", x.status, x.raw)
	}
	return c
}

// sessionHeader is what a handshake-era client sends with each POST of a
// session at revision rev ("" for no version header).
func sessionHeader(rev string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if rev != "" {
		h.Set("Mcp-Protocol-Version", rev)
	}
	return h
}

var (
	maskStream  = regexp.MustCompile(`(?m)^id: [A-Z2-7]{26}_`)
	maskSession = regexp.MustCompile(`"sessionId":"[^"]*"`)
)

// send POSTs r on the session, its Mcp-Session-Id added unless r has its
// own; stream ids are masked in the body, their event indexes kept.
func (c *sessionConn) send(t testing.TB, r wireRequest) exchange {
	t.Helper()
	r.header = r.header.Clone()
	if _, ok := r.header["Mcp-Session-Id"]; !ok {
		r.header.Set("Mcp-Session-Id", c.id)
	}
	x := send(t, c.client, c.url, c.authz, r)
	x.body = maskStream.ReplaceAllString(maskSession.ReplaceAllString(x.raw, `"sessionId":"…"`), "id: …_")
	x.body = mask(x.body, http.Header{})
	return x
}

// resume GETs the session's stream from the event id after, as a client
// resuming a dropped stream does.
func (c *sessionConn) resume(t testing.TB, rev, after string) exchange {
	t.Helper()
	resp := c.resumeStream(t, rev, after)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Header.Del("Date")
	mcptest.Unframe(resp.Header, string(body))
	return exchange{status: resp.StatusCode, header: resp.Header, body: mask(maskStream.ReplaceAllString(string(body), "id: …_"), http.Header{}), raw: string(body)}
}

// resumeStream sends the GET that resumes the session's stream from the
// event id after, and returns the response, its body unread.
func (c *sessionConn) resumeStream(t testing.TB, rev, after string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("GET", c.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.id)
	req.Header.Set("Mcp-Protocol-Version", rev)
	req.Header.Set("Last-Event-ID", after)
	if c.authz != "" {
		req.Header.Set("Authorization", c.authz)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

var firstEvent = regexp.MustCompile(`(?m)^id: ([A-Z2-7]{26})_0$`)

// sessionCorpus is what the differential test sends on a session of
// revision rev: the ordinary calls the edge answers, and requests near
// them that it leaves to the SDK.
func sessionCorpus(rev string) []wireRequest {
	var rs []wireRequest
	add := func(name string, h http.Header, body string) {
		rs = append(rs, wireRequest{name: name, header: h, body: body})
	}
	call := func(id, name, args, extra string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + extra + `}}`
	}
	h := sessionHeader(rev)
	for name, body := range map[string]string{
		"noparams":  `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"empty":     `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		"meta":      `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"trace":"t"}}}`,
		"cursor":    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc"}}`,
		"batch":     `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`,
		"ws":        " {\"jsonrpc\" : \"2.0\", \"id\" : 2, \"method\" : \"tools/list\"} ",
		"escmethod": `{"jsonrpc":"2.0","id":1,"method":"tools\/list"}`,
		"nullparam": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
	} {
		add("list/"+name, h, body)
	}
	for _, id := range []string{`0`, `7`, `-3`, `123456789012345`, `1234567890123456`, `1.5`, `"a"`, `"<&>"`, `""`, `"\u0041"`, `null`} {
		add("list/id="+id, h, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list"}`)
		add("call/id="+id, h, call(id, "echo", `{"text":"hi"}`, ""))
	}
	for tool, argSets := range map[string][]string{
		"echo":          {`{"text":"hi"}`, `{"text":5}`, `{}`, `{"text":"hi","extra":1}`, `{"text":"<\u2028>&é"}`, `{"text":"hi","x":1e400}`, `{"text":"hi","x":-1e308}`},
		"ledger.append": {`{"text":"hi"}`},
		"fail":          {`{}`},
		"html":          {`{}`},
		"none":          {`{}`},
		"render":        {`{}`},
		"panics":        {`{}`},
		"purge":         {`{"id":"r1"}`},
		"regional":      {`{"region":"eu"}`},
		"limited":       {`{}`, `{}`, `{}`},
		"work":          {`{}`},
		"gone":          {`{}`},
		"moved":         {`{}`},
		"missing":       {`{}`},
	} {
		for i, args := range argSets {
			add("call/"+tool+"/"+string(rune('0'+i)), h, call("5", tool, args, ""))
		}
	}
	for name, extra := range map[string]string{
		"custom":   `,"_meta":{"trace":"abc","n":1}`,
		"huge":     `,"_meta":{"trace":"abc","n":1e400}`,
		"empty":    `,"_meta":{}`,
		"progress": `,"_meta":{"progressToken":"p1"}`,
		"version":  `,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + rev + `"}`,
		"related":  `,"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"x"}}`,
		"task":     `,"task":{"ttl":1000}`,
		"state":    `,"requestState":"abc"`,
	} {
		add("call/meta="+name, h, call("9", "echo", `{"text":"m"}`, extra))
	}
	for name, edit := range map[string]func(http.Header){
		"noversion":   func(h http.Header) { h.Del("Mcp-Protocol-Version") },
		"v20250618":   func(h http.Header) { h.Set("Mcp-Protocol-Version", "2025-06-18") },
		"v20251125":   func(h http.Header) { h.Set("Mcp-Protocol-Version", "2025-11-25") },
		"v20250326":   func(h http.Header) { h.Set("Mcp-Protocol-Version", "2025-03-26") },
		"ctcharset":   func(h http.Header) { h.Set("Content-Type", "application/json; charset=utf-8") },
		"ctwrong":     func(h http.Header) { h.Set("Content-Type", "text/plain") },
		"noaccept":    func(h http.Header) { h.Del("Accept") },
		"jsononly":    func(h http.Header) { h.Set("Accept", "application/json") },
		"lasteventid": func(h http.Header) { h.Set("Last-Event-ID", "X_0") },
		"nosession":   func(h http.Header) { h.Set("Mcp-Session-Id", "") },
		"unknown":     func(h http.Header) { h.Set("Mcp-Session-Id", "NOSUCHSESSION") },
		"reader":      func(h http.Header) { h.Set("Authorization", "Bearer reader") },
	} {
		hh := sessionHeader(rev)
		edit(hh)
		add("header/"+name+"/call", hh, call("11", "echo", `{"text":"h"}`, ""))
		add("header/"+name+"/list", hh, `{"jsonrpc":"2.0","id":12,"method":"tools/list"}`)
	}
	// Calls that tell their client something before they answer: progress
	// under tokens of each form, and logs at the levels the client sets
	// (the names keep them in this order).
	for name, token := range map[string]string{"str": `"p1"`, "int": `7`, "exp": `1e3`, "null": `null`, "obj": `{"a":1}`} {
		add("call/tells/progress="+name, h, call("15", "tells", `{"text":"p"}`, `,"_meta":{"progressToken":`+token+`}`))
	}
	for i, level := range []string{"", "debug", "", "warning", "", "loud", "", "info"} {
		if level != "" {
			add(fmt.Sprintf("log/%d/setlevel=%s", i, level), h, `{"jsonrpc":"2.0","id":16,"method":"logging/setLevel","params":{"level":"`+level+`"}}`)
			continue
		}
		add(fmt.Sprintf("log/%d/tells", i), h, call("17", "tells", `{"text":"l"}`, `,"_meta":{"progressToken":"t"}`))
	}
	add("notification/cancelled", h, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`)
	add("ping", h, `{"jsonrpc":"2.0","id":13,"method":"ping"}`)
	add("notjson", h, `{"jsonrpc":"2.0","id":14,"method":"tools/list"`)
	slices.SortFunc(rs, func(a, b wireRequest) int { return strings.Compare(a.name, b.name) })
	return rs
}

// TestSessionEdgeDifferential opens a handshake-era session on a handler
// whose edge answers sessions' ordinary calls and on one without
// (DisableFastPath), over instances of the same application, at each
// handshake-era revision and under several handler options, sends the
// same requests on both, and requires equal answers: status, every header
// but Date, and the body byte for byte, stream ids masked but event
// indexes kept. It requires the edge to have answered the calls it is for
// and left the others, the applications to have run their handlers
// equally often, and a GET resuming each answered stream after its first
// event to replay the same events.
func TestSessionEdgeDifferential(t *testing.T) {
	configs := []struct {
		name  string
		authz string
		opts  mcpexpose.HandlerOptions
	}{
		{"tokens", "Bearer writer", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper},
			Resource: &mcpexpose.Resource{URL: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://issuer.test"}}}},
		{"anonymous", "", mcpexpose.HandlerOptions{}},
		{"tokens-or-anonymous", "", mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true}},
		{"forbidden-result", "Bearer reader", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{ForbiddenResult: true, Identity: mapper}}},
		{"swappable", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true}}},
		{"logs", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{ForwardLogs: true}}},
		// Calls that may be polled, and answer before they are (the
		// poll itself: TestPolledCallDifferential).
		{"polled", "", mcpexpose.HandlerOptions{Limits: &mcpexpose.Limits{PollAfter: time.Minute}, Server: &mcpexpose.ServerOptions{ForwardLogs: true}}},
		// Development mode: the hidden tools' answers name their scopes.
		{"development", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &developer, Logger: slog.New(slog.DiscardHandler)}}},
	}
	for _, rev := range []string{"2025-11-25", "2025-06-18"} {
		reqs := sessionCorpus(rev)
		for _, cfg := range configs {
			t.Run(rev+"/"+cfg.name, func(t *testing.T) {
				edgeApp, sdkApp := newDiffApp(t), newDiffApp(t)
				edgeH, sdkH, edgeURL, sdkURL := servePair(t, edgeApp.snap, sdkApp.snap, cfg.opts)
				client := &http.Client{}
				edge, sdk := openSession(t, client, edgeURL, cfg.authz, rev), openSession(t, client, sdkURL, cfg.authz, rev)
				answered := map[string]bool{}
				bodies := map[string]string{}
				type stream struct{ name, edge, sdk string }
				var streams []stream
				for _, r := range reqs {
					before := edgeH.FastPathRequests()
					got, want := edge.send(t, r), sdk.send(t, r)
					answered[r.name] = edgeH.FastPathRequests() > before
					bodies[r.name] = got.body
					if !got.equal(want) {
						t.Errorf("%s (the edge answered it: %v):\nedge: %d %v\n%s\nsdk:  %d %v\n%s", r.name, answered[r.name], got.status, got.header, got.body, want.status, want.header, want.body)
						continue
					}
					if e, s := firstEvent.FindStringSubmatch(got.raw), firstEvent.FindStringSubmatch(want.raw); e != nil && s != nil {
						streams = append(streams, stream{r.name, e[1], s[1]})
					}
				}
				if sdkH.FastPathRequests() != 0 {
					t.Error("the handler with DisableFastPath answered at its edge")
				}
				n := 0
				for _, ok := range answered {
					if ok {
						n++
					}
				}
				t.Logf("the edge answered %d of %d requests; %d streams to resume", n, len(reqs), len(streams))
				if a, b := edgeApp.calls.Load(), sdkApp.calls.Load(); a != b || a == 0 {
					t.Errorf("handlers ran %d times behind the edge, %d times behind the SDK", a, b)
				}
				edgeAnswers := []string{"list/noparams", "list/empty", "list/meta", "list/ws", "list/id=\"a\"", "call/id=123456789012345",
					"call/echo/0", "call/echo/1", "call/fail/0", "call/html/0", "call/none/0", "call/render/0", "call/panics/0",
					"call/regional/0", "call/limited/2", "call/work/0", "call/gone/0", "call/moved/0", "call/missing/0",
					"call/meta=custom", "call/meta=empty", "header/noversion/call", "header/v20250618/call", "header/v20251125/list",
					"call/meta=progress", "call/tells/progress=str", "call/tells/progress=int", "call/tells/progress=exp", "call/tells/progress=obj",
					"log/0/tells", "log/2/tells", "log/4/tells", "log/6/tells", "call/purge/0"}
				sdkAnswers := []string{"call/meta=version", "call/meta=related", "call/meta=task", "call/meta=state",
					"list/cursor", "list/batch", "list/escmethod", "list/nullparam", "list/id=1.5", "list/id=1234567890123456", "list/id=null",
					"header/v20250326/call", "header/ctcharset/call", "header/noaccept/call", "header/lasteventid/call", "header/unknown/call",
					"header/nosession/list", "ping", "notification/cancelled"}
				if cfg.name == "tokens" {
					sdkAnswers = append(sdkAnswers, "header/reader/call")
				}
				if cfg.name == "polled" && rev == "2025-11-25" {
					// A call POSTed under another version header than
					// its session's is polled by the SDK, as it writes
					// by the header (pollsAsTheSDK).
					edgeAnswers = slices.DeleteFunc(edgeAnswers, func(n string) bool { return n == "header/noversion/call" || n == "header/v20250618/call" })
					sdkAnswers = append(sdkAnswers, "header/noversion/call", "header/v20250618/call")
				}
				if cfg.name == "logs" {
					// Logs forwarded at the level the client set: none
					// before it sets one, debug's between-levels record
					// only at debug, nothing below warning at warning.
					for name, want := range map[string]int{"log/0/tells": 0, "log/2/tells": 2, "log/4/tells": 0} {
						if n := strings.Count(bodies[name], `"notifications/message"`); n != want {
							t.Errorf("%s forwarded %d logs, want %d: %s", name, n, want, bodies[name])
						}
					}
				}
				if n := strings.Count(bodies["call/tells/progress=str"], `"notifications/progress"`); n != 2 {
					t.Errorf("call/tells/progress=str told %d progress notifications, want 2: %s", n, bodies["call/tells/progress=str"])
				}
				for _, name := range edgeAnswers {
					if !answered[name] {
						t.Errorf("the edge did not answer %s", name)
					}
				}
				for _, name := range sdkAnswers {
					if answered[name] {
						t.Errorf("the edge answered %s, which it must leave to the SDK", name)
					}
				}
				if rev == "2025-11-25" && len(streams) == 0 {
					t.Fatal("no answer was primed: nothing to resume")
				}
				for _, s := range streams {
					got, want := edge.resume(t, rev, s.edge+"_0"), sdk.resume(t, rev, s.sdk+"_0")
					if !got.equal(want) {
						t.Errorf("resuming %s after its first event:\nedge: %d %v\n%s\nsdk:  %d %v\n%s", s.name, got.status, got.header, got.body, want.status, want.header, want.body)
					}
				}
			})
		}
	}
}

// FuzzSessionEdge sends the same POST on a live session of a handler whose
// edge answers sessions' ordinary calls and on one of a handler without,
// and requires equal answers, stream ids masked; its seeds are the
// differential test's corpus at both handshake-era revisions.
func FuzzSessionEdge(f *testing.F) {
	for _, rev := range []string{"2025-11-25", "2025-06-18"} {
		for _, r := range sessionCorpus(rev) {
			f.Add([]byte(r.body), r.header.Get("Mcp-Protocol-Version"), r.header.Get("Authorization"))
		}
	}
	edgeApp, sdkApp := newDiffApp(f), newDiffApp(f)
	// Calls may be polled (answered before they are): the edge answers
	// them apart from their POST (polled.go), and must still answer as
	// the SDK does.
	opts := mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true, Server: &mcpexpose.ServerOptions{Identity: mapper, ForwardLogs: true},
		Limits: &mcpexpose.Limits{PollAfter: time.Minute}}
	edgeH, err := mcpexpose.NewHandler(edgeApp.snap, &opts)
	if err != nil {
		f.Fatal(err)
	}
	opts.DisableFastPath = true
	sdkH, err := mcpexpose.NewHandler(sdkApp.snap, &opts)
	if err != nil {
		f.Fatal(err)
	}
	post := func(h http.Handler, sid, rev, authz string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
		req.Header = sessionHeader(rev)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	open := func(h http.Handler) string {
		rec := post(h, "", "", "", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`))
		sid := rec.Header().Get("Mcp-Session-Id")
		if sid == "" {
			f.Fatalf("initialize: %d %s", rec.Code, rec.Body)
		}
		post(h, sid, "2025-11-25", "", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		return sid
	}
	edgeSID, sdkSID := open(edgeH), open(sdkH)
	f.Fuzz(func(t *testing.T, body []byte, rev, authz string) {
		for k, v := range map[string]string{"Mcp-Protocol-Version": rev, "Authorization": authz} {
			if v != "" && !validHeader(k, []string{v}) {
				return
			}
		}
		do := func(h http.Handler, sid string) exchange {
			rec := post(h, sid, rev, authz, body)
			mcptest.Unframe(rec.Header(), rec.Body.String())
			b := maskStream.ReplaceAllString(maskSession.ReplaceAllString(rec.Body.String(), `"sessionId":"…"`), "id: …_")
			return exchange{status: rec.Code, header: rec.Header(), body: mask(b, rec.Header())}
		}
		got, want := do(edgeH, edgeSID), do(sdkH, sdkSID)
		if !got.equal(want) {
			t.Fatalf("edge: %d %v\n%s\nsdk:  %d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
		}
	})
}

// TestEdgeStreamsCarryTheirLength holds what mcptest.Unframe lets differ: a call
// the edge answers, on either era, is one event stream sent whole with its
// length (one write, its end seen with its last event), where the SDK sends
// the same call's stream chunked; so is a list longer than net/http's
// chunking buffer.
func TestEdgeStreamsCarryTheirLength(t *testing.T) {
	edgeApp, sdkApp := newDiffApp(t), newDiffApp(t)
	edgeH, _, edgeURL, sdkURL := servePair(t, edgeApp.snap, sdkApp.snap, mcpexpose.HandlerOptions{})
	client := &http.Client{}
	framing := func(url string, header http.Header, body string) (length int64, chunked bool, ct string) {
		t.Helper()
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result"`) {
			t.Fatalf("%d %s (%v)", resp.StatusCode, b, err)
		}
		if resp.ContentLength >= 0 && resp.ContentLength != int64(len(b)) {
			t.Fatalf("Content-Length %d for a body of %d bytes", resp.ContentLength, len(b))
		}
		return resp.ContentLength, slices.Contains(resp.TransferEncoding, "chunked"), resp.Header.Get("Content-Type")
	}
	modern := callBody("1", "echo", `{"text":"hi"}`, diffMeta)
	for _, rev := range []string{"", "2025-11-25", "2025-06-18"} {
		name := "2026-07-28"
		if rev != "" {
			name = rev
		}
		t.Run(name, func(t *testing.T) {
			call := func(url string) (int64, bool, string) {
				if rev == "" {
					return framing(url, baseHeader("tools/call", "echo"), modern)
				}
				c := openSession(t, client, url, "", rev)
				h := sessionHeader(rev)
				h.Set("Mcp-Session-Id", c.id)
				return framing(url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
			}
			before := edgeH.FastPathRequests()
			n, chunked, ct := call(edgeURL)
			if edgeH.FastPathRequests() != before+1 {
				t.Fatal("the edge did not answer the call")
			}
			if ct != "text/event-stream" || n <= 0 || chunked {
				t.Errorf("edge: %s, Content-Length %d, chunked %v; want an event stream with its length", ct, n, chunked)
			}
			if n, chunked, ct := call(sdkURL); ct != "text/event-stream" || n >= 0 || !chunked {
				t.Errorf("sdk: %s, Content-Length %d, chunked %v; want the chunked event stream mcptest.Unframe passes over", ct, n, chunked)
			}
		})
	}
	// A list longer than net/http's chunking buffer, which writeStream
	// gives its length itself.
	before := edgeH.FastPathRequests()
	n, chunked, ct := framing(edgeURL, baseHeader("tools/list", ""), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{`+diffMeta+`}}`)
	if edgeH.FastPathRequests() != before+1 || ct != "text/event-stream" || n < 2048 || chunked {
		t.Errorf("edge tools/list: %s, Content-Length %d, chunked %v; want an event stream of over 2 KB with its length, from the edge", ct, n, chunked)
	}
}
