package mcpexpose_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/internal/mcptest"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
)

// diffApp is one instance of the differential test's application: every
// kind of tool outcome the fast path must answer as the SDK path does.
type diffApp struct {
	calls atomic.Int32
	snap  *mcpexpose.Snapshot
}

type RegionIn struct {
	Region string `json:"region" mcp:"header=Region"`
	Count  int    `json:"count,omitempty" mcp:"header=Count"`
}

// InterviewName is the interview tool's form.
type InterviewName struct {
	Name string `json:"name" jsonschema:"minLength=2"`
	Team string `json:"team,omitempty" jsonschema:"enum=red,enum=blue,default=blue"`
}

var interviewForm = execution.NewForm[InterviewName]("Your <name>?")

func newDiffApp(t testing.TB) *diffApp {
	t.Helper()
	d := &diffApp{}
	app := agnara.New("diff", &agnara.Options{Version: "0.9.0"})
	exp := mcpexpose.New(app)
	count := func() { d.calls.Add(1) }
	exp.Tool(app.Capability(func(ctx context.Context, in EchoIn) (EchoOut, error) {
		count()
		return EchoOut{Text: in.Text, Count: len(in.Text)}, nil
	}, &agnara.CapabilityOptions{Name: "echo", Description: "Echo <b>&</b> back.", Annotations: agnara.ReadOnly}), &mcpexpose.ToolOptions{Name: "echo"})
	exp.Tool(app.Capability(func(ctx context.Context, in EchoIn) (int, error) {
		count()
		return len(in.Text), nil
	}, &agnara.CapabilityOptions{Name: "append", Description: "Scoped.", Scopes: []string{"ledger:write"}}), &mcpexpose.ToolOptions{Name: "ledger.append"})
	exp.Tool(app.Capability(func(ctx context.Context) error {
		count()
		return execution.Fail(execution.NotFound, "nothing <here>", map[string]any{"hint": "try echo"}).WithReason("fx_empty")
	}, &agnara.CapabilityOptions{Name: "fail", Description: "Always fails."}), &mcpexpose.ToolOptions{Name: "fail"})
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) {
		count()
		return "<script>&\u2028é", nil
	}, &agnara.CapabilityOptions{Name: "html", Description: "Returns characters JSON encoders escape."}), &mcpexpose.ToolOptions{Name: "html"})
	exp.Tool(app.Capability(func(ctx context.Context) ([]string, error) {
		count()
		return nil, nil
	}, &agnara.CapabilityOptions{Name: "none", Description: "Returns a nil slice."}), &mcpexpose.ToolOptions{Name: "none"})
	exp.Tool(app.Capability(func() ([]execution.Content, error) {
		count()
		return []execution.Content{execution.Text{Text: "hi <b>"}, execution.Image{Data: []byte("png"), MIMEType: "image/png"}}, nil
	}, &agnara.CapabilityOptions{Name: "render", Description: "Rich content."}), &mcpexpose.ToolOptions{Name: "render"})
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) {
		count()
		panic("handler bug")
	}, &agnara.CapabilityOptions{Name: "panics", Description: "Panics."}), &mcpexpose.ToolOptions{Name: "panics"})
	exp.Tool(app.Capability(func(ctx context.Context, in PurgeIn) (string, error) {
		count()
		return "purged " + in.ID, nil
	}, &agnara.CapabilityOptions{Name: "purge", Description: "Purge.", Confirm: "Purge this record for good?", Annotations: agnara.Destructive}), &mcpexpose.ToolOptions{Name: "purge"})
	exp.Tool(app.Capability(func(ctx context.Context, in RegionIn) (string, error) {
		count()
		return in.Region, nil
	}, &agnara.CapabilityOptions{Name: "regional", Description: "Header parameters."}), &mcpexpose.ToolOptions{Name: "regional"})
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) {
		count()
		return "ok", nil
	}, &agnara.CapabilityOptions{Name: "limited", Description: "Rate limited.", RateLimit: agnara.RateLimit{Rate: 0.001, Burst: 2}}), &mcpexpose.ToolOptions{Name: "limited"})
	exp.Tool(app.Capability(func(ctx context.Context) (string, error) {
		count()
		return "worked", nil
	}, &agnara.CapabilityOptions{Name: "work", Description: "A task."}), &mcpexpose.ToolOptions{Name: "work", Task: mcpexpose.TaskOptional})
	exp.Tool(app.Capability(func(ec *execution.Context) (string, error) {
		count()
		return fmt.Sprint(ec.CanAsk(execution.Elicitation), ec.CanAsk(execution.Sampling), ec.CanAsk(execution.Roots)), nil
	}, &agnara.CapabilityOptions{Name: "asks", Description: "What the caller can be asked."}), &mcpexpose.ToolOptions{Name: "asks"})
	// A tool that cannot ask (its handler takes a plain context), which
	// reports progress and logs through the execution context its
	// context belongs to: the edge answers it at every era.
	exp.Tool(app.Capability(func(ctx context.Context, in EchoIn) (string, error) {
		count()
		ec, _ := execution.FromContext(ctx)
		ec.Progress(1, 2, "half <way>")
		ec.Logger().Info("said", "text", in.Text)
		// Between the protocol's levels: sent as debug, so only to a
		// client that asks for debug.
		ec.Logger().Log(ec, slog.LevelInfo+1, "between <levels>")
		ec.Progress(2, 2, "")
		return in.Text, nil
	}, &agnara.CapabilityOptions{Name: "tells", Description: "Reports progress and logs."}), &mcpexpose.ToolOptions{Name: "tells"})
	// A tool that asks its client everything it can: a form, a model,
	// the roots; the edge asks it on a session as the SDK does.
	exp.Tool(app.Capability(func(ec *execution.Context) (string, error) {
		count()
		v, err := execution.Ask(ec, "name", interviewForm)
		if err != nil {
			return "", err
		}
		s, err := ec.Sample("draft", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "Draft <a> line for " + v.Name}}, MaxTokens: 20})
		if err != nil {
			return "", err
		}
		roots, err := ec.Roots("roots")
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%s of %s: %s (%d roots)", v.Name, v.Team, s.Text, len(roots)), nil
	}, &agnara.CapabilityOptions{Name: "interview", Description: "Asks a name, a draft and the roots.", Forms: []agnara.Form{interviewForm}}), &mcpexpose.ToolOptions{Name: "interview"})
	// A tool that sends its user to a page, and says when the page is
	// done with (ADR 0078).
	exp.Tool(app.Capability(func(ec *execution.Context) (string, error) {
		count()
		if err := ec.AskURL("signin", "Sign in to <Example> & come back", signinURL); err != nil {
			return "", err
		}
		if err := ec.URLDone("signin"); err != nil {
			return "", err
		}
		return "signed in", nil
	}, &agnara.CapabilityOptions{Name: "signin", Description: "Asks the user to open a page."}), &mcpexpose.ToolOptions{Name: "signin"})
	exp.Withdrawn("gone", execution.Fail(execution.Unavailable, "the upstream <no longer> offers this tool", nil).WithReason("mcp_catalog_stale"),
		&mcpexpose.WithdrawnOptions{Scopes: []string{"ledger:write"}})
	exp.Withdrawn("moved", execution.Fail(execution.NotFound, "moved", map[string]any{"to": "echo"}), nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	d.snap = snap
	return d
}

// wireRequest is one HTTP request of the corpus.
type wireRequest struct {
	name   string
	header http.Header
	host   string
	body   string
}

const diffMeta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"diff","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}`

func baseHeader(method, name string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

func callBody(id, name, args, meta string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + `}}`
}

// corpus is every request the differential test sends.
func corpus(t testing.TB) []wireRequest {
	var rs []wireRequest
	add := func(name string, h http.Header, body string) {
		rs = append(rs, wireRequest{name: name, header: h, body: body})
	}
	metas := map[string]string{
		"triple":          diffMeta,
		"noinfo":          `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"roots":{"listChanged":true}}}`,
		"nocaps":          `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		"badcaps":         `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":true}}`,
		"badcaps2":        `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":"yes"}}`,
		"casecaps":        `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"Roots":true}}`,
		"numcaps":         `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"experimental":{"a":1}}}`,
		"nullcaps":        `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`,
		"badinfo":         `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":5},"io.modelcontextprotocol/clientCapabilities":{}}`,
		"badinfo2":        `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":"me","io.modelcontextprotocol/clientCapabilities":{}}`,
		"nullinfo":        `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":null,"io.modelcontextprotocol/clientCapabilities":{}}`,
		"oldversion":      `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`,
		"futureversion":   `"_meta":{"io.modelcontextprotocol/protocolVersion":"2027-01-01","io.modelcontextprotocol/clientCapabilities":{}}`,
		"numversion":      `"_meta":{"io.modelcontextprotocol/protocolVersion":2026,"io.modelcontextprotocol/clientCapabilities":{}}`,
		"progress":        `"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"loglevel":        `"_meta":{"io.modelcontextprotocol/logLevel":"debug","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"loglevelwarn":    `"_meta":{"io.modelcontextprotocol/logLevel":"warning","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"loglevelbogus":   `"_meta":{"io.modelcontextprotocol/logLevel":"loud","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"loglevelempty":   `"_meta":{"io.modelcontextprotocol/logLevel":"","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"loglevelnum":     `"_meta":{"io.modelcontextprotocol/logLevel":3,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"logleveltwice":   `"_meta":{"io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/logLevel":"error","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progressstr":     `"_meta":{"progressToken":"p-1","io.modelcontextprotocol/logLevel":"info","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progressbig":     `"_meta":{"progressToken":123456789012345,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progressneg":     `"_meta":{"progressToken":-3,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progressfrac":    `"_meta":{"progressToken":1.5,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progressnull":    `"_meta":{"progressToken":null,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progresstwice":   `"_meta":{"progressToken":1,"progressToken":2,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"extra":           `"_meta":{"trace":"abc","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"extrahuge":       `"_meta":{"trace":1e400,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"progresshuge":    `"_meta":{"progressToken":1e400,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"capshuge":        `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"experimental":{"a":-1e400}}}`,
		"dupversion":      `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"escapedversion":  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"escapedkey":      `"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`,
		"nometa":          `"x":1`,
		"metaarray":       `"_meta":[]`,
		"infoicons":       `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"d","version":"1","icons":[{"src":"https://x/i.png"}]},"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}`,
		"infounknownkey":  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"d","version":"1","vendor":"x"},"io.modelcontextprotocol/clientCapabilities":{}}`,
		"capsnestednull":  `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":null}}`,
		"capsstringroots": `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":"yes"}}}`,
	}
	metaNames := make([]string, 0, len(metas))
	for k := range metas {
		metaNames = append(metaNames, k)
	}
	slices.Sort(metaNames)

	// tools/list, with every _meta and some params.
	for _, m := range metaNames {
		add("list/meta="+m, baseHeader("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+metas[m]+`}}`)
	}
	for name, body := range map[string]string{
		"cursor":    `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"abc",` + diffMeta + `}}`,
		"nullparam": `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}`,
		"noparams":  `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"extrakey":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + diffMeta + `},"extra":true}`,
		"escmethod": `{"jsonrpc":"2.0","id":1,"method":"tools\/list","params":{` + diffMeta + `}}`,
		"dupmethod": `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list","params":{` + diffMeta + `}}`,
		"dupid":     `{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{` + diffMeta + `}}`,
		"badver":    `{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{` + diffMeta + `}}`,
		"nover":     `{"id":1,"method":"tools/list","params":{` + diffMeta + `}}`,
		"notif":     `{"jsonrpc":"2.0","method":"tools/list","params":{` + diffMeta + `}}`,
		"batch":     `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + diffMeta + `}}]`,
		"ws":        " \n{ \"jsonrpc\" : \"2.0\" ,\t\"id\" : 1 , \"method\" : \"tools/list\" , \"params\" : { " + diffMeta + " } }\r\n",
		"trailing":  `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + diffMeta + `}} {}`,
		"uppercase": `{"JSONRPC":"2.0","id":1,"method":"tools/list","params":{` + diffMeta + `}}`,
	} {
		add("list/"+name, baseHeader("tools/list", ""), body)
	}
	// Ids.
	for _, id := range []string{`0`, `-1`, `7`, `123456789012345`, `1234567890123456`, `1.5`, `1e3`, `-0`, `null`, `true`, `"a"`, `""`, `"<&>"`, `"é"`, `"a\"b"`, `"\u0041"`, `{}`, `[]`, `01`} {
		add("list/id="+id, baseHeader("tools/list", ""), `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/list","params":{`+diffMeta+`}}`)
		add("call/id="+id, baseHeader("tools/call", "echo"), callBody(id, "echo", `{"text":"hi"}`, diffMeta))
	}
	// tools/call of every tool, with arguments good and bad.
	args := map[string][]string{
		"echo":          {`{"text":"hi"}`, `{"text":""}`, `{"text":5}`, `{}`, `{"text":"hi","extra":1}`, `{"text":"<\u2028>&é\ud83d\ude00"}`, `{"text":"` + "\xff\xfe" + `"}`, `[]`, `null`, `"x"`, `{"text":"a","text":"b"}`},
		"ledger.append": {`{"text":"hi"}`},
		"fail":          {`{}`, `{"x":1}`},
		"html":          {`{}`},
		"none":          {`{}`},
		"render":        {`{}`},
		"panics":        {`{}`},
		"purge":         {`{"id":"r1"}`},
		"regional":      {`{"region":"eu"}`, `{"region":"eu","count":3}`, `{"region":"eu","count":1e400}`, `{"region":"eu","count":1e3}`},
		"limited":       {`{}`, `{}`, `{}`},
		"work":          {`{}`},
		"gone":          {`{}`, `{"x":[1,"y"]}`},
		"moved":         {`{}`},
		"missing":       {`{}`},
	}
	// Numbers beyond a double's range, and next to it: the SDK's decoding
	// of the params into maps refuses the first.
	args["echo"] = append(args["echo"], `{"text":"hi","x":1e400}`, `{"text":"hi","x":-1E+309}`, `{"text":"hi","x":1.7976931348623157e308}`,
		`{"text":"hi","x":1.7976931348623159e308}`, `{"text":"hi","x":1e-400}`, `{"text":"hi","x":[0.1e310]}`,
		`{"text":"hi","x":`+strings.Repeat("9", 309)+`}`, `{"text":"hi","x":`+strings.Repeat("9", 308)+`}`,
		`{"text":"hi","x":0.`+strings.Repeat("0", 400)+`1e500}`, `{"text":"hi","x":"1e400"}`)
	tools := make([]string, 0, len(args))
	for k := range args {
		tools = append(tools, k)
	}
	slices.Sort(tools)
	for _, tool := range tools {
		for i, a := range args[tool] {
			add(fmt.Sprintf("call/%s/%d", tool, i), baseHeader("tools/call", tool), callBody("3", tool, a, diffMeta))
		}
	}
	for _, m := range metaNames {
		add("call/meta="+m, baseHeader("tools/call", "echo"), callBody(`"m"`, "echo", `{"text":"hi"}`, metas[m]))
	}
	// Calls that tell their client something before they answer
	// (progress, logs), and a task tool called by a client that declares
	// tasks, or that does not.
	for _, m := range []string{"triple", "progress", "loglevel", "infoicons", "loglevelwarn", "loglevelbogus", "loglevelempty", "loglevelnum", "logleveltwice", "progressstr", "progressbig", "progressneg", "progressfrac", "progressnull", "progresstwice"} {
		add("call/tells/meta="+m, baseHeader("tools/call", "tells"), callBody(`"t"`, "tells", `{"text":"hi"}`, metas[m]))
		add("call/work/meta="+m, baseHeader("tools/call", "work"), callBody(`"w"`, "work", `{}`, metas[m]))
	}
	// What a caller can be asked, read from each _meta in turn: the fast
	// path's memo of the last one's capabilities must not answer for
	// another's (and then, for the same one again).
	for _, m := range metaNames {
		add("call/asks/meta="+m, baseHeader("tools/call", "asks"), callBody("4", "asks", `{}`, metas[m]))
	}
	for i, m := range []string{"triple", "noinfo", "noinfo", "infoicons", "triple"} {
		add(fmt.Sprintf("call/asks/again/%d", i), baseHeader("tools/call", "asks"), callBody("4", "asks", `{}`, metas[m]))
	}
	for name, body := range map[string]string{
		"noargs":    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",` + diffMeta + `}}`,
		"noname":    `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{},` + diffMeta + `}}`,
		"escname":   `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ec\u0068o","arguments":{"text":"hi"},` + diffMeta + `}}`,
		"namenum":   `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5,"arguments":{},` + diffMeta + `}}`,
		"task":      `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"task":{},` + diffMeta + `}}`,
		"state":     `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"requestState":"forged",` + diffMeta + `}}`,
		"responses": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"inputResponses":{"x":{"action":"accept"}},` + diffMeta + `}}`,
		"hugeparam": `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"n":1e400,` + diffMeta + `}}`,
		"hugetop":   `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},` + diffMeta + `},"n":1e400}`,
		"deep950":   callBody("3", "echo", `{"text":"hi","x":`+strings.Repeat("[", 950)+strings.Repeat("]", 950)+`}`, diffMeta),
		"deep1100":  callBody("3", "echo", `{"text":"hi","x":`+strings.Repeat("[", 1100)+strings.Repeat("]", 1100)+`}`, diffMeta),
		"deep800":   callBody("3", "echo", `{"text":"hi","x":`+strings.Repeat(`{"a":`, 800)+"1"+strings.Repeat("}", 800)+`}`, diffMeta),
		"long":      callBody("3", "echo", `{"text":"`+strings.Repeat("ab", 20000)+`"}`, diffMeta),
		"ping":      `{"jsonrpc":"2.0","id":3,"method":"ping","params":{` + diffMeta + `}}`,
		"unknown":   `{"jsonrpc":"2.0","id":3,"method":"tools/frob","params":{` + diffMeta + `}}`,
	} {
		add("call/"+name, baseHeader("tools/call", "echo"), body)
	}
	// Headers.
	echo := callBody("4", "echo", `{"text":"hi"}`, diffMeta)
	list := `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + diffMeta + `}}`
	headerCases := map[string]func(h http.Header){
		"ct-charset":    func(h http.Header) { h.Set("Content-Type", "application/json; charset=utf-8") },
		"ct-upper":      func(h http.Header) { h.Set("Content-Type", "Application/JSON") },
		"ct-text":       func(h http.Header) { h.Set("Content-Type", "text/plain") },
		"ct-none":       func(h http.Header) { h.Del("Content-Type") },
		"ct-two":        func(h http.Header) { h.Add("Content-Type", "text/plain") },
		"accept-json":   func(h http.Header) { h.Set("Accept", "application/json") },
		"accept-any":    func(h http.Header) { h.Set("Accept", "*/*") },
		"accept-wild":   func(h http.Header) { h.Set("Accept", "application/*, text/*;q=0.5") },
		"accept-split":  func(h http.Header) { h.Set("Accept", "application/json"); h.Add("Accept", "text/event-stream") },
		"accept-upper":  func(h http.Header) { h.Set("Accept", "APPLICATION/JSON , Text/Event-Stream") },
		"accept-longs":  func(h http.Header) { h.Set("Accept", "application/json, text/event-\u017ftream") },
		"accept-none":   func(h http.Header) { h.Del("Accept") },
		"last-event":    func(h http.Header) { h.Set("Last-Event-ID", "x_1") },
		"method-none":   func(h http.Header) { h.Del("Mcp-Method") },
		"method-wrong":  func(h http.Header) { h.Set("Mcp-Method", "tools/list") },
		"name-none":     func(h http.Header) { h.Del("Mcp-Name") },
		"name-wrong":    func(h http.Header) { h.Set("Mcp-Name", "fail") },
		"name-case":     func(h http.Header) { h.Set("Mcp-Name", "ECHO") },
		"version-old":   func(h http.Header) { h.Set("Mcp-Protocol-Version", "2025-11-25") },
		"version-new":   func(h http.Header) { h.Set("Mcp-Protocol-Version", "2027-01-01") },
		"version-bad":   func(h http.Header) { h.Set("Mcp-Protocol-Version", "x") },
		"origin-same":   func(h http.Header) { h.Set("Origin", "http://127.0.0.1") },
		"origin-evil":   func(h http.Header) { h.Set("Origin", "https://evil.example") },
		"session":       func(h http.Header) { h.Set("Mcp-Session-Id", "abc") },
		"param-extra":   func(h http.Header) { h.Set("Mcp-Param-Region", "eu") },
		"token-reader":  func(h http.Header) { h.Set("Authorization", "Bearer reader") },
		"token-writer":  func(h http.Header) { h.Set("Authorization", "Bearer writer") },
		"token-refused": func(h http.Header) { h.Set("Authorization", "Bearer refused") },
		"token-bad":     func(h http.Header) { h.Set("Authorization", "Bearer nope") },
		"token-basic":   func(h http.Header) { h.Set("Authorization", "Basic abc") },
		"token-spaces":  func(h http.Header) { h.Set("Authorization", "Bearer  writer") },
		"token-lower":   func(h http.Header) { h.Set("Authorization", "bearer writer") },
		"token-nbsp":    func(h http.Header) { h.Set("Authorization", "Bearer writer\u00a0x") },
	}
	caseNames := make([]string, 0, len(headerCases))
	for k := range headerCases {
		caseNames = append(caseNames, k)
	}
	slices.Sort(caseNames)
	for _, c := range caseNames {
		for _, b := range []struct{ name, method, tool, body string }{{"echo", "tools/call", "echo", echo}, {"list", "tools/list", "", list}} {
			h := baseHeader(b.method, b.tool)
			headerCases[c](h)
			add("header/"+c+"/"+b.name, h, b.body)
		}
	}
	// Header parameters of the regional tool.
	for name, set := range map[string]func(h http.Header){
		"right":     func(h http.Header) { h.Set("Mcp-Param-Region", "eu") },
		"wrong":     func(h http.Header) { h.Set("Mcp-Param-Region", "us") },
		"base64":    func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?ZXU=?=") },
		"badbase64": func(h http.Header) { h.Set("Mcp-Param-Region", "=?base64?!!?=") },
		"missing":   func(h http.Header) {},
	} {
		h := baseHeader("tools/call", "regional")
		set(h)
		add("params/"+name, h, callBody("5", "regional", `{"region":"eu"}`, diffMeta))
	}
	// A Host that is not loopback, on a loopback listener.
	for _, b := range []string{echo, list} {
		method := "tools/call"
		if strings.Contains(b, "tools/list") {
			method = "tools/list"
		}
		h := baseHeader(method, "echo")
		rs = append(rs, wireRequest{name: "host/evil/" + method, header: h, host: "evil.example", body: b})
		rs = append(rs, wireRequest{name: "host/localhost/" + method, header: baseHeader(method, "echo"), host: "localhost", body: b})
	}
	// The checked-in fuzz corpus, and the golden wire files' requests.
	rs = append(rs, fuzzCorpus(t)...)
	rs = append(rs, goldenRequests(t)...)
	return rs
}

// fuzzCorpus reads testdata/fuzz/FuzzHandler: each entry's body, version,
// token and origin.
func fuzzCorpus(t testing.TB) []wireRequest {
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzHandler", "*"))
	if len(files) == 0 {
		t.Fatal("no fuzz corpus")
	}
	var rs []wireRequest
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		vals := fuzzValues(t, b)
		if len(vals) != 4 {
			t.Fatalf("%s: %d values", f, len(vals))
		}
		body, version, token, origin := vals[0], vals[1], vals[2], vals[3]
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			h.Set("Mcp-Protocol-Version", version)
		}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		if origin != "" {
			h.Set("Origin", origin)
		}
		setMcpHeaders(h, body)
		rs = append(rs, wireRequest{name: "fuzz/" + filepath.Base(f), header: h, body: body})
	}
	return rs
}

var fuzzLine = regexp.MustCompile(`^(?:\[\]byte|string)\((".*")\)$`)

// fuzzValues reads a "go test fuzz v1" file.
func fuzzValues(t testing.TB, b []byte) []string {
	var vals []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		m := fuzzLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("fuzz corpus line %q", line)
		}
		v, err := strconv.Unquote(m[1])
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, v)
	}
	return vals
}

// setMcpHeaders sets Mcp-Method and Mcp-Name from a body, as a client would.
func setMcpHeaders(h http.Header, body string) {
	if m := regexp.MustCompile(`"method":"([^"\\]*)"`).FindStringSubmatch(body); m != nil {
		h.Set("Mcp-Method", m[1])
	}
	if m := regexp.MustCompile(`"name":"([^"\\]*)"`).FindStringSubmatch(body); m != nil {
		h.Set("Mcp-Name", m[1])
	}
}

func goldenRequests(t testing.TB) []wireRequest {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	var rs []wireRequest
	for _, f := range files {
		ar := readArchive(t, f)
		body := ar.get("request")
		h := baseHeader("", "")
		setMcpHeaders(h, body)
		if tok := strings.TrimSpace(ar.get("token")); tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		rs = append(rs, wireRequest{name: "golden/" + filepath.Base(f), header: h, body: body})
	}
	return rs
}

// exchange is what a request got back, with what differs by nature
// between two servers masked: sealed request state (each server has its
// own key) and a rate limit's retry delay (it depends on the clock).
type exchange struct {
	status int
	header http.Header
	body   string
	raw    string // the body unmasked
}

// equal reports whether two answers are the same: status, headers and
// (masked) body.
func (e exchange) equal(o exchange) bool {
	return e.status == o.status && e.body == o.body && headersEqual(e.header, o.header)
}

// servePair serves fastSnap through a handler with opts and sdkSnap
// through one with opts and DisableFastPath, on loopback, until the test
// ends; it returns the handlers and the URLs of their endpoints.
func servePair(t testing.TB, fastSnap, sdkSnap *mcpexpose.Snapshot, opts mcpexpose.HandlerOptions) (fastH, sdkH *mcpexpose.Handler, fastURL, sdkURL string) {
	t.Helper()
	fastH, err := mcpexpose.NewHandler(fastSnap, &opts)
	if err != nil {
		t.Fatal(err)
	}
	opts.DisableFastPath = true
	sdkH, err = mcpexpose.NewHandler(sdkSnap, &opts)
	if err != nil {
		t.Fatal(err)
	}
	fastSrv, sdkSrv := httptest.NewServer(fastH), httptest.NewServer(sdkH)
	t.Cleanup(fastSrv.Close)
	t.Cleanup(sdkSrv.Close)
	return fastH, sdkH, fastSrv.URL + "/mcp", sdkSrv.URL + "/mcp"
}

var (
	maskState = regexp.MustCompile(`"requestState":"[^"]*"`)
	maskRetry = regexp.MustCompile(`(retry_after_ms\\?":)[0-9]+|(retry in )[0-9a-z.]+`)
	maskTask  = regexp.MustCompile(`"taskId":"[^"]*"`)
	maskTime  = regexp.MustCompile(`"(createdAt|lastUpdatedAt)":"[^"]*"`)
	maskEvent = regexp.MustCompile(`(?m)^id: .*$`)
	maskLog   = regexp.MustCompile(`"data":\{"time":"[^"]*"`)
	// A URL elicitation's id is fresh and random on each server.
	maskElicitation = regexp.MustCompile(`"elicitationId":"[^"]*"`)
)

// signinURL is the page the signin tool sends its user to.
const signinURL = "https://auth.example.com/start?flow=f1&next=%2Fdone"

// mask hides what differs by nature between two servers.
func mask(b string, h http.Header) string {
	b = maskState.ReplaceAllString(b, `"requestState":"…"`)
	b = maskElicitation.ReplaceAllString(b, `"elicitationId":"…"`)
	b = maskRetry.ReplaceAllString(b, "${1}${2}0")
	b = maskTask.ReplaceAllString(b, `"taskId":"…"`)
	b = maskTime.ReplaceAllString(b, `"$1":"…"`)
	b = maskEvent.ReplaceAllString(b, "id: …")
	b = maskLog.ReplaceAllString(b, `"data":{"time":"…"`)
	if h.Get("Mcp-Session-Id") != "" {
		h.Set("Mcp-Session-Id", "…")
	}
	if h.Get("Content-Length") != "" {
		h.Set("Content-Length", strconv.Itoa(len(b)))
	}
	return b
}

func send(t testing.TB, client *http.Client, url, authz string, r wireRequest) exchange {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = r.header.Clone()
	if authz != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", authz)
	}
	if r.host != "" {
		req.Host = r.host
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Header.Del("Date")
	mcptest.Unframe(resp.Header, string(body))
	b := mask(string(body), resp.Header)
	return exchange{status: resp.StatusCode, header: resp.Header, body: b, raw: string(body)}
}

// TestFastPathDifferential sends the whole corpus (hand-written valid,
// invalid and hostile requests, the fuzz corpus, the golden wire files)
// through a handler with the fast path and one without, each over its own
// instance of the same application, under several handler options, and
// requires equal answers: status, every header but Date (and an event
// stream's Content-Length, see mcptest.Unframe), and the body byte for byte (sealed state and retry delays masked). It also requires
// the fast path to have answered the requests it is for, and the two
// applications to have run their handlers equally often.
func TestFastPathDifferential(t *testing.T) {
	configs := []struct {
		name  string
		authz string // sent when a request has no Authorization of its own
		opts  mcpexpose.HandlerOptions
	}{
		{"tokens", "Bearer writer", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{Identity: mapper},
			Resource: &mcpexpose.Resource{URL: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://issuer.test"}}}},
		{"anonymous", "", mcpexpose.HandlerOptions{}},
		{"tokens-or-anonymous", "", mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true}},
		{"forbidden-result", "Bearer reader", mcpexpose.HandlerOptions{Tokens: tokens, Server: &mcpexpose.ServerOptions{ForbiddenResult: true, Identity: mapper}}},
		{"swappable-logs", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Swappable: true, ForwardLogs: true}}},
		// Tasks: a task tool called by a client that declares tasks.
		{"tasks", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{Tasks: &mcpexpose.TaskOptions{}}}},
		// Development mode: the hidden tools' answers name their scopes.
		{"development", "", mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{DevelopmentPrincipal: &developer, Logger: slog.New(slog.DiscardHandler)}}},
	}
	reqs := corpus(t)
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			fastApp, sdkApp := newDiffApp(t), newDiffApp(t)
			fastH, sdkH, fastURL, sdkURL := servePair(t, fastApp.snap, sdkApp.snap, cfg.opts)
			client := &http.Client{}
			served := map[string]bool{}
			for _, r := range reqs {
				before := fastH.FastPathRequests()
				got := send(t, client, fastURL, cfg.authz, r)
				want := send(t, client, sdkURL, cfg.authz, r)
				served[r.name] = fastH.FastPathRequests() > before
				if cfg.name == "tasks" && r.name == "call/work/meta=infoicons" && !strings.Contains(got.body, `"resultType":"task"`) {
					t.Errorf("%s made no task: %s", r.name, got.body)
				}
				if r.name == "call/tells/meta=progress" && strings.Count(got.body, `"notifications/progress"`) != 2 {
					t.Errorf("%s told no progress: %s", r.name, got.body)
				}
				if cfg.opts.Server != nil && cfg.opts.Server.ForwardLogs && r.name == "call/tells/meta=loglevel" && !strings.Contains(got.body, `"notifications/message"`) {
					t.Errorf("%s forwarded no log: %s", r.name, got.body)
				}
				if (strings.Contains(r.body, ":1e400") || strings.Contains(r.body, ":-1e400")) && served[r.name] {
					t.Errorf("%s: the edge answered params holding a number beyond a double's range, which the SDK refuses", r.name)
				}
				if !got.equal(want) {
					t.Errorf("%s (fast path took it: %v):\nfast: %d %v\n%s\nsdk:  %d %v\n%s", r.name, served[r.name], got.status, got.header, got.body, want.status, want.header, want.body)
				}
			}
			if sdkH.FastPathRequests() != 0 {
				t.Error("the handler with DisableFastPath took the fast path")
			}
			n := 0
			for _, ok := range served {
				if ok {
					n++
				}
			}
			t.Logf("fast path answered %d of %d requests", n, len(reqs))
			for _, name := range []string{"call/echo/0", "call/fail/0", "call/html/0", "call/render/0", "call/purge/0", "call/none/0", "call/limited/2", "call/missing/0", "call/moved/0", "list/meta=triple", "list/id=\"<&>\"", "call/id=123456789012345", "call/meta=noinfo", "call/meta=infoicons", "call/asks/meta=infoicons", "call/asks/meta=noinfo", "call/asks/again/4", "list/ws", "call/state", "call/responses", "call/work/0", "call/meta=progress", "call/tells/meta=progress", "call/work/meta=infoicons", "call/work/meta=progress", "call/meta=loglevel", "call/tells/meta=loglevel", "call/tells/meta=loglevelwarn", "call/tells/meta=loglevelbogus", "call/tells/meta=loglevelempty", "call/tells/meta=progressstr", "call/tells/meta=progressbig", "call/tells/meta=progressneg"} {
				if !served[name] {
					t.Errorf("the fast path did not answer %s", name)
				}
			}
			for _, name := range []string{"call/tells/meta=loglevelnum", "call/tells/meta=logleveltwice", "call/tells/meta=progressfrac", "call/tells/meta=progressnull", "call/tells/meta=progresstwice", "list/cursor", "call/id=1.5", "call/id=-0", "header/ct-charset/echo", "host/evil/tools/call", "list/batch", "call/escname"} {
				if served[name] {
					t.Errorf("the fast path answered %s, which it must leave to the SDK", name)
				}
			}
			if a, b := fastApp.calls.Load(), sdkApp.calls.Load(); a != b || a == 0 {
				t.Errorf("handlers ran %d times behind the fast path, %d times behind the SDK", a, b)
			}
		})
	}
}

// headersEqual compares response headers, Date removed.
func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// FuzzFastPath sends one arbitrary request, in process, to a handler with
// the fast path and one without, and requires the same status, headers
// and body (sealed state and retry delays masked).
func FuzzFastPath(f *testing.F) {
	for _, r := range corpus(f) {
		f.Add([]byte(r.body), r.header.Get("Mcp-Method"), r.header.Get("Mcp-Name"), r.header.Get("Authorization"))
	}
	fastApp, sdkApp := newDiffApp(f), newDiffApp(f)
	opts := mcpexpose.HandlerOptions{Tokens: tokens, AllowAnonymous: true, Server: &mcpexpose.ServerOptions{Identity: mapper, ForwardLogs: true, Tasks: &mcpexpose.TaskOptions{}}}
	fastH, err := mcpexpose.NewHandler(fastApp.snap, &opts)
	if err != nil {
		f.Fatal(err)
	}
	opts.DisableFastPath = true
	sdkH, err := mcpexpose.NewHandler(sdkApp.snap, &opts)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, method, name, authz string) {
		do := func(h http.Handler) exchange {
			req := httptest.NewRequest("POST", "http://127.0.0.1/mcp", bytes.NewReader(body))
			hd := baseHeader(method, name)
			if method == "" {
				hd.Del("Mcp-Method")
			}
			if authz != "" {
				hd.Set("Authorization", authz)
			}
			for k, v := range hd {
				if !validHeader(k, v) {
					return exchange{}
				}
			}
			req.Header = hd
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			mcptest.Unframe(rec.Header(), rec.Body.String())
			b := mask(rec.Body.String(), rec.Header())
			return exchange{status: rec.Code, header: rec.Header(), body: b}
		}
		got, want := do(fastH), do(sdkH)
		if !got.equal(want) {
			t.Fatalf("fast: %d %v\n%s\nsdk:  %d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
		}
	})
}

// validHeader reports whether net/http would send the header: fuzzed
// values it would refuse say nothing about the handler.
func validHeader(k string, v []string) bool {
	for _, s := range v {
		if strings.ContainsAny(s, "\r\n\x00") {
			return false
		}
	}
	return k != ""
}

// TestFastPathRetries runs input-required exchanges — a confirmation and a
// form, answered, declined, replayed, forged, malformed — against a
// handler with the fast path and one without, sharing one state key ring
// (each with its own single-use record), so that a state one minted opens
// on both: each retry is sent to both with the fast path's state, and the
// answers must be equal.
func TestFastPathRetries(t *testing.T) {
	key, err := requeststate.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := requeststate.NewKeyRing(key)
	if err != nil {
		t.Fatal(err)
	}
	var purged, notified atomic.Int32
	fastSnap, sdkSnap := interactiveApp(t, &purged, &notified), interactiveApp(t, &purged, &notified)
	fastH, _, fastURL, sdkURL := servePair(t, fastSnap, sdkSnap, mcpexpose.HandlerOptions{Server: &mcpexpose.ServerOptions{StateKeys: ring}})
	client := &http.Client{}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}`
	// both sends body to both servers, requires equal answers, and returns
	// the fast path's unmasked body.
	both := func(name, tool, body string) string {
		t.Helper()
		r := wireRequest{name: name, header: baseHeader("tools/call", tool), body: body}
		got, want := send(t, client, fastURL, "", r), send(t, client, sdkURL, "", r)
		if !got.equal(want) {
			t.Errorf("%s:\nfast: %d %v\n%s\nsdk:  %d %v\n%s", name, got.status, got.header, got.body, want.status, want.header, want.body)
		}
		return got.raw
	}
	call := func(tool, args, extra string) string {
		return `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + extra + `,` + meta + `}}`
	}
	stateOf := func(body string) (state string, keys []string) {
		var msg struct {
			Result struct {
				RequestState  string                     `json:"requestState"`
				InputRequests map[string]json.RawMessage `json:"inputRequests"`
			} `json:"result"`
		}
		data := body[strings.Index(body, "{"):]
		if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &msg); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		for k := range msg.Result.InputRequests {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return msg.Result.RequestState, keys
	}
	before := fastH.FastPathRequests()

	// A confirmation: asked, answered yes, replayed; asked, declined.
	first := both("purge/ask", "ops.purge", call("ops.purge", `{"id":"r1"}`, ""))
	state, keys := stateOf(first)
	if state == "" || len(keys) != 1 {
		t.Fatalf("no confirmation asked: %s", first)
	}
	yes := `,"requestState":"` + state + `","inputResponses":{"` + keys[0] + `":{"action":"accept","content":{"confirm":true}}}`
	both("purge/accept", "ops.purge", call("ops.purge", `{"id":"r1"}`, yes))
	both("purge/replayed", "ops.purge", call("ops.purge", `{"id":"r1"}`, yes))
	second := both("purge/ask-again", "ops.purge", call("ops.purge", `{"id":"r2"}`, ""))
	state, keys = stateOf(second)
	both("purge/decline", "ops.purge", call("ops.purge", `{"id":"r2"}`, `,"requestState":"`+state+`","inputResponses":{"`+keys[0]+`":{"action":"decline"}}`))
	both("purge/forged", "ops.purge", call("ops.purge", `{"id":"r3"}`, `,"requestState":"AAAA","inputResponses":{"x":{"action":"accept"}}`))
	both("purge/unsolicited", "ops.purge", call("ops.purge", `{"id":"r4"}`, `,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}`))
	both("purge/other-args", "ops.purge", call("ops.purge", `{"id":"other"}`, yes))
	for i, bad := range []string{`{"x":5}`, `{"x":{"action":5}}`, `{"x":{"role":"assistant"}}`, `{"x":{"roots":"no"}}`, `{"x":{}}`, `{}`, `{"x":{"action":"accept","content":[]}}`} {
		third := both(fmt.Sprintf("purge/ask-%d", i), "ops.purge", call("ops.purge", `{"id":"m"}`, ""))
		state, _ = stateOf(third)
		both(fmt.Sprintf("purge/malformed-%d", i), "ops.purge", call("ops.purge", `{"id":"m"}`, `,"requestState":"`+state+`","inputResponses":`+bad))
	}
	// Two rounds: a form, then a confirmation, answered in turn.
	ask := both("notify/ask", "ops.notify", call("ops.notify", `{}`, ""))
	state, keys = stateOf(ask)
	form := `,"requestState":"` + state + `","inputResponses":{"` + keys[0] + `":{"action":"accept","content":{"name":"Ada","email":"ada@example.com"}}}`
	confirm := both("notify/form", "ops.notify", call("ops.notify", `{}`, form))
	state, keys = stateOf(confirm)
	both("notify/confirm", "ops.notify", call("ops.notify", `{}`, `,"requestState":"`+state+`","inputResponses":{"`+keys[0]+`":{"action":"accept","content":{"confirm":true}}}`))
	bad := both("notify/ask-bad", "ops.notify", call("ops.notify", `{}`, ""))
	state, keys = stateOf(bad)
	both("notify/invalid-form", "ops.notify", call("ops.notify", `{}`, `,"requestState":"`+state+`","inputResponses":{"`+keys[0]+`":{"action":"accept","content":{"name":"","email":"not an email"}}}`))

	if n := fastH.FastPathRequests() - before; n < 20 {
		t.Errorf("the fast path answered %d of the exchanges", n)
	}
	if purged.Load() != 2 || notified.Load() != 2 {
		t.Errorf("purged %d, notified %d times: want each twice (once per handler)", purged.Load(), notified.Load())
	}
}

// TestFastPathIDs sends tools/list and tools/call with ids of every shape
// near the fast path's rule — integers of 15 to 20 digits on both sides of
// 2^53, negative ones, exponents, fractions, leading zeros, -0 — to a
// handler with the fast path and one without, over loopback HTTP, and
// requires equal answers. The SDK reads a numeric id into a float64 and
// echoes it as an int64, so an integer past 2^53 comes back rounded, a
// fraction truncated and an exponent expanded: the fast path, which
// echoes the id's bytes, may take only the integers that survive that
// unchanged, and it must take those of up to 15 digits.
func TestFastPathIDs(t *testing.T) {
	cases := []struct {
		id   string
		fast bool // the fast path answers it
	}{
		{`0`, true},
		{`-1`, true},
		{`123456789012345`, true}, // 15 digits: every one is exact
		{`999999999999999`, true},
		{`-999999999999999`, true},
		{`1234567890123456`, false}, // 16 digits, below 2^53 (exact, yet past the rule)
		{`9007199254740993`, false}, // 2^53+1: the SDK echoes 9007199254740992
		{`9999999999999999`, false}, // the SDK echoes 10000000000000000
		{`-9007199254740993`, false},
		{`12345678901234567`, false}, // 17 digits
		{`-12345678901234567`, false},
		{`123456789012345678`, false}, // 18 digits
		{`999999999999999999`, false},
		{`1234567890123456789`, false}, // 19 digits
		{`9223372036854775807`, false},
		{`-9223372036854775808`, false},
		{`9223372036854775808`, false}, // past int64
		{`12345678901234567890`, false},
		{`1e3`, false},
		{`1E3`, false},
		{`1e+3`, false},
		{`1e-3`, false},
		{`-1e3`, false},
		{`1.0e2`, false},
		{`1.5`, false},
		{`1.0`, false},
		{`-1.5`, false},
		{`0.0`, false},
		{`0.5`, false},
		{`01`, false}, // not JSON: 400 on both paths
		{`-01`, false},
		{`00`, false},
		{`-0`, false}, // echoed as 0
	}
	fastApp, sdkApp := newDiffApp(t), newDiffApp(t)
	fastH, _, fastURL, sdkURL := servePair(t, fastApp.snap, sdkApp.snap, mcpexpose.HandlerOptions{})
	client := &http.Client{}
	for _, tc := range cases {
		for _, r := range []wireRequest{
			{name: "list", header: baseHeader("tools/list", ""), body: `{"jsonrpc":"2.0","id":` + tc.id + `,"method":"tools/list","params":{` + diffMeta + `}}`},
			{name: "call", header: baseHeader("tools/call", "echo"), body: callBody(tc.id, "echo", `{"text":"hi"}`, diffMeta)},
		} {
			t.Run(r.name+"/"+tc.id, func(t *testing.T) {
				before := fastH.FastPathRequests()
				got := send(t, client, fastURL, "", r)
				want := send(t, client, sdkURL, "", r)
				if !got.equal(want) {
					t.Errorf("answers differ:\nfast: %d %v\n%s\nsdk:  %d %v\n%s", got.status, got.header, got.body, want.status, want.header, want.body)
				}
				if served := fastH.FastPathRequests() > before; served != tc.fast {
					t.Errorf("the fast path answered it: %v, want %v", served, tc.fast)
				}
			})
		}
	}
	if a, b := fastApp.calls.Load(), sdkApp.calls.Load(); a != b || a == 0 {
		t.Errorf("handlers ran %d times behind the fast path, %d times behind the SDK", a, b)
	}
}
