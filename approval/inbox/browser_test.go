package inbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agnara-go/agnara/approval"
	"github.com/agnara-go/agnara/approval/inbox"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/internal/proctest"
	"github.com/agnara-go/agnara/policy"
	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// screenshots is where the browser test saves its screenshots:
// $AGNARA_SCREENSHOTS (make screenshots sets docs/images), else a
// temporary directory.
func screenshots(t *testing.T) string {
	if dir := os.Getenv("AGNARA_SCREENSHOTS"); dir != "" {
		return dir
	}
	return t.TempDir()
}

// devIssuer builds and starts examples/devissuer, the development OpenID
// Connect issuer, with the inbox as its client, and returns its URL.
func devIssuer(t *testing.T, clientID, secret string) string {
	t.Helper()
	return proctest.Start(t, proctest.Build(t, "../../examples/devissuer"), "-addr", "127.0.0.1:0", "-client-id", clientID,
		"-client-secret", secret, "-scopes", "openid "+approval.DefaultApproverScope+" notes:write")
}

// browser starts a headless Debian Chromium with its own profile (cookies
// included), for one approver.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := peers.Program(t, "chromium", "run `make engines` (apt-get install chromium)")
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1200, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser, for as long as ctx
		t.Fatalf("starting chromium: %v", err)
	}
	bounded, cancel := context.WithTimeout(ctx, 60*time.Second) // every action of the test
	t.Cleanup(cancel)
	return bounded
}

// signIn opens the inbox, is sent to the issuer's sign-in page, and signs
// in as user.
func signIn(t *testing.T, ctx context.Context, inboxURL, user string) {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err := chromedp.Do(step,
		chromedp.Navigate(inboxURL),
		chromedp.WaitVisible(chromedp.ID("user")),
		chromedp.SendKeys(chromedp.ID("user"), user),
		chromedp.Click(chromedp.ID("sign-in")),
		chromedp.WaitVisible(chromedp.ID("approver")),
	)
	if err != nil {
		t.Fatalf("signing in as %s: %v\n%s", user, err, where(ctx))
	}
}

// where describes the page the browser is on, for a failure message.
func where(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	return "at " + loc + ":\n" + html
}

// text reads the text of the element sel selects. The inbox reloads itself
// when the store changes (server-sent events), which can replace the node
// between finding it and reading it: a read that fails is tried again, for
// up to 10 s.
func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	var s string
	err := settle(func() (err error) {
		s, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		return err
	})
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// settle runs f until it succeeds, for up to 10 s, and returns its last
// error: for browser steps a page reload can interrupt.
func settle(f func() error) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestInboxInARealBrowser is the inbox's floor: a write through the
// gateway waits; an approver signs in through the development issuer in
// Chromium, sees it, opens it and approves it; the waiting call then
// completes once; a second approver's session sees it decided; a forged
// cross-site POST is refused. (TestInboxPagesFitTheScreen takes the
// screenshots.)
func TestInboxInARealBrowser(t *testing.T) {
	nodeBin := peers.Node(t)
	memory := peers.NPM(t, "@modelcontextprotocol/server-memory/dist/index.js")
	notes := filepath.Join(t.TempDir(), "notes.jsonl")
	s := store(t)

	// The gateway: bob, its development caller, asks for a write. Its
	// definition is accepted first, as `agnara gateway accept` does.
	cfg := gateway.Config{
		Auth: gateway.Auth{Development: &gateway.Development{Principal: "bob", Scopes: []string{"notes:write"}}},
		Lock: filepath.Join(t.TempDir(), "gateway.lock"),
		Upstreams: []gateway.Upstream{{
			Name: "notes", Prefix: "notes_",
			Stdio: &gateway.StdioUpstream{Command: nodeBin, Args: []string{memory}, Env: map[string]string{"MEMORY_FILE_PATH": notes}},
			Tools: []gateway.Tool{{Remote: "create_entities", Name: "notes_create", Title: "Create notes", Write: "write", Scopes: []string{"notes:write"}, Profile: "standard"}},
		}},
	}
	startCtx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	review, err := gateway.Inspect(startCtx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := review.Accept()
	if err == nil {
		err = lock.WriteFile(cfg.Lock)
	}
	if err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(cfg, &gateway.Options{Approvals: s})
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Start(startCtx); err != nil {
		t.Fatal(err)
	}
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(func() { gwSrv.Close(); gw.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(startCtx, &mcp.StreamableClientTransport{Endpoint: gwSrv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	create := func(name string) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(startCtx, &mcp.CallToolParams{Name: "gateway.notes_create", Arguments: map[string]any{
			"entities": []map[string]any{{"name": name, "entityType": "person", "observations": []string{"<b>wrote</b> the first program"}}}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError
	}
	approvalID := func(text string) string {
		var f struct {
			Reason  string
			Details struct {
				ApprovalID string `json:"approval_id"`
			}
		}
		json.Unmarshal([]byte(text), &f)
		if f.Reason != string(approval.ReasonPending) || f.Details.ApprovalID == "" {
			t.Fatalf("the write did not wait for an approval: %s", text)
		}
		return f.Details.ApprovalID
	}
	text0, _ := create("Ada Lovelace")
	id := approvalID(text0)

	// The inbox, signing approvers in through the development issuer.
	const clientID, secret = "agnara-inbox", "inbox-secret"
	issuer := devIssuer(t, clientID, secret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inboxURL := "http://" + ln.Addr().String()
	h, err := inbox.New(startCtx, s, inbox.Options{OIDC: &inbox.OIDC{Issuer: issuer, ClientID: clientID, ClientSecret: secret, RedirectURL: inboxURL + "/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	alice := browser(t)
	signIn(t, alice, inboxURL+"/", "alice")
	if got := text(t, alice, "#approver"); got != "alice" {
		t.Errorf("signed in as %q", got)
	}
	link := fmt.Sprintf(`a.approval-link[data-id=%q]`, id)
	if got := text(t, alice, link); !strings.Contains(got, "Create notes") {
		t.Errorf("the inbox lists %q", got)
	}

	// Open it with the keyboard: the link takes focus and Enter follows it.
	if err := settle(func() error {
		ctx, cancel := context.WithTimeout(alice, 3*time.Second)
		defer cancel()
		return chromedp.Do(ctx,
			chromedp.Focus(chromedp.CSS(link)),
			chromedp.KeyEvent("\r"),
			chromedp.WaitVisible(chromedp.ID("arguments")),
		)
	}); err != nil {
		t.Fatal(err)
	}
	args := text(t, alice, "#arguments")
	if !strings.Contains(args, `"name": "Ada Lovelace"`) || !strings.Contains(args, `"<b>wrote</b> the first program"`) {
		t.Errorf("the approval shows the arguments %q", args)
	}
	if got := text(t, alice, "#requester"); !strings.HasPrefix(got, "bob") {
		t.Errorf("requester %q", got)
	}
	// The gateway recorded what the tool does and which upstream it is on.
	if got := text(t, alice, "#server"); got != "notes" {
		t.Errorf("the approval names the server %q, want the upstream notes", got)
	}
	if got := text(t, alice, "#description"); !strings.Contains(strings.ToLower(got), "entities") {
		t.Errorf("the approval describes the tool as %q, want the memory server's description", got)
	}

	// At 200% zoom (a 600 CSS px wide window) and on a phone, nothing
	// needs scrolling sideways.
	for _, w := range []int64{600, 360} {
		if err := chromedp.Do(alice, chromedp.EmulateViewport(w, 800, chromedp.EmulateScale(2))); err != nil {
			t.Fatal(err)
		}
		overflow, err := chromedp.Run(alice, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if overflow {
			t.Errorf("the approval page scrolls sideways at %d CSS px", w)
		}
	}
	if err := chromedp.Do(alice, chromedp.EmulateReset()); err != nil {
		t.Fatal(err)
	}

	if err := chromedp.Do(alice,
		chromedp.SendKeys(chromedp.ID("note"), "Checked with Ada."),
		chromedp.Click(chromedp.ID("approve")),
		chromedp.WaitVisible(chromedp.ID("flash")),
	); err != nil {
		t.Fatal(err)
	}
	if got := text(t, alice, "#state"); got != "approved" {
		t.Errorf("after approving, state %q", got)
	}

	// The waiting call now completes, once.
	first, isErr := create("Ada Lovelace")
	if isErr || !strings.Contains(first, "Ada Lovelace") {
		t.Fatalf("the approved call: %s", first)
	}
	written, err := os.Stat(notes)
	if err != nil {
		t.Fatalf("the memory server stored nothing: %v", err)
	}
	if again, _ := create("Ada Lovelace"); again != first {
		t.Errorf("the repeat returned %s, want the receipt %s", again, first)
	}
	if now, _ := os.Stat(notes); !now.ModTime().Equal(written.ModTime()) {
		t.Error("the repeat reached the memory server again")
	}

	// Another approver, in another browser profile, sees it decided.
	dave := browser(t)
	signIn(t, dave, inboxURL+"/approvals/"+id, "dave")
	if err := chromedp.Do(dave, chromedp.Navigate(inboxURL+"/approvals/"+id), chromedp.WaitVisible(chromedp.ID("state"))); err != nil {
		t.Fatal(err)
	}
	if got := text(t, dave, "#state"); got != "completed" {
		t.Errorf("dave sees the state %q", got)
	}
	if got := text(t, dave, "#decided-by"); !strings.HasPrefix(got, "alice") {
		t.Errorf("dave sees it decided by %q", got)
	}
	buttons, err := chromedp.Run(dave, chromedp.Evaluate[int](`document.querySelectorAll("#approve, #reject").length`))
	if err != nil || buttons != 0 {
		t.Errorf("a decided approval still offers decisions (%d, %v)", buttons, err)
	}

	// A forged POST from another origin, in the signed-in browser, is
	// refused and changes nothing.
	text1, _ := create("Grace Hopper")
	second := approvalID(text1)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/approvals/%s/decide"><input name="action" value="reject"><input name="csrf" value="guess"></form><script>document.getElementById("f").submit()</script>`, inboxURL, second)
	}))
	defer evil.Close()
	if err := chromedp.Do(alice, chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.ID("error"))); err != nil {
		t.Fatal(err)
	}
	body := text(t, alice, "#error")
	if !strings.Contains(body, "another site") {
		t.Errorf("the forged POST was answered %q", body)
	}
	if a, _ := s.Get(context.Background(), second); a.State != approval.StatePending {
		t.Errorf("the forged POST changed the approval: %s", a.State)
	}
}

// TestSignInNeedsTheApproverScope walks the sign-in with an HTTP client
// (cookies kept, redirects followed by hand): a user whose token lacks the
// approver scope is refused at the callback, and no session is made; one
// with it is signed in.
func TestSignInNeedsTheApproverScope(t *testing.T) {
	const clientID, secret = "agnara-inbox", "inbox-secret"
	issuer := devIssuer(t, clientID, secret)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	inboxURL := "http://" + ln.Addr().String()
	h, err := inbox.New(context.Background(), store(t), inbox.Options{OIDC: &inbox.OIDC{Issuer: issuer, ClientID: clientID, ClientSecret: secret, RedirectURL: inboxURL + "/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	for _, tc := range []struct {
		user, scopes string
		status       int
		want         string
	}{
		{"mallory", "", http.StatusForbidden, "does not hold the approver scope"},
		{"alice", approval.DefaultApproverScope, http.StatusOK, `id="approver">alice`},
	} {
		c := visitor(t)
		status, hdr, _ := get(t, c, inboxURL+"/")
		if status != http.StatusSeeOther || hdr.Get("Location") != "/login?next=/" {
			t.Fatalf("signed out: %d %v", status, hdr)
		}
		_, hdr, _ = get(t, c, inboxURL+"/login?next=/")
		authorize := hdr.Get("Location")
		if !strings.HasPrefix(authorize, issuer+"/authorize?") || !strings.Contains(authorize, "code_challenge_method=S256") || !strings.Contains(authorize, "nonce=") {
			t.Fatalf("login redirects to %q", authorize)
		}
		_, _, page := get(t, c, authorize)
		request := regexp.MustCompile(`name="request" value="([^"]+)"`).FindStringSubmatch(page)
		if request == nil {
			t.Fatalf("no sign-in form:\n%s", page)
		}
		_, hdr, _ = post(t, c, issuer+"/authorize", url.Values{"request": {request[1]}, "user": {tc.user}, "scopes": {tc.scopes}, "action": {"sign-in"}}, nil)
		callback := hdr.Get("Location")
		if !strings.HasPrefix(callback, inboxURL+"/callback?") {
			t.Fatalf("the issuer redirects to %q", callback)
		}
		status, hdr, body := get(t, c, callback)
		if tc.status == http.StatusOK {
			if status != http.StatusSeeOther || hdr.Get("Location") != "/" {
				t.Fatalf("%s: callback %d %v\n%s", tc.user, status, hdr, body)
			}
			status, _, body = get(t, c, inboxURL+"/")
		}
		if status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d, want %d with %q:\n%s", tc.user, status, tc.status, tc.want, body)
		}
		if tc.status != http.StatusOK {
			if status, _, _ := get(t, c, inboxURL+"/"); status != http.StatusSeeOther {
				t.Errorf("%s: after the refusal the inbox answers %d, want a redirect to sign in", tc.user, status)
			}
			// The callback cannot be replayed.
			if status, _, _ := get(t, c, callback); status != http.StatusBadRequest {
				t.Errorf("%s: a replayed callback answers %d, want 400", tc.user, status)
			}
		}
	}
}

// TestInboxRowsTellCallsApartInABrowser: three writes of one tool for
// three people, alike but for entities[0].name, read differently in the
// list as Chromium renders it, each by its own name; a committed write's
// result, JSON inside an MCP text block, reads indented on its page.
func TestInboxRowsTellCallsApartInABrowser(t *testing.T) {
	s := store(t)
	people := map[string]string{} // approval id → the name it is for
	for _, name := range []string{"Ada Lovelace", "Grace Hopper", "Linus Torvalds"} {
		a := prepareTool(t, s, "bob", "Create notes", `{"entities":[{"entityType":"person","name":"`+name+`","observations":["wrote programs"]}]}`)
		people[a.ID] = name
	}
	ctx := context.Background()
	done := prepareTool(t, s, "carol", "Create a note", `{"entities":[{"entityType":"person","name":"Barbara Liskov","observations":[]}]}`)
	if _, err := s.Approve(ctx, done.ID, policy.NewPrincipal("dave", []string{approval.DefaultApproverScope}), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, done.ID, done.Intent.Binding); err != nil {
		t.Fatal(err)
	}
	created, _ := json.Marshal(`[{"name":"Barbara Liskov","entityType":"person","observations":[]}]`)
	if _, err := s.Complete(ctx, done.ID, approval.Receipt{Effect: approval.EffectCommitted,
		Result: json.RawMessage(`{"content":[{"type":"text","text":` + string(created) + `}]}`)}); err != nil {
		t.Fatal(err)
	}
	_, base := serveInbox(t, s, inbox.Options{DevApprover: "alice"})
	alice := browser(t)

	var cards [][]string
	if err := settle(func() (err error) {
		if err := chromedp.Do(alice, chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.ID("pending"))); err != nil {
			return err
		}
		cards, err = chromedp.Run(alice, chromedp.Evaluate[[][]string](`[...document.querySelectorAll("#pending .card")].map(c => [c.querySelector(".approval-link").dataset.id, c.querySelector(".args").innerText])`))
		return err
	}); err != nil {
		t.Fatalf("reading the list: %v\n%s", err, where(alice))
	}
	if len(cards) != len(people) {
		t.Fatalf("the list shows %d pending writes, want %d: %q", len(cards), len(people), cards)
	}
	seen := map[string]bool{}
	for _, c := range cards {
		id, preview := c[0], c[1]
		if want := `entities[0].name="` + people[id] + `"`; preview != want {
			t.Errorf("the row of %s reads %q, want %q", people[id], preview, want)
		}
		if seen[preview] {
			t.Errorf("two rows read %q", preview)
		}
		seen[preview] = true
	}

	var result string
	if err := settle(func() (err error) {
		if err := chromedp.Do(alice, chromedp.Navigate(base+"/approvals/"+done.ID), chromedp.WaitVisible(chromedp.ID("result"))); err != nil {
			return err
		}
		result, err = chromedp.Run(alice, chromedp.Text(chromedp.ID("result")))
		return err
	}); err != nil {
		t.Fatalf("reading the result: %v\n%s", err, where(alice))
	}
	if !strings.Contains(result, "Text, JSON indented") || !strings.Contains(result, "    \"name\": \"Barbara Liskov\",\n") || strings.Contains(result, `\"`) {
		t.Errorf("the result reads %q, want its text block's JSON indented, without escapes", result)
	}
}
