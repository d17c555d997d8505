package gateway_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agnara-go/agnara/agnara"
	"github.com/agnara-go/agnara/gateway"
	"github.com/agnara-go/agnara/internal/peers"
	"github.com/agnara-go/agnara/mcpexpose"
	"github.com/chromedp/chromedp"
)

// The MCP Apps browser test (issue 41, "seen in a browser"): a headless
// Chromium renders an upstream tool's UI through the gateway the way a
// chat client does, with the MCP Apps SDK's host side from npm
// (@modelcontextprotocol/ext-apps, conformance/package-lock.json), and the
// app calls a second tool through the host and the gateway. The browser
// code is in testdata/apps, bundled with esbuild into a temporary
// directory on each run.

// appsBundle bundles the browser module testdata/apps/<name>.mjs and its
// npm imports into one minified ES module in a temporary directory, and
// returns it.
func appsBundle(t *testing.T, name string) string {
	t.Helper()
	esbuild := peers.NPM(t, "esbuild/bin/esbuild")
	peers.NPM(t, "@modelcontextprotocol/ext-apps/package.json")
	modules := filepath.Dir(filepath.Dir(filepath.Dir(esbuild)))
	out := filepath.Join(t.TempDir(), name+".js")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, esbuild, filepath.Join("testdata", "apps", name+".mjs"),
		"--bundle", "--minify", "--format=esm", "--target=es2022", "--platform=browser",
		"--log-level=warning", "--outfile="+out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules) // the imports resolve in conformance/node_modules
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild %s: %v\n%s", name, err, output)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// appsFile reads testdata/apps/<name>.
func appsFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "apps", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// appsOrder is an order of the test shop.
type appsOrder struct {
	ID    string `json:"id"`
	Item  string `json:"item"`
	Total string `json:"total"`
}

type appsOrders struct {
	Orders []appsOrder `json:"orders"`
}

type appsCustomerIn struct {
	ID string `json:"id" jsonschema_description:"The order's id."`
}

type appsCustomer struct {
	Name string `json:"name"`
	City string `json:"city"`
}

// appsShop is the test's upstream: a shop whose list_orders tool has a UI
// (ui://shop/orders.html) and whose customer tool the UI calls. It records
// the tools called.
type appsShop struct {
	mu    sync.Mutex
	calls []string
}

func (s *appsShop) called(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
}

func (s *appsShop) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// appsShopServer serves the shop, an agnara-go server, on a loopback port
// until the test ends, and returns its MCP URL. Its list_orders tool
// declares its view (ToolOptions.UI): html, with the CSP csp.
func appsShopServer(t *testing.T, shop *appsShop, html string, csp mcpexpose.UICSP) string {
	t.Helper()
	app := agnara.New("shop", nil)
	list := app.Capability(func(context.Context) (appsOrders, error) {
		shop.called("list_orders")
		return appsOrders{Orders: []appsOrder{
			{ID: "A-1001", Item: "3 × espresso beans, 1 kg", Total: "€ 54.00"},
			{ID: "A-1002", Item: "Grinder, conical burr", Total: "€ 129.00"},
			{ID: "A-1003", Item: "2 × milk jug", Total: "€ 23.80"},
		}}, nil
	}, &agnara.CapabilityOptions{Name: "list_orders", Description: "List the open orders."})
	customer := app.Capability(func(_ context.Context, in appsCustomerIn) (appsCustomer, error) {
		shop.called("customer")
		if in.ID != "A-1002" {
			return appsCustomer{}, fmt.Errorf("no order %s", in.ID)
		}
		return appsCustomer{Name: "Jana Nováková", City: "Brno"}, nil
	}, &agnara.CapabilityOptions{Name: "customer", Description: "The customer of an order."})
	exp := mcpexpose.New(app)
	exp.Tool(list, &mcpexpose.ToolOptions{UI: &mcpexpose.UI{URI: "ui://shop/orders.html", HTML: html, CSP: csp, PrefersBorder: true}})
	exp.Tool(customer, nil)
	snap, err := exp.Compile()
	if err != nil {
		t.Fatal(err)
	}
	h, err := mcpexpose.NewHandler(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// appsProbe is a loopback server the view tries to reach: it counts the
// requests that arrive and lets any origin read its answer.
func appsProbe(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "12 in stock")
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}

// appsCSPSource is what a CSP source list may hold from a view's
// metadata: an origin, no quote, space or separator that could add a
// source or a directive.
var appsCSPSource = regexp.MustCompile(`^https?://[A-Za-z0-9.*-]+(:[0-9]+)?$`)

// appsCSP is the Content-Security-Policy a host applies to a view with
// metadata csp (_meta.ui.csp), after the MCP Apps SDK's reference host:
// the view's own inline code, and the network only to the origins csp
// lists.
func appsCSP(csp map[string][]string) string {
	list := func(key string) string {
		var out []string
		for _, s := range csp[key] {
			if appsCSPSource.MatchString(s) {
				out = append(out, s)
			}
		}
		return strings.Join(out, " ")
	}
	res, connect, frame, base := list("resourceDomains"), list("connectDomains"), list("frameDomains"), list("baseUriDomains")
	or := func(s, none string) string {
		if s == "" {
			return none
		}
		return s
	}
	return strings.Join([]string{
		"default-src 'self' 'unsafe-inline'",
		strings.TrimSpace("script-src 'self' 'unsafe-inline' blob: data: " + res),
		strings.TrimSpace("style-src 'self' 'unsafe-inline' blob: data: " + res),
		strings.TrimSpace("img-src 'self' data: blob: " + res),
		strings.TrimSpace("font-src 'self' data: blob: " + res),
		strings.TrimSpace("connect-src 'self' " + connect),
		"frame-src " + or(frame, "'none'"),
		"object-src 'none'",
		"base-uri " + or(base, "'none'"),
	}, "; ")
}

// appsSandbox serves the host's sandbox proxy (testdata/apps/sandbox.html)
// on an origin of its own, with the view's CSP (the csp query parameter,
// the resource's _meta.ui.csp) as its Content-Security-Policy header.
func appsSandbox(t *testing.T) string {
	t.Helper()
	page := appsFile(t, "sandbox.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sandbox.html" {
			http.NotFound(w, r)
			return
		}
		var csp map[string][]string
		if err := json.Unmarshal([]byte(r.URL.Query().Get("csp")), &csp); err != nil {
			http.Error(w, "csp: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Security-Policy", appsCSP(csp))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/sandbox.html"
}

// appsHost serves the host page and its bundled code, and passes /mcp on
// to mcpURL as it came, Host header included: to the page's MCP client,
// and to the gateway's origin check, the gateway is served at the page's
// own origin, as where a host mounts it.
func appsHost(t *testing.T, page, code, mcpURL string) string {
	t.Helper()
	target, err := url.Parse(mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	})
	mux.HandleFunc("GET /host.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		fmt.Fprint(w, code)
	})
	mux.Handle("/mcp", &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host, r.Out.URL.Path = target.Scheme, target.Host, target.Path
		},
		FlushInterval: -1, // server-sent events pass as they come
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

// appsView is the shop's view: testdata/apps/view.html with the bundled
// view.mjs inlined and the probes' URLs.
func appsView(t *testing.T, api, tracker string) string {
	t.Helper()
	code := strings.ReplaceAll(appsBundle(t, "view"), "</script", `<\/script`)
	return strings.NewReplacer("{{api}}", api, "{{tracker}}", tracker, "{{script}}", code).Replace(appsFile(t, "view.html"))
}

// appsShot saves a screenshot of the page as name.png in $AGNARA_SCREENSHOTS
// (make screenshots sets docs/images), else in a temporary directory.
func appsShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := os.Getenv("AGNARA_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// appsText is the text of the element that selector finds in the view,
// the document inside the sandbox proxy's iframe inside the host's.
func appsText(ctx context.Context, selector string) (string, error) {
	view, err := appsViewNode(ctx)
	if err != nil {
		return "", err
	}
	return chromedp.Run(ctx, chromedp.Text(chromedp.CSS(selector), chromedp.FromNode(view)))
}

// appsViewNode finds the view's iframe, inside the sandbox proxy's.
func appsViewNode(ctx context.Context) (*chromedp.Node, error) {
	outer, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("#app")))
	if err != nil {
		return nil, err
	}
	inner, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS("iframe"), chromedp.FromNode(outer[0])))
	if err != nil {
		return nil, err
	}
	return inner[0], nil
}

// appsWait polls the text of selector in the view until want matches it.
func appsWait(t *testing.T, ctx context.Context, selector string, want *regexp.Regexp) string {
	t.Helper()
	step, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var text string
	var err error
	for {
		if text, err = appsText(step, selector); err == nil && want.MatchString(text) {
			return text
		}
		select {
		case <-step.Done():
			t.Fatalf("the view's %s shows %q (%v), want %s", selector, text, err, want)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// appsConsole collects what the pages in ctx's tab write to the console
// from now on, warnings, errors and exceptions; the func it returns gives
// them, one a line, for a failure's message.
func appsConsole(ctx context.Context) func() string {
	var mu sync.Mutex
	var lines []string
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleWarning || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				mu.Lock()
				lines = append(lines, fmt.Sprintf("%s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, "\n")
	}
}

// hostText is the text of the element that selector finds in the host's
// page.
func hostText(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("host %s: %v", selector, err)
	}
	return text
}

// appsCase is a case of TestAppsSeenInChromium.
type appsCase struct {
	name     string
	direct   bool     // the host connects to the shop itself, not the gateway
	scopes   []string // the caller's, at the gateway
	customer string   // what the view shows after the click (a regular expression)
	logged   string   // what the host's log ends with (a regular expression)
	calls    []string // what the shop sees
	shot     string   // the screenshot's name, if any
}

// appsWorld is what every case of TestAppsSeenInChromium shares: the
// probes, the view, the sandbox proxy and the host's page and code.
type appsWorld struct {
	api, tracker         string
	apiHits, trackerHits *atomic.Int64
	html                 string
	csp                  mcpexpose.UICSP
	sandbox              string
	page, code           string
}

// TestAppsSeenInChromium renders the shop's list_orders UI, imported
// through the gateway, in Chromium with the MCP Apps SDK's host side, and
// lets a person click for a customer: the view calls the customer tool
// through the host and the gateway with the caller's credentials. A
// caller with the customers:read scope sees the customer; one without it
// sees the gateway's refusal, and the shop never sees that call. The same
// view served by the shop itself, without the gateway, is the baseline
// the host is checked against. Every time, the view reaches the stock API
// its CSP lists, and not the tracker it does not list.
func TestAppsSeenInChromium(t *testing.T) {
	w := &appsWorld{sandbox: appsSandbox(t), page: appsFile(t, "host.html"), code: appsBundle(t, "host")}
	w.api, w.apiHits = appsProbe(t)
	w.tracker, w.trackerHits = appsProbe(t)
	w.html = appsView(t, w.api, w.tracker)
	w.csp = mcpexpose.UICSP{ConnectDomains: []string{w.api}}
	for _, tc := range []appsCase{
		{"direct", true, nil, `^Jana Nováková, Brno$`,
			`the app calls shop\.customer \{"id":"A-1002"\}\s+shop\.customer answered: .*Jana Nováková.*$`,
			[]string{"list_orders", "customer"}, ""},
		{"allowed", false, []string{"orders:read", "customers:read"}, `^Jana Nováková, Brno$`,
			`the app calls gateway\.shop_customer \{"id":"A-1002"\}\s+gateway\.shop_customer answered: .*Jana Nováková.*$`,
			[]string{"list_orders", "customer"}, "apps-allowed"},
		{"refused", false, []string{"orders:read"}, `^Refused: .*customers:read`,
			`the app calls gateway\.shop_customer \{"id":"A-1002"\}\s+gateway\.shop_customer (failed|refused): .*customers:read.*$`,
			[]string{"list_orders"}, "apps-refused"},
	} {
		// The first era's run takes the screenshot.
		protocols := []string{"2026-07-28", "2025-11-25"}
		for i, protocol := range protocols {
			t.Run(tc.name+"/"+protocol, func(t *testing.T) { w.session(t, tc, protocol, i == 0) })
		}
	}
}

// session runs one case of TestAppsSeenInChromium at one protocol
// revision, with a shop, a gateway and a browser of its own.
func (w *appsWorld) session(t *testing.T, tc appsCase, protocol string, shot bool) {
	shop := &appsShop{}
	upstream := appsShopServer(t, shop, w.html, w.csp)
	endpoint, tool := upstream, "shop.list_orders"
	var log fmt.Stringer = &strings.Builder{}
	if !tc.direct {
		cfg := gateway.Config{
			Auth: gateway.Auth{Development: &gateway.Development{Principal: "alice", Scopes: tc.scopes}},
			Upstreams: []gateway.Upstream{{Name: "shop", Prefix: "shop_", HTTP: &gateway.HTTPUpstream{URL: upstream},
				Tools: []gateway.Tool{
					{Remote: "shop.list_orders", Name: "shop_list_orders", Title: "Open orders", Scopes: []string{"orders:read"}, ConcurrencySafe: true},
					{Remote: "shop.customer", Name: "shop_customer", Title: "An order's customer", Scopes: []string{"customers:read"}, ConcurrencySafe: true},
				}}},
		}
		_, endpoint, log = started(t, cfg, nil)
		tool = "gateway.shop_list_orders"
	}
	host := appsHost(t, w.page, w.code, endpoint)
	params, err := json.Marshal(map[string]any{"tool": tool, "arguments": map[string]any{}, "sandbox": w.sandbox, "protocol": protocol})
	if err != nil {
		t.Fatal(err)
	}

	ctx := chromium(t)
	console := appsConsole(ctx)
	apiBefore, trackerBefore := w.apiHits.Load(), w.trackerHits.Load()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 760), chromedp.Navigate(host+"#"+url.PathEscape(string(params)))); err != nil {
		t.Fatal(err)
	}
	// The host shows each step it takes, then "ready" or "failed: …".
	status := ""
	for deadline := time.Now().Add(45 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if status = hostText(t, ctx, "#status"); status == "ready" || strings.HasPrefix(status, "failed") {
			break
		}
	}
	if status != "ready" {
		t.Fatalf("the host says %q\nconsole:\n%s\ngateway:\n%s", status, console(), log)
	}
	if got := hostText(t, ctx, "#protocol"); got != "MCP "+protocol {
		t.Errorf("the host negotiated %q, want MCP %s", got, protocol)
	}
	// The shop's view URI as the host reads it: the shop's own, or the
	// gateway's, under the upstream's name.
	wantURI := "ui://shop/orders.html"
	if !tc.direct {
		wantURI = "ui://shop/shop/orders.html"
	}
	if uri := hostText(t, ctx, "#uri"); uri != wantURI {
		t.Errorf("the host read the view at %s, want %s", uri, wantURI)
	}
	// The page the host rendered is the shop's, byte for byte.
	if sum, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("view").dataset.sha256`)); err != nil || sum != fmt.Sprintf("%x", sha256.Sum256([]byte(w.html))) {
		t.Errorf("the host rendered a page with SHA-256 %q (%v), not the shop's", sum, err)
	}
	appsWait(t, ctx, "#count", regexp.MustCompile(`^3 open orders$`))
	if rows := appsWait(t, ctx, "#orders", regexp.MustCompile(`A-1002`)); !strings.Contains(rows, "Grinder, conical burr") {
		t.Errorf("the view's orders: %q", rows)
	}
	appsWait(t, ctx, "#api", regexp.MustCompile(`^reached \(200\)$`))
	appsWait(t, ctx, "#tracker", regexp.MustCompile(`^blocked$`))
	appsWait(t, ctx, "#violations", regexp.MustCompile(`refused `+regexp.QuoteMeta(w.tracker)+`, connect-src`))

	view, err := appsViewNode(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#customer-A-1002"), chromedp.FromNode(view))); err != nil {
		t.Fatal(err)
	}
	appsWait(t, ctx, "#customer", regexp.MustCompile(tc.customer))
	if shot && tc.shot != "" {
		appsShot(t, ctx, tc.shot)
	}

	if hostLog := hostText(t, ctx, "#log"); !regexp.MustCompile(tc.logged).MatchString(hostLog) {
		t.Errorf("the host's log:\n%s\nwant it to end with %s", hostLog, tc.logged)
	}
	if got := shop.seen(); !slices.Equal(got, tc.calls) {
		t.Errorf("the shop saw %v, want %v", got, tc.calls)
	}
	if n := w.apiHits.Load() - apiBefore; n != 1 {
		t.Errorf("the stock API saw %d requests, want 1", n)
	}
	if n := w.trackerHits.Load() - trackerBefore; n != 0 {
		t.Errorf("the tracker saw %d requests, want none: the host's CSP did not hold", n)
	}
}
