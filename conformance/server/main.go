// Command server is the fixture server for the official MCP conformance
// suite. It serves, through agnara-go's public API only, the fixture tools
// the suite's tool scenarios call, at /mcp, for both protocol eras.
//
//	go run ./conformance/server -addr 127.0.0.1:0
//	go run ./conformance/server -state-keys FILE -replay-redis redis://127.0.0.1:6379/0
//
// With -state-keys (a key file from 'agnara keys generate') and
// -replay-redis, several instances accept each other's request state, as
// behind a load balancer (docs/scaling.md).
//
// It prints the URL it serves on its first line of output. The interaction
// fixtures (elicitation, sampling, roots) ask through execution.Ask,
// Context.Sample and Context.Roots only; the framework projects the questions
// as input-required results at 2026-07-28 and as server-to-client requests
// on the session at 2025-11-25. The resource, template, prompt and
// completion fixtures are in resources.go; see conformance/baseline.yml and
// docs/CONFORMANCE.md.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/execution"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/agnara-go/agnara/mcpexpose/requeststate"
	"github.com/agnara-go/agnara/mcpexpose/requeststate/redisreplay"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (loopback)")
	var st sharedState
	flag.StringVar(&st.keys, "state-keys", "", "key file sealing request state, shared by every instance; default: a key per process")
	flag.StringVar(&st.redis, "replay-redis", "", "Redis URL recording used request states for every instance (single, Sentinel or Cluster form); default: in this process")
	flag.IntVar(&st.replicas, "replay-redis-replicas", 0, "replicas that must acknowledge each used request state (WAIT) before its call runs")
	flag.BoolVar(&st.fastPath, "fast-path", true, "answer stateless 2026-07-28 tools/call and tools/list on the handler's fast path (false: HandlerOptions.DisableFastPath)")
	flag.StringVar(&st.record, "record", "", "append every 2026-07-28 POST (headers and body) to this file as JSON lines, for the fast path's differential test")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *addr, st); err != nil {
		fmt.Fprintln(os.Stderr, "conformance server:", err)
		os.Exit(1)
	}
}

// sharedState is where request state is sealed and recorded as used.
type sharedState struct {
	keys, redis string
	replicas    int    // replicas that must acknowledge each use
	fastPath    bool   // the handler's fast path is on
	record      string // where to record 2026-07-28 POSTs, "" for nowhere
}

// options returns the server options for st, and a function that releases
// what they hold.
func (st sharedState) options(ctx context.Context) (mcpexpose.ServerOptions, func() error, error) {
	var o mcpexpose.ServerOptions
	var err error
	if st.keys != "" {
		if o.StateKeys, err = requeststate.LoadKeyRing(st.keys); err != nil {
			return o, nil, err
		}
	}
	if st.redis == "" {
		return o, func() error { return nil }, nil
	}
	if st.keys == "" {
		return o, nil, errors.New("-replay-redis needs -state-keys: without a shared key file no other instance can open this one's states")
	}
	store, closeRedis, err := redisreplay.Open(ctx, st.redis, &redisreplay.Options{Replicas: st.replicas})
	if err != nil {
		return o, nil, err
	}
	o.StateReplay = store
	return o, closeRedis, nil
}

func run(ctx context.Context, addr string, st sharedState) error {
	opts, release, err := st.options(ctx)
	if err != nil {
		return err
	}
	defer release()
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, err := newHandler(opts, st.fastPath)
	if err != nil {
		return err
	}
	var handler http.Handler = h
	if st.record != "" {
		f, err := os.OpenFile(st.record, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		handler = recorder(f, h)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := mcpexpose.NewHTTPServer(mux, nil)
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	stopped := make(chan error, 1)
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stopped <- srv.Shutdown(shutdown) // waits for requests in flight
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-stopped
}

// A 1×1 PNG and a tiny WAV file, as the suite's reference server sends.
var (
	png, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
	wav, _ = base64.StdEncoding.DecodeString("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=")
)

// schema2020 is the input schema the json-schema-2020-12 scenario expects to
// find published verbatim.
const schema2020 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},` +
	`"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

// Arguments of the handshake-era interaction fixtures.
type (
	SamplingIn struct {
		Prompt string `json:"prompt" jsonschema:"description=The prompt to send to the LLM"`
	}
	ElicitationIn struct {
		Message string `json:"message" jsonschema:"description=The message to show the user"`
	}
)

// Forms the interaction fixtures ask; the SEP-1034 and SEP-1330 ones, with
// defaults and titled enums, are in forms.go.
type (
	NameForm struct {
		Name string `json:"name"`
	}
	OKForm struct {
		OK bool `json:"ok"`
	}
	ColorForm struct {
		Color string `json:"color"`
	}
	UserForm struct {
		Username string `json:"username" jsonschema:"description=User's response"`
		Email    string `json:"email" jsonschema:"description=User's email address"`
	}
)

var (
	nameForm      = execution.NewForm[NameForm]("What is your name?")
	okForm        = execution.NewForm[OKForm]("Please confirm")
	stepNameForm  = execution.NewForm[NameForm]("Step 1: What is your name?")
	stepColorForm = execution.NewForm[ColorForm]("Step 2: What is your favorite color?")
	// userForm stands for test_elicitation's form, whose message is the
	// caller's argument: declaring it checks the fields at compile time.
	userForm = execution.NewForm[UserForm]("Please provide your information")

	capitalQuestion = execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "What is the capital of France?"}}, MaxTokens: 100}
	greetingRequest = execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "Generate a short greeting"}}, MaxTokens: 50}
)

// firstErr lets a handler ask several questions in one round: it returns
// the first error that is not execution.ErrInputRequired (a declined
// answer ends the call), else the first question's, else nil.
func firstErr(errs ...error) error {
	var asked error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, execution.ErrInputRequired):
			if asked == nil {
				asked = err
			}
		default:
			return err
		}
	}
	return asked
}

func describeRoots(roots []execution.Root) string {
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return fmt.Sprintf("Client exposed %d root(s): %s", len(roots), strings.Join(uris, ", "))
}

// fixture is one tool of the suite's contract.
type fixture struct {
	name        string
	description string
	fn          any
	opts        agnara.CapabilityOptions
}

func fixtures() []fixture {
	text := func(s string) []execution.Content { return []execution.Content{execution.Text{Text: s}} }
	return append([]fixture{
		{"test_simple_text", "Returns a simple text response.", func() ([]execution.Content, error) {
			return text("This is a simple text response for testing."), nil
		}, agnara.CapabilityOptions{Annotations: agnara.ReadOnly}},
		{"test_image_content", "Returns an image.", func() ([]execution.Content, error) {
			return []execution.Content{execution.Image{Data: png, MIMEType: "image/png"}}, nil
		}, agnara.CapabilityOptions{}},
		{"test_audio_content", "Returns an audio clip.", func() ([]execution.Content, error) {
			return []execution.Content{execution.Audio{Data: wav, MIMEType: "audio/wav"}}, nil
		}, agnara.CapabilityOptions{}},
		{"test_embedded_resource", "Returns an embedded resource.", func() ([]execution.Content, error) {
			return []execution.Content{execution.Resource{URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}, nil
		}, agnara.CapabilityOptions{}},
		{"test_multiple_content_types", "Returns text, an image and a resource.", func() ([]execution.Content, error) {
			return []execution.Content{
				execution.Text{Text: "Multiple content types test:"},
				execution.Image{Data: png, MIMEType: "image/png"},
				execution.Resource{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`},
			}, nil
		}, agnara.CapabilityOptions{}},
		{"test_error_handling", "Always fails, as a tool result.", func() error {
			return execution.Fail(execution.Conflict, "This tool intentionally returns an error for testing", nil)
		}, agnara.CapabilityOptions{}},
		{"test_tool_with_progress", "Reports progress three times.", func(ec *execution.Context) ([]execution.Content, error) {
			for i, p := range []float64{0, 50, 100} {
				if i > 0 {
					if err := sleep(ec, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				ec.Progress(p, 100, fmt.Sprintf("Completed step %g of 100", p))
			}
			return text("progress complete"), nil
		}, agnara.CapabilityOptions{}},
		{"test_tool_with_logging", "Logs three messages.", func(ec *execution.Context) ([]execution.Content, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					if err := sleep(ec, 50*time.Millisecond); err != nil {
						return nil, err
					}
				}
				ec.Logger().InfoContext(ec, msg)
			}
			return text("Tool with logging executed successfully"), nil
		}, agnara.CapabilityOptions{}},
		{"test_logging_tool", "Logs one message, which reaches only clients that asked for logs.", func(ec *execution.Context) ([]execution.Content, error) {
			ec.Logger().InfoContext(ec, "test_logging_tool executed")
			return text("Log attempted; the framework forwards it only at the level the client asked for."), nil
		}, agnara.CapabilityOptions{}},
		{"test_reconnection", "Outlasts the handler's PollAfter, so that at 2025-11-25 its stream ends with a retry: field before the result, which the client gets by resuming the stream.", func(ec *execution.Context) ([]execution.Content, error) {
			if err := sleep(ec, 4*pollAfter); err != nil {
				return nil, err
			}
			return text("Reconnection test completed: the result followed the resumed stream."), nil
		}, agnara.CapabilityOptions{}},
		{"test_streaming_elicitation", "Returns at once, with no request to the client on the stream.", func() ([]execution.Content, error) {
			return text("stream observed: result frames only, no top-level requests"), nil
		}, agnara.CapabilityOptions{}},
		{"test_missing_capability", "Needs the client's sampling capability; without it the call is refused with -32021.", func(ec *execution.Context) ([]execution.Content, error) {
			if !ec.CanAsk(execution.Sampling) {
				// Ask anyway: the framework answers that the client must
				// declare sampling, naming it in requiredCapabilities.
				_, err := ec.Sample("probe", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: "Say hello."}}, MaxTokens: 10})
				return nil, err
			}
			return text("Client declared the sampling capability; tool executed."), nil
		}, agnara.CapabilityOptions{}},
		// Handshake era (2025-11-25): the questions become server-to-client
		// requests on the session.
		{"test_sampling", "Asks the client's model to complete the prompt.", func(ec *execution.Context, in SamplingIn) ([]execution.Content, error) {
			r, err := ec.Sample("completion", execution.SamplingRequest{Messages: []execution.SamplingMessage{{Role: "user", Text: in.Prompt}}, MaxTokens: 100})
			if err != nil {
				return nil, err
			}
			return text("LLM response: " + r.Text), nil
		}, agnara.CapabilityOptions{}},
		{"test_elicitation", "Asks the user for a username and an email address.", func(ec *execution.Context, in ElicitationIn) ([]execution.Content, error) {
			u, err := execution.Ask(ec, "user", execution.NewForm[UserForm](in.Message))
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("User response: <action: accept, content: {username: %s, email: %s}>", u.Username, u.Email)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{userForm}}},
		{"test_elicitation_sep1034_defaults", "Asks for a name, an age, a score, a status and a verified flag.", func(ec *execution.Context) ([]execution.Content, error) {
			v, err := execution.Ask(ec, "profile", defaultsForm)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Elicitation result: action=accept, content=%+v", v)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{defaultsForm}}},
		{"test_elicitation_sep1330_enums", "Asks single- and multi-select enum questions.", func(ec *execution.Context) ([]execution.Content, error) {
			v, err := execution.Ask(ec, "choices", enumsForm)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Elicitation result: action=accept, content=%+v", v)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{enumsForm}}},
		// Stateless era (2026-07-28): the questions become input-required
		// results; the handler runs again, from the start, with the answers.
		{"test_input_required_result_elicitation", "Asks the user's name, then greets them.", func(ec *execution.Context) ([]execution.Content, error) {
			v, err := execution.Ask(ec, "user_name", nameForm)
			if err != nil {
				return nil, err
			}
			return text("Hello, " + v.Name + "!"), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{nameForm}}},
		{"test_input_required_result_sampling", "Asks the client's model for the capital of France.", func(ec *execution.Context) ([]execution.Content, error) {
			r, err := ec.Sample("capital_question", capitalQuestion)
			if err != nil {
				return nil, err
			}
			return text("Sampling response: " + r.Text), nil
		}, agnara.CapabilityOptions{}},
		{"test_input_required_result_list_roots", "Asks the client for its roots.", func(ec *execution.Context) ([]execution.Content, error) {
			roots, err := ec.Roots("client_roots")
			if err != nil {
				return nil, err
			}
			return text(describeRoots(roots)), nil
		}, agnara.CapabilityOptions{}},
		{"test_input_required_result_request_state", "Asks for a confirmation; the answer returns with sealed request state.", func(ec *execution.Context) ([]execution.Content, error) {
			v, err := execution.Ask(ec, "confirm", okForm)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("state-ok: requestState verified, ok=%t", v.OK)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{okForm}}},
		{"test_input_required_result_multiple_inputs", "Asks a form, the client's model and the client's roots in one round.", func(ec *execution.Context) ([]execution.Content, error) {
			v, errName := execution.Ask(ec, "user_name", nameForm)
			g, errGreeting := ec.Sample("greeting", greetingRequest)
			roots, errRoots := ec.Roots("client_roots")
			if err := firstErr(errName, errGreeting, errRoots); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("%s %s (%s)", g.Text, v.Name, describeRoots(roots))), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{nameForm}}},
		{"test_input_required_result_multi_round", "Asks the user's name, then, in a second round, their favorite color.", func(ec *execution.Context) ([]execution.Content, error) {
			n, err := execution.Ask(ec, "step1", stepNameForm)
			if err != nil {
				return nil, err
			}
			c, err := execution.Ask(ec, "step2", stepColorForm)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("Multi-round complete: %s likes %s", n.Name, c.Color)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{stepNameForm, stepColorForm}}},
		{"test_input_required_result_tampered_state", "Asks for a confirmation; a retry with altered request state is refused.", func(ec *execution.Context) ([]execution.Content, error) {
			v, err := execution.Ask(ec, "confirm", okForm)
			if err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("state-ok: requestState verified, ok=%t", v.OK)), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{okForm}}},
		{"test_input_required_result_capabilities", "Asks only what the client declared it can answer.", func(ec *execution.Context) ([]execution.Content, error) {
			var errs []error
			if ec.CanAsk(execution.Elicitation) {
				_, err := execution.Ask(ec, "user_name", nameForm)
				errs = append(errs, err)
			}
			if ec.CanAsk(execution.Sampling) {
				_, err := ec.Sample("greeting", greetingRequest)
				errs = append(errs, err)
			}
			if ec.CanAsk(execution.Roots) {
				_, err := ec.Roots("client_roots")
				errs = append(errs, err)
			}
			if err := firstErr(errs...); err != nil {
				return nil, err
			}
			if len(errs) == 0 {
				return text("The client declared no way to answer; nothing was asked."), nil
			}
			return text("Capability-aware input requests fulfilled"), nil
		}, agnara.CapabilityOptions{Forms: []agnara.Form{nameForm}}},
		{"json_schema_2020_12_tool", "Takes arguments described by a JSON Schema 2020-12 document.", func(raw json.RawMessage) ([]execution.Content, error) {
			return text("arguments accepted: " + string(raw)), nil
		}, agnara.CapabilityOptions{InputSchema: json.RawMessage(schema2020)}},
	}, append(headerFixtures(), taskFixtures()...)...)
}

// newHandler builds the fixture application and its MCP handler.
// The server options' Logger is also the application's.
//
// The handler is swappable: test_trigger_tool_change, the suite's hook for
// the subscriptions/listen scenarios, swaps in a snapshot with
// test_toggled_tool added (or, called again, removed), as an application
// turning a feature flag on would; test_trigger_prompt_change does the same
// with the prompt test_toggled_prompt.
func newHandler(server mcpexpose.ServerOptions, fastPath bool) (*mcpexpose.Handler, error) {
	app := agnara.New("conformance", &agnara.Options{Version: "1.0.0", Logger: server.Logger})
	fs := fixtures()
	caps := make([]*agnara.Capability, len(fs))
	for i, f := range fs {
		opts := f.opts
		opts.Name = capabilityName(f.name)
		opts.Description = f.description
		caps[i] = app.Capability(f.fn, &opts)
	}
	var (
		mu      sync.Mutex
		h       *mcpexpose.Handler
		toggled [2]bool                   // test_toggled_tool, test_toggled_prompt
		snaps   [2][2]*mcpexpose.Snapshot // by toggled
		feats   = map[string]*agnara.Capability{}
	)
	// flip turns toggle k on or off by swapping in the snapshot that has
	// (or lacks) it.
	flip := func(k int) error {
		mu.Lock()
		defer mu.Unlock()
		next := toggled
		next[k] = !next[k]
		if err := h.Swap(snaps[b2i(next[0])][b2i(next[1])]); err != nil {
			return err
		}
		toggled = next
		return nil
	}
	trigger := app.Capability(func() ([]execution.Content, error) {
		if err := flip(0); err != nil {
			return nil, err
		}
		return []execution.Content{execution.Text{Text: "tool list changed"}}, nil
	}, &agnara.CapabilityOptions{Name: "test_trigger_tool_change", Description: "Adds or removes test_toggled_tool by swapping the live snapshot."})
	toggle := app.Capability(func() ([]execution.Content, error) {
		return []execution.Content{execution.Text{Text: "toggled on"}}, nil
	}, &agnara.CapabilityOptions{Name: "test_toggled_tool", Description: "Listed while test_trigger_tool_change has turned it on."})
	promptTrigger := app.Capability(func() ([]execution.Content, error) {
		if err := flip(1); err != nil {
			return nil, err
		}
		return []execution.Content{execution.Text{Text: "prompt list changed"}}, nil
	}, &agnara.CapabilityOptions{Name: "test_trigger_prompt_change", Description: "Adds or removes test_toggled_prompt by swapping the live snapshot."})
	for i, withTool := range []bool{false, true} {
		for j, withPrompt := range []bool{false, true} {
			exp := mcpexpose.New(app)
			for k, f := range fs {
				to := taskTools[f.name] // tasks.go
				to.Name = f.name
				exp.Tool(caps[k], &to)
			}
			exp.Tool(trigger, &mcpexpose.ToolOptions{Name: "test_trigger_tool_change"})
			exp.Tool(promptTrigger, &mcpexpose.ToolOptions{Name: "test_trigger_prompt_change"})
			if withTool {
				exp.Tool(toggle, &mcpexpose.ToolOptions{Name: "test_toggled_tool"})
			}
			declareFeatures(app, exp, feats, withPrompt) // resources.go
			snap, err := exp.Compile()
			if err != nil {
				return nil, err
			}
			snaps[i][j] = snap
		}
	}
	server.ForwardLogs = true
	server.Swappable = true
	var err error
	h, err = mcpexpose.NewHandler(snaps[0][0], &mcpexpose.HandlerOptions{Server: &server, DisableFastPath: !fastPath, Limits: &mcpexpose.Limits{PollAfter: pollAfter, PollRetry: pollRetry}})
	return h, err
}

// A 2025-11-25 call still running after pollAfter has its stream ended
// with a retry: field of pollRetry (mcpexpose.Limits.PollAfter): the
// suite's server-sse-polling scenario calls test_reconnection, which
// outlasts it, and resumes the stream with Last-Event-ID for the result.
// Every other fixture answers well within it.
const (
	pollAfter = 250 * time.Millisecond
	pollRetry = 100 * time.Millisecond
)

// capabilityName is the capability behind the fixture tool name: the suite's
// longer names do not fit a capability name (at most 32 characters), so they
// are abbreviated; the tool keeps the suite's name.
func capabilityName(tool string) string {
	const maxLen = 32
	if len(tool) <= maxLen {
		return tool
	}
	return strings.NewReplacer("input_required_result", "irr", "elicitation", "elicit").Replace(tool)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
